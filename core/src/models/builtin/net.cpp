#include "net.h"

#include "attnscope/runtime/error.h"
#include "models/family_common.h"
#include "attention/linear_attention.h"

#include <cmath>
#include <limits>

namespace attnscope::builtin {

namespace {

const at::Tensor& get(const Weights& w, const std::string& name) {
    const auto it = w.find(name);
    if (it == w.end()) throw Error("built-in model: weight '" + name + "' is missing");
    return it->second;
}

at::Tensor norm(const Weights& w, const Config& c, const std::string& p, const at::Tensor& x) {
    return at::layer_norm(x, {c.dModel}, get(w, p + ".weight"), get(w, p + ".bias"), c.eps);
}

at::Tensor ffn(const Weights& w, const std::string& p, const at::Tensor& x) {
    at::Tensor h = at::gelu(at::linear(x, get(w, p + ".fc1.weight"), get(w, p + ".fc1.bias")));
    return at::linear(h, get(w, p + ".fc2.weight"), get(w, p + ".fc2.bias"));
}

struct Site {
    std::string prefix;  // weight prefix, e.g. "decoder.1.cross"
    std::string block;   // RunOptions block name
    int layer = 0;
    bool causal = false;
    at::Tensor keyAllowed;  // training: [B, m] bool or undefined
};

// Training: [B, n, E] x [B, m, E] -> [B, n, E] with full score tensors.
at::Tensor attendTraining(const Weights& w, const Config& c, const Site& s, const at::Tensor& xq,
                          const at::Tensor& xkv) {
    const std::int64_t B = xq.size(0), n = xq.size(1), m = xkv.size(1), H = c.heads, d = c.headDim(), E = c.dModel;
    auto heads = [&](const at::Tensor& x, std::int64_t len) { return x.view({B, len, H, d}).transpose(1, 2); };
    const std::string& p = s.prefix;
    at::Tensor q = heads(at::linear(xq, get(w, p + ".wq"), get(w, p + ".bq")), n);  // [B, H, n, d]
    at::Tensor k = heads(at::linear(xkv, get(w, p + ".wk"), get(w, p + ".bk")), m);
    at::Tensor v = heads(at::linear(xkv, get(w, p + ".wv"), get(w, p + ".bv")), m);
    at::Tensor allowed;  // broadcastable to [B, H, n, m]
    if (s.causal) allowed = at::ones({n, m}, xq.options().dtype(at::kBool)).tril_(m - n);
    if (s.keyAllowed.defined()) {
        at::Tensor keys = s.keyAllowed.view({B, 1, 1, m});
        allowed = allowed.defined() ? at::logical_and(allowed, keys) : keys;
    }
    at::Tensor probs;
    if (c.kind == AttentionKind::Linear) {
        at::Tensor scores =
                at::matmul(featureMap(q, FeatureMap::Elu), featureMap(k, FeatureMap::Elu).transpose(-1, -2));
        if (allowed.defined()) scores = scores.masked_fill(allowed.logical_not(), 0.0);
        probs = scores / scores.sum(-1, /*keepdim=*/true);
    } else {
        at::Tensor scores;
        if (c.kind == AttentionKind::Dot) {
            scores = at::matmul(q, k.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(d)));
        } else {                                                         // additive: av_hᵀ tanh(q_i aq_h + k_j ak_h)
            at::Tensor qa = at::matmul(q, get(w, p + ".aq"));            // [B, H, n, w]
            at::Tensor ka = at::matmul(k, get(w, p + ".ak"));            // [B, H, m, w]
            at::Tensor t = at::tanh(qa.unsqueeze(3) + ka.unsqueeze(2));  // [B, H, n, m, w]
            scores = at::matmul(t, get(w, p + ".av").view({H, 1, c.additiveWidth, 1})).squeeze(-1);
        }
        if (allowed.defined())
            scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
        probs = at::softmax(scores, -1);
    }
    at::Tensor context = at::matmul(probs, v).transpose(1, 2).reshape({B, n, E});
    return at::linear(context, get(w, p + ".wo"), get(w, p + ".bo"));
}

// Inference: batch of one, no padding. Records Q/K as the layer used them.
at::Tensor attendInference(const Weights& w, const Config& c, const Site& s, const at::Tensor& xq,
                           const at::Tensor& xkv, const RunOptions& options, BlockCapture* capture) {
    const std::int64_t n = xq.size(1), H = c.heads, d = c.headDim();
    auto heads = [&](const at::Tensor& x) { return splitHeads(x, H, d); };
    const std::string& p = s.prefix;
    at::Tensor q = heads(at::linear(xq[0], get(w, p + ".wq"), get(w, p + ".bq")));  // [H, n, d]
    at::Tensor k = heads(at::linear(xkv[0], get(w, p + ".wk"), get(w, p + ".bk")));
    at::Tensor v = heads(at::linear(xkv[0], get(w, p + ".wv"), get(w, p + ".bv")));
    const LayerRun run = layerRun(options, s.block, s.layer);
    MaskSpec mask;
    mask.causal = s.causal;
    at::Tensor context;
    LayerCapture cap;
    cap.kind = c.kind;
    if (c.kind == AttentionKind::Dot) {
        cap.score.scale = 1.0 / std::sqrt(static_cast<double>(d));
        context = attendDot(q, k, v, mask, cap.score, run);
        cap.q = q;
        cap.k = k;  // Model::forward records run.temperature in the capture
    } else if (c.kind == AttentionKind::Additive) {
        at::Tensor qa = at::bmm(q, get(w, p + ".aq"));  // [H, n, w]
        at::Tensor ka = at::bmm(k, get(w, p + ".ak"));  // [H, m, w]
        const at::Tensor& av = get(w, p + ".av");
        context = at::empty({H, n, d}, q.options());
        for (std::int64_t h = 0; h < H; ++h)  // blockwise per head: never an [n, m, w] tensor
            context[h].copy_(at::mm(additiveProbs(qa[h], ka[h], av[h], mask, run.temperature), v[h]));
        zeroMaskedHeads(context, run);
        cap.q = qa;
        cap.k = ka;
        cap.v = av;
    } else {  // linear: φ(q_i)ᵀ Σ_j φ(k_j) v_jᵀ / φ(q_i)ᵀ Σ_j φ(k_j), never an n×n map
        context = linearAttention(featureMap(q, FeatureMap::Elu), featureMap(k, FeatureMap::Elu), v, mask);
        zeroMaskedHeads(context, run);
        cap.q = q;
        cap.k = k;
        cap.score.scale =
                1.0 / std::sqrt(static_cast<double>(d));  // unused by the linear map; the dot comparison map's factor
    }
    cap.mask = mask;
    if (capture) capture->layers.push_back(std::move(cap));
    return at::linear(mergeHeads(context), get(w, p + ".wo"), get(w, p + ".bo")).unsqueeze(0);
}

at::Tensor attend(const Weights& w, const Config& c, const Site& s, const at::Tensor& xq, const at::Tensor& xkv,
                  const Pass& pass, BlockCapture* capture) {
    if (pass.inference()) return attendInference(w, c, s, xq, xkv, *pass.run, capture);
    return attendTraining(w, c, s, xq, xkv);
}

}  // namespace

at::Tensor encode(const Weights& w, const Config& c, const at::Tensor& ids, const at::Tensor& keyAllowed,
                  const Pass& pass, BlockCapture* capture) {
    const std::int64_t B = ids.size(0), S = ids.size(1);
    at::Tensor positions = at::arange(S, ids.options()).unsqueeze(0).expand({B, S});
    if (c.seq2seq && c.sourceFromEnd) {  // position 0 is the last symbol; padding clamps to 0
        at::Tensor lengths = keyAllowed.defined() ? keyAllowed.sum(1, /*keepdim=*/true).to(at::kLong)
                                                  : at::full({B, 1}, S, ids.options());
        positions = (lengths - 1 - positions).clamp_min(0);
    }
    at::Tensor x = at::embedding(get(w, "src_embed"), ids) + at::embedding(get(w, "src_pos"), positions);
    for (int l = 0; l < c.encoderLayers; ++l) {
        const std::string p = "encoder." + std::to_string(l);
        Site site{p + ".attn", c.seq2seq ? "encoder" : "self", l, false, keyAllowed};
        at::Tensor h = norm(w, c, p + ".ln1", x);
        x = x + attend(w, c, site, h, h, pass, capture);
        x = x + ffn(w, p + ".ffn", norm(w, c, p + ".ln2", x));
    }
    return norm(w, c, "encoder.ln", x);
}

at::Tensor decode(const Weights& w, const Config& c, const at::Tensor& input, const at::Tensor& memory,
                  const at::Tensor& sourceAllowed, const Pass& pass, BlockCapture* self, BlockCapture* cross) {
    const std::int64_t T = input.size(1);
    at::Tensor x = at::embedding(get(w, "tgt_embed"), input) + get(w, "tgt_pos").narrow(0, 0, T);
    for (int l = 0; l < c.decoderLayers; ++l) {
        const std::string p = "decoder." + std::to_string(l);
        at::Tensor h = norm(w, c, p + ".ln1", x);
        x = x + attend(w, c, Site{p + ".self", "decoder", l, true, {}}, h, h, pass, self);
        h = norm(w, c, p + ".ln2", x);
        x = x + attend(w, c, Site{p + ".cross", "cross", l, false, sourceAllowed}, h, memory, pass, cross);
        x = x + ffn(w, p + ".ffn", norm(w, c, p + ".ln3", x));
    }
    return at::linear(norm(w, c, "decoder.ln", x), get(w, "head.weight"), get(w, "head.bias"));
}

at::Tensor classify(const Weights& w, const at::Tensor& encoded) {
    return at::linear(encoded.select(1, 0), get(w, "head.weight"), get(w, "head.bias"));
}

}  // namespace attnscope::builtin
