// The neuron view's numbers from a Trace's captured q and k (neuron.h). The logits follow
// ScoreSpec's definition term by term, in double precision, so each term can be shown.
#include "attnscope/analysis/neuron.h"

#include "attention/trace_impl.h"
#include "attnscope/runtime/error.h"
#include "runtime/torch_errors.h"

#include <cmath>
#include <limits>

namespace attnscope {

namespace {

void checkIndex(const char* what, int value, int count) {
    if (value < 0 || value >= count)
        throw Error(std::string("neuron view: ") + what + " " + std::to_string(value) + " is out of range (0.." +
                    std::to_string(count - 1) + ")");
}

std::vector<double> toDoubles(const at::Tensor& t) {
    const at::Tensor c = t.to(at::kCPU, at::kDouble).contiguous();
    return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

}  // namespace

NeuronRow neuronRow(const Trace& trace, int block, int layer, int head, int query, double temperature) {
    const Trace::Impl& impl = trace.impl();
    checkIndex("block", block, static_cast<int>(impl.blocks.size()));
    const BlockInfo& info = impl.infos[block];
    checkIndex("layer", layer, info.layers);
    checkIndex("head", head, info.heads);
    if (!(temperature > 0) || !std::isfinite(temperature))
        throw Error("temperature must be a finite number > 0, got " + std::to_string(temperature));
    const LayerCapture& cap = impl.blocks[block].layers[layer];
    if (cap.kind != AttentionKind::Dot)
        throw Error(std::string("neuron view: layer ") + std::to_string(layer) + " of block '" + info.name + "' uses " +
                    kindName(cap.kind) + " attention, which has no q·k logits to take apart");
    const int n = static_cast<int>(cap.q.size(1));
    const int m = static_cast<int>(cap.k.size(1));
    checkIndex("query", query, n);

    NeuronRow row;
    row.block = block;
    row.layer = layer;
    row.head = head;
    row.query = query;
    row.kvGroup = info.kvGroup(head);
    row.dim = static_cast<int>(cap.q.size(2));
    row.keys = m;
    row.scale = cap.score.scale;
    row.softcap = cap.score.softcap;
    row.temperature = temperature * cap.temperature;
    row.extras = cap.score.extras();

    translateTorchErrors("taking a head's scores apart", [&] {
        const at::Tensor q = cap.q[head][query].to(at::kCPU, at::kFloat).contiguous();  // [d]
        const at::Tensor k = cap.k[row.kvGroup].to(at::kCPU, at::kFloat).contiguous();  // [m, d]
        const at::Tensor prod = (k * q.unsqueeze(0)).contiguous();                      // [m, d]
        row.queryVector.assign(q.data_ptr<float>(), q.data_ptr<float>() + q.numel());
        row.keyVectors.assign(k.data_ptr<float>(), k.data_ptr<float>() + k.numel());
        row.products.assign(prod.data_ptr<float>(), prod.data_ptr<float>() + prod.numel());
        if (cap.score.bias.defined()) {
            row.extra = toDoubles(cap.score.bias[head][query]);  // [m], added after the cap
        } else {
            row.extra.assign(static_cast<std::size_t>(m), 0.0);
        }
        std::vector<bool> allowed(static_cast<std::size_t>(m), true);
        if (cap.mask.keyAllowed.defined()) {
            const at::Tensor a = cap.mask.keyAllowed.to(at::kCPU, at::kBool).contiguous();
            for (int j = 0; j < m; ++j) allowed[j] = a.data_ptr<bool>()[j];
        }
        row.allowed = std::move(allowed);
        return 0;
    });

    const std::int64_t offset = static_cast<std::int64_t>(m) - n;  // keys before the first query (cached)
    const double slope = cap.score.alibiSlopes.empty() ? 0.0 : cap.score.alibiSlopes.at(static_cast<std::size_t>(head));
    row.dot.resize(m);
    row.scaled.resize(m);
    row.logits.resize(m);
    row.weights.assign(static_cast<std::size_t>(m), 0.0);
    double top = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < m; ++j) {
        double dot = 0;
        for (int d = 0; d < row.dim; ++d)
            dot += static_cast<double>(row.queryVector[d]) * row.keyVectors[static_cast<std::size_t>(j) * row.dim + d];
        row.dot[j] = dot;
        row.scaled[j] = row.scale * dot;
        const double capped = row.softcap > 0 ? row.softcap * std::tanh(row.scaled[j] / row.softcap) : row.scaled[j];
        row.logits[j] = capped + slope * j + row.extra[j];
        row.extra[j] = row.logits[j] - row.scaled[j];
        if (cap.mask.causal && j > query + offset) row.allowed[j] = false;
        if (cap.mask.window > 0 && j <= query + offset - cap.mask.window) row.allowed[j] = false;
        if (row.allowed[j]) top = std::max(top, row.logits[j] / row.temperature);
    }
    double total = 0;
    for (int j = 0; j < m; ++j)
        if (row.allowed[j]) total += row.weights[j] = std::exp(row.logits[j] / row.temperature - top);
    if (total > 0)
        for (double& w : row.weights) w /= total;
    return row;
}

}  // namespace attnscope
