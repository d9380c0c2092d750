#include "moe.h"

#include "attnscope/attention/router_trace.h"
#include "decoder_spec.h"
#include "family_common.h"
#include "io/json_util.h"

#include <cmath>
#include <limits>

namespace attnscope {

void readTopK(const JsonConfig& c, MoeSpec& moe, const std::string& expertsKey, int defaultTopK) {
    moe.topK = c.optionalPositiveInt("num_experts_per_tok").value_or(defaultTopK);
    if (moe.topK > moe.experts)
        c.fail("num_experts_per_tok",
               "(" + std::to_string(moe.topK) + ") exceeds " + expertsKey + " (" + std::to_string(moe.experts) + ")");
}

void addMoeNotes(const MoeSpec& moe, std::vector<std::string>& notes) {
    notes.push_back(std::to_string(moe.experts) + " experts, top " + std::to_string(moe.topK) +
                    (moe.normTopK ? " renormalised" : ""));
    if (moe.sharedInner > 0) notes.push_back("shared expert with a sigmoid gate");
    std::vector<int> dense;
    for (int l = 0; l < static_cast<int>(moe.routed.size()); ++l)
        if (!moe.routed[static_cast<std::size_t>(l)]) dense.push_back(l);
    if (!dense.empty()) notes.push_back("dense MLP on layers " + layerListNote(dense));
}

namespace {

// The per-expert layout's matrix of expert e: LAYER.<hubBlock>experts.e.<name>.weight.
at::Tensor expertMatrix(WeightStore& w, const std::string& block, int e, const std::string& name, std::int64_t rows,
                        std::int64_t cols) {
    return w.get(block + "experts." + std::to_string(e) + "." + name + ".weight", {rows, cols});
}

}  // namespace

MoeLayer loadMoeLayer(WeightStore& w, const std::string& prefix, const MoeSpec& moe, std::int64_t D) {
    const std::int64_t E = moe.experts, I = moe.inner;
    MoeLayer L;
    const std::string fused = prefix + moe.fusedBlock;
    L.fused = w.has(fused + "experts.gate_up_proj");
    const std::string block = L.fused ? fused : prefix + moe.hubBlock;
    L.router = w.linear(block + "gate", E, D, false);
    if (L.fused) {
        const at::Tensor gateUp = w.get(fused + "experts.gate_up_proj", {E, 2 * I, D});
        const at::Tensor down = w.get(fused + "experts.down_proj", {E, D, I});
        for (std::int64_t e = 0; e < E; ++e) {
            L.gate.push_back(gateUp.select(0, e).narrow(0, 0, I));
            L.up.push_back(gateUp.select(0, e).narrow(0, I, I));
            L.down.push_back(down.select(0, e));
        }
    } else {
        for (int e = 0; e < E; ++e) {
            L.gate.push_back(expertMatrix(w, block, e, moe.w1, I, D));
            L.up.push_back(expertMatrix(w, block, e, moe.w3, I, D));
            L.down.push_back(expertMatrix(w, block, e, moe.w2, D, I));
        }
    }
    if (moe.sharedInner > 0) {
        const std::int64_t S = moe.sharedInner;
        L.sharedGateProj = w.linear(block + "shared_expert.gate_proj", S, D, false);
        L.sharedUp = w.linear(block + "shared_expert.up_proj", S, D, false);
        L.sharedDown = w.linear(block + "shared_expert.down_proj", D, S, false);
        L.sharedGate = w.linear(block + "shared_expert_gate", 1, D, false);
    }
    return L;
}

MoeLayer mapMoeLayer(const MoeLayer& L, const std::function<at::Tensor(const at::Tensor&)>& alias) {
    MoeLayer c;
    c.fused = L.fused;
    const auto linear = [&](const Linear& p) { return Linear{alias(p.weight), alias(p.bias)}; };
    c.router = linear(L.router);
    for (const at::Tensor& t : L.gate) c.gate.push_back(alias(t));
    for (const at::Tensor& t : L.up) c.up.push_back(alias(t));
    for (const at::Tensor& t : L.down) c.down.push_back(alias(t));
    c.sharedGate = linear(L.sharedGate);
    c.sharedGateProj = linear(L.sharedGateProj);
    c.sharedUp = linear(L.sharedUp);
    c.sharedDown = linear(L.sharedDown);
    return c;
}

at::Tensor moeForward(const MoeSpec& moe, const MoeLayer& L, const at::Tensor& h, const std::string& act,
                      RouterRecord* record) {
    const std::int64_t n = h.size(0), k = moe.topK;
    // The softmax over every expert in float32, its top-k (largest first), renormalised or not,
    // then in the compute dtype (Hugging Face's routing_weights).
    const at::Tensor probs = at::softmax(linearRows(h, L.router.weight).to(at::kFloat), -1);
    auto [top, chosen] = at::topk(probs, k, -1);
    if (moe.normTopK) top = top / top.sum(-1, /*keepdim=*/true);
    const at::Tensor weights = top.to(h.scalar_type()).reshape({-1});
    const at::Tensor chosenCpu = chosen.to(at::kCPU, at::kLong).contiguous();
    if (record) {
        record->probs.push_back(probs.to(at::kCPU));
        record->chosen.push_back(chosenCpu);
    }
    // Each expert on the tokens that chose it, in expert order; slots index the flattened weights.
    std::vector<std::vector<std::int64_t>> tokens(static_cast<std::size_t>(moe.experts)), slots(tokens.size());
    const std::int64_t* c = chosenCpu.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t r = 0; r < k; ++r) {
            tokens[static_cast<std::size_t>(c[i * k + r])].push_back(i);
            slots[static_cast<std::size_t>(c[i * k + r])].push_back(i * k + r);
        }
    at::Tensor out = at::zeros_like(h);
    for (std::size_t e = 0; e < tokens.size(); ++e) {
        if (tokens[e].empty()) continue;
        const at::Tensor rows = idTensor(tokens[e], h.device());
        const at::Tensor x = h.index_select(0, rows);
        const at::Tensor inner = activate(act, linearRows(x, L.gate[e])) * linearRows(x, L.up[e]);
        const at::Tensor w = weights.index_select(0, idTensor(slots[e], h.device())).unsqueeze(1);
        out = out.index_add(0, rows, linearRows(inner, L.down[e]) * w);
    }
    if (moe.sharedInner > 0) {
        const at::Tensor shared =
                linearRows(activate(act, linearRows(h, L.sharedGateProj.weight)) * linearRows(h, L.sharedUp.weight),
                           L.sharedDown.weight);
        out = out + at::sigmoid(linearRows(h, L.sharedGate.weight)) * shared;
    }
    return out;
}

void recordDenseLayer(RouterRecord* record) {
    if (!record) return;
    record->probs.emplace_back();
    record->chosen.emplace_back();
}

RouterTrace finishRouter(const MoeSpec& moe, const RouterRecord& record, std::int64_t n) {
    RouterTrace r;
    r.layers = static_cast<int>(record.probs.size());
    r.tokens = static_cast<int>(n);
    r.experts = moe.experts;
    r.topK = moe.topK;
    const std::size_t rows = static_cast<std::size_t>(r.layers) * static_cast<std::size_t>(n);
    r.probabilities.assign(rows * static_cast<std::size_t>(r.experts), std::numeric_limits<float>::quiet_NaN());
    r.chosen.assign(rows * static_cast<std::size_t>(r.topK), -1);
    for (int l = 0; l < r.layers; ++l) {
        if (!record.probs[static_cast<std::size_t>(l)].defined()) continue;
        const at::Tensor p = record.probs[static_cast<std::size_t>(l)].contiguous();
        const at::Tensor c = record.chosen[static_cast<std::size_t>(l)];
        std::copy_n(p.data_ptr<float>(), p.numel(), r.probabilities.begin() + l * n * r.experts);
        const std::int64_t* ci = c.data_ptr<std::int64_t>();
        for (std::int64_t i = 0; i < c.numel(); ++i)
            r.chosen[static_cast<std::size_t>(l * n * r.topK + i)] = static_cast<int>(ci[i]);
    }
    return r;
}

}  // namespace attnscope
