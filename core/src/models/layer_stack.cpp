#include "layer_stack.h"

#include "io/weights.h"
#include "runtime/memory.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

StackSpec scaledStack(std::int64_t hidden, std::int64_t heads, std::int64_t ffn, double eps,
                      const std::string& activation) {
    StackSpec s;
    s.hidden = hidden;
    s.heads = heads;
    s.headDim = hidden / heads;
    s.ffn = ffn;
    s.eps = eps;
    s.scale = 1.0 / std::sqrt(static_cast<double>(s.headDim));
    s.activation = activation;
    return s;
}

StackNames bertLayerNames(std::string self, std::array<const char*, 4> attention) {
    StackNames n;
    n.self = std::move(self);
    n.attention = attention;
    n.selfNorm = "attention.output.LayerNorm";
    n.inner = "intermediate.dense";
    n.out = "output.dense";
    n.ffNorm = "output.LayerNorm";
    return n;
}

std::vector<StackLayer> loadStack(WeightStore& w, const StackSpec& s, const StackNames& names,
                                  const std::string& prefix, int count, const std::function<void()>& step) {
    const std::int64_t E = s.hidden, inner = s.heads * s.headDim;
    auto norm = [&](const std::string& name) {
        return s.rms || !s.normBias ? Norm{w.get(name + ".weight", {E}), {}} : loadNorm(w, name, E);
    };
    std::vector<StackLayer> layers;
    for (int l = 0; l < count; ++l) {
        const std::string p = prefix + std::to_string(l) + ".";
        StackLayer L;
        if (names.fusedQkv) {
            L.self = loadFusedAttention(w, p + names.self, names.attention, E, inner, s.qkvBias, s.oBias);
        } else {
            L.self = loadAttention(w, p + names.self, names.attention, E, inner, s.qkvBias, s.oBias);
        }
        if (l > 0 || names.firstSelfNorm) L.selfNorm = norm(p + names.selfNorm);
        if (!names.cross.empty()) {
            L.cross = loadAttention(w, p + names.cross, names.attention, E, inner, s.qkvBias, s.oBias);
            L.crossNorm = norm(p + names.crossNorm);
        }
        if (names.fusedGate) {
            const Linear both = w.linear(p + names.inner, 2 * s.ffn, E, s.ffBias);
            auto half = [&](const at::Tensor& t, std::int64_t from) {
                return t.defined() ? t.narrow(0, from, s.ffn) : at::Tensor();
            };
            L.inner = {half(both.weight, 0), half(both.bias, 0)};
            L.gate = {half(both.weight, s.ffn), half(both.bias, s.ffn)};
        } else {
            L.inner = w.linear(p + names.inner, s.ffn, E, s.ffBias);
            if (!names.gate.empty()) L.gate = w.linear(p + names.gate, s.ffn, E, s.ffBias);
        }
        L.out = w.linear(p + names.out, E, s.ffn, s.ffBias);
        L.ffNorm = norm(p + names.ffNorm);
        layers.push_back(std::move(L));
        step();
    }
    return layers;
}

AttentionWeights loadFusedAttention(WeightStore& w, const std::string& prefix, std::array<const char*, 4> names,
                                    std::int64_t hidden, std::int64_t inner, bool qkvBias, bool oBias) {
    const Linear qkv = w.linear(prefix + names[0], 3 * inner, hidden, qkvBias);
    auto part = [&](int i) -> Linear {
        auto rows = [&](const at::Tensor& t) { return t.defined() ? t.narrow(0, i * inner, inner) : at::Tensor(); };
        return {rows(qkv.weight), rows(qkv.bias)};
    };
    return {part(0), part(1), part(2), w.linear(prefix + names[3], hidden, inner, oBias)};
}

at::Tensor stackNorm(const StackSpec& s, const at::Tensor& x, const Norm& norm) {
    if (!norm.weight.defined()) return x;
    return s.rms ? rmsNorm(x, norm.weight, s.eps) : layerNorm(x, norm, s.eps);
}

namespace {

// Residual around f: pre-norm x + f(norm(x)), post-norm norm(x + f(x)).
template <class F>
at::Tensor sublayer(const StackSpec& s, const at::Tensor& x, const Norm& norm, const F& f) {
    if (s.preNorm) return x + f(stackNorm(s, x, norm));
    return stackNorm(s, x + f(x), norm);
}

}  // namespace

at::Tensor runStack(const StackSpec& s, const std::vector<StackLayer>& layers, at::Tensor x, const StackPass& pass,
                    const RunOptions& options, BlockCapture& self) {
    ScoreSpec selfScore, crossScore;
    selfScore.scale = crossScore.scale = s.scale;
    selfScore.bias = pass.bias;
    const int count = static_cast<int>(layers.size());
    for (int l = 0; l < count; ++l) {
        const StackLayer& L = layers[l];
        const at::Tensor residual = x;
        selfScore.bias = !L.selfBias.defined() ? pass.bias : pass.bias.defined() ? pass.bias + L.selfBias : L.selfBias;
        LayerRun selfRun = layerRun(options, pass.block, l);
        selfRun.alphas = pass.alphas;
        const auto at = static_cast<std::size_t>(l);
        const MaskSpec& selfMask = pass.layerMasks.empty() ? pass.mask : pass.layerMasks[at];
        BlockExtras extras;
        extras.rope = pass.rope.empty() || !pass.rope[at].cos.defined() ? nullptr : &pass.rope[at];
        if (pass.layerBias)
            extras.bias = [&](const at::Tensor& q, const at::Tensor& k) { return pass.layerBias(l, q, k); };
        if (pass.cache) extras.cache = &(*pass.cache)[at];
        x = sublayer(s, x, L.selfNorm, [&](const at::Tensor& h) {
            return attentionBlock(L.self, h, h, s.heads, s.headDim, selfScore, selfMask, selfRun, self, extras);
        });
        // ALTI's inputs (trace_impl.h), for stacks without cross-attention: a decoder's blocks mix two streams.
        if (options.captureValues && !pass.memory.defined())
            recordResidual(self.layers.back(), residual, L.self.o.bias,
                           s.preNorm ? AttentionResidual::Norm::None : AttentionResidual::Norm::Post, s.rms,
                           L.selfNorm.weight, L.selfNorm.bias, s.eps);
        if (pass.memory.defined())
            x = sublayer(s, x, L.crossNorm, [&](const at::Tensor& h) {
                return attentionBlock(L.cross, h, pass.memory, s.heads, s.headDim, crossScore, {},
                                      layerRun(options, "cross", l), *pass.cross);
            });
        x = sublayer(s, x, L.ffNorm, [&](const at::Tensor& h) {
            at::Tensor a = activate(s.activation, L.inner(h));
            if (L.gate.weight.defined()) a = a * L.gate(h);
            return L.out(a);
        });
        if (pass.afterLayer) x = pass.afterLayer(l, residual, x);
        if (pass.progress) reportProgress(options.progress, l + 1, count);
    }
    return x;
}

at::Tensor ClassifierHead::operator()(const at::Tensor& x) const {
    if (!dense.weight.defined()) return out(x);
    const at::Tensor h = dense(x);
    at::Tensor a = activation == "tanh" ? at::tanh(h) : activate(activation, h);
    if (denseNorm.weight.defined()) a = layerNorm(a, denseNorm, normEps);
    return out(a);
}

at::Tensor ClassifierHead::logits(const at::Tensor& states, const at::Tensor& rows) const {
    if (pool) return pool(*this, states, rows);
    return (*this)(states.narrow(0, 0, 1));
}

Linear optionalClassifier(WeightStore& w, const std::string& name, std::int64_t inputs) {
    const auto shape = w.shape(name + ".weight");
    if (!shape || shape->size() != 2) return {};
    return w.linear(name, shape->front(), inputs);
}

void EncoderStack::loadHead(WeightStore& w, const JsonConfig& config, const std::string& dense, const std::string& out,
                            const std::string& activation) {
    head_.out = optionalClassifier(w, out, spec_.hidden);
    if (!head_.out.weight.defined()) return;
    if (!dense.empty()) head_.dense = w.linear(dense, spec_.hidden, spec_.hidden);
    head_.activation = activation;
    classNames_ = classNames(config, head_.out.weight.size(0));
}

at::Tensor EncoderStack::runInto(Trace::Impl& impl, const at::Tensor& x, StackPass pass, const RunOptions& options,
                                 const std::vector<std::string>& tokens) const {
    const StackSpec& s = spec_;
    const auto L = static_cast<std::int64_t>(layers_.size()), n = x.size(0);
    requireForwardMemory({L, s.heads, s.heads, s.headDim, s.hidden, s.ffn, n, n,
                          static_cast<std::int64_t>(c10::elementSize(x.scalar_type()))},
                         x.device());
    BlockCapture capture;
    pass.progress = true;
    const at::Tensor out = stackNorm(s, runStack(s, layers_, x, pass, options, capture), final_);
    if (head_.out.weight.defined()) {
        const at::Tensor logits = head_.logits(out, pass.mask.keyAllowed).to(at::kFloat);
        const at::Tensor probs = at::softmax(logits, -1).reshape({-1}).to(at::kCPU).contiguous();
        impl.classLabels = classNames_;
        impl.classProbabilities.assign(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
    } else {  // no task head: the last hidden states are the output interventions compare
        recordFinalHidden(impl, out);
    }
    impl.infos.push_back(blockInfo("self", static_cast<int>(L), static_cast<int>(s.heads), static_cast<int>(s.heads),
                                   false, tokens, tokens));
    impl.blocks.push_back(std::move(capture));
    return out;
}

}  // namespace attnscope
