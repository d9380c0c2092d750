#include "attnscope/analysis/value_norm.h"

#include "layer_alpha.h"
#include "attention/blocked_attention.h"
#include "attention/trace_impl.h"
#include "attnscope/runtime/error.h"
#include "runtime/torch_errors.h"

#include <algorithm>

namespace attnscope {

namespace {

const LayerCapture& valueLayer(const Trace& trace, int block, int layer, const char* what) {
    const auto& infos = trace.blocks();
    if (block < 0 || block >= static_cast<int>(infos.size()))
        throw Error(std::string(what) + ": block " + std::to_string(block) + " is out of range");
    if (layer < 0 || layer >= infos[block].layers)
        throw Error(std::string(what) + ": layer " + std::to_string(layer) + " is out of range (0.." +
                    std::to_string(infos[block].layers - 1) + ")");
    if (!hasValues(trace, block))
        throw Error(std::string(what) + ": the '" + infos[block].name +
                    "' attention block recorded no value vectors (run with RunOptions::captureValues)");
    return trace.impl().blocks[block].layers[layer];
}

bool masked(const LayerCapture& cap, int head) {
    return std::find(cap.maskedHeads.begin(), cap.maskedHeads.end(), head) != cap.maskedHeads.end();
}

// f_h(x̃_j) for keys [start, start + len) of every head: [heads, len, width] float64.
at::Tensor headOutputs(const LayerCapture& cap, const BlockInfo& info, std::int64_t start, std::int64_t len) {
    const std::int64_t H = info.heads, d = cap.values.size(2);
    const at::Tensor wo = cap.outProjection.to(at::kDouble).reshape({H, d, -1});  // [H, d, E]
    std::vector<at::Tensor> v;
    for (int h = 0; h < H; ++h) v.push_back(cap.values[info.kvGroup(h)].narrow(0, start, len));
    return at::bmm(at::stack(v).to(at::kDouble), wo);
}

HeadMap toHeadMap(const at::Tensor& t) {
    const at::Tensor c = t.to(at::kCPU, at::kFloat).contiguous();
    HeadMap out;
    out.rows = static_cast<int>(c.size(0));
    out.cols = static_cast<int>(c.size(1));
    out.values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    return out;
}

}  // namespace

bool hasValues(const Trace& trace, int block) {
    const auto& blocks = trace.impl().blocks;
    if (block < 0 || block >= static_cast<int>(blocks.size()) || blocks[block].layers.empty()) return false;
    for (const LayerCapture& cap : blocks[block].layers)
        if (!cap.values.defined() || !cap.outProjection.defined() || cap.maps.defined()) return false;
    return true;
}

HeadMap valueNormMap(const Trace& trace, int block, int layer, int head) {
    const LayerCapture& cap = valueLayer(trace, block, layer, "value-norm");
    const BlockInfo& info = trace.blocks()[block];
    if (head < 0 || head >= info.heads)
        throw Error("value-norm: head " + std::to_string(head) + " is out of range (0.." +
                    std::to_string(info.heads - 1) + ")");
    return translateTorchErrors("computing a value-norm map", [&] {
        at::Tensor alpha = trace.impl().mapTensor(block, layer, head, MapOptions{}).to(at::kCPU, at::kFloat);
        if (masked(cap, head)) return toHeadMap(alpha.zero_());
        // ‖f_h(x̃_j)‖² = v_j (W_O^h W_O^hᵀ) v_jᵀ: one norm per key (not per query and key), from a [d, d]
        // Gram matrix instead of each [width] output (d·d instead of d·E multiply-adds per key), in float64.
        const std::int64_t d = cap.values.size(2);
        const at::Tensor wo = cap.outProjection.narrow(0, head * d, d).to(at::kCPU, at::kDouble);
        const at::Tensor v = cap.values[info.kvGroup(head)].to(at::kCPU, at::kDouble);
        const at::Tensor norms = (at::mm(v, at::mm(wo, wo.t())) * v).sum(1).clamp_min(0).sqrt().to(at::kFloat);
        // α scaled in place, column j by key j's norm: no second [queries, keys] tensor.
        return toHeadMap(alpha.mul_(norms.unsqueeze(0)));
    });
}

HeadMap valueNormLayerMap(const Trace& trace, int block, int layer) {
    const LayerCapture& cap = valueLayer(trace, block, layer, "value-norm-layer");
    const BlockInfo& info = trace.blocks()[block];
    return translateTorchErrors("computing a value-norm-layer map", [&] {
        const std::int64_t H = info.heads, n = cap.q.size(1), m = cap.k.size(1), E = cap.outProjection.size(1);
        // Gram [m, H, H] = <f_h(x̃_j), f_h'(x̃_j)>, in blocks of keys: ‖Σ_h α_h f_h‖² = αᵀ G_j α.
        at::Tensor gram = at::empty({m, H, H}, cap.values.options().dtype(at::kDouble));
        const std::int64_t step = std::max<std::int64_t>(1, (std::int64_t{1} << 24) / std::max<std::int64_t>(1, H * E));
        for (std::int64_t s = 0; s < m; s += step) {
            const at::Tensor f = headOutputs(cap, info, s, std::min(step, m - s)).transpose(0, 1);  // [len, H, E]
            gram.narrow(0, s, f.size(0)).copy_(at::bmm(f, f.transpose(1, 2)));
        }
        for (int h : cap.maskedHeads)  // a zeroed head adds nothing
            if (h >= 0 && h < H) gram.select(1, h).zero_(), gram.select(2, h).zero_();
        at::Tensor out = at::zeros({n, m}, gram.options());
        const LayerAlpha layerAlpha(trace, block, layer);  // α as Trace::map computes it, row block by row block
        const std::int64_t rows = cap.q.is_cpu() ? blockedConfig().rows : deviceBlockRows(H, n, m);
        for (std::int64_t start = 0; start < n; start += rows) {
            const std::int64_t len = std::min(rows, n - start);
            const KeySpan span = keySpan(cap.mask, n, m, start, len);
            if (span.size() == 0) continue;
            std::vector<at::Tensor> alpha;
            for (int h = 0; h < H; ++h) alpha.push_back(layerAlpha.rows(h, start, len, span));
            const at::Tensor a = at::stack(alpha).to(at::kDouble).permute({2, 1, 0}).contiguous();  // [keys, len, H]
            const at::Tensor t = at::bmm(a, gram.narrow(0, span.lo, span.size()));
            const at::Tensor squared = (t * a).sum(-1).clamp_min(0);  // [keys, len]; rounding can dip below 0
            out.narrow(0, start, len).narrow(1, span.lo, span.size()).copy_(squared.sqrt().t());
        }
        return toHeadMap(out);
    });
}

}  // namespace attnscope
