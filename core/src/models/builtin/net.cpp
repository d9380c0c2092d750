#include "net.h"

#include "attnscope/runtime/error.h"
#include "models/family_common.h"
#include "attention/kinds.h"
#include "attention/linear_attention.h"

#include <cmath>
#include <functional>
#include <utility>
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
    bool cross = false;
};

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Query and key heads of a module: lsh shares them (Reformer: k = q / |q|).
std::pair<at::Tensor, at::Tensor> queryKey(const Weights& w, AttentionKind kind, const std::string& p,
                                           const at::Tensor& q, const at::Tensor& xkv,
                                           const std::function<at::Tensor(const at::Tensor&)>& heads) {
    if (kind == AttentionKind::Lsh) return {q, q / q.norm(2, -1, /*keepdim=*/true).clamp_min(1e-6)};
    return {q, heads(at::linear(xkv, get(w, p + ".wk"), get(w, p + ".bk")))};
}

// Training: [B, n, E] x [B, m, E] -> [B, n, E] with full score tensors.
at::Tensor attendTraining(const Weights& w, const Config& c, const Site& s, const at::Tensor& xq, const at::Tensor& xkv,
                          std::vector<SiteMap>* maps) {
    const std::int64_t B = xq.size(0), n = xq.size(1), m = xkv.size(1), H = c.heads, d = c.headDim(), E = c.dModel;
    const AttentionKind kind = c.siteKind(s.cross);
    const std::string& p = s.prefix;
    const at::Tensor q = at::linear(xq, get(w, p + ".wq"), get(w, p + ".bq")).view({B, n, H, d}).transpose(1, 2);
    const auto heads = [&](const at::Tensor& x) { return x.view({B, m, H, d}).transpose(1, 2); };  // [B, H, m, d]
    const at::Tensor k = queryKey(w, kind, p, q, xkv, heads).second;
    const at::Tensor v = heads(at::linear(xkv, get(w, p + ".wv"), get(w, p + ".bv")));
    at::Tensor allowed;  // broadcastable to [B, H, n, m]
    if (s.causal) allowed = at::ones({n, m}, xq.options().dtype(at::kBool)).tril_(m - n);
    if (s.keyAllowed.defined()) {
        at::Tensor keys = s.keyAllowed.view({B, 1, 1, m});
        allowed = allowed.defined() ? at::logical_and(allowed, keys) : keys;
    }
    const auto masked = [&](const at::Tensor& scores) {
        return allowed.defined() ? scores.masked_fill(allowed.logical_not(), kNegInf) : scores;
    };
    const auto dotLogits = [&] {
        at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(d)));
        if (c.relative && !s.cross) scores = scores + relativeBias(get(w, p + ".rel"), n, m);
        return masked(scores);
    };
    const auto additiveLogits = [&] {                                // av_hᵀ tanh(q_i aq_h + k_j ak_h)
        at::Tensor qa = at::matmul(q, get(w, p + ".aq"));            // [B, H, n, w]
        at::Tensor ka = at::matmul(k, get(w, p + ".ak"));            // [B, H, m, w]
        at::Tensor t = at::tanh(qa.unsqueeze(3) + ka.unsqueeze(2));  // [B, H, n, m, w]
        return masked(at::matmul(t, get(w, p + ".av").view({H, 1, c.additiveWidth, 1})).squeeze(-1));
    };
    at::Tensor probs;
    switch (kind) {
        case AttentionKind::Linear: {
            at::Tensor scores =
                    at::matmul(featureMap(q, FeatureMap::Elu), featureMap(k, FeatureMap::Elu).transpose(-1, -2));
            if (allowed.defined()) scores = scores.masked_fill(allowed.logical_not(), 0.0);
            probs = scores / scores.sum(-1, /*keepdim=*/true);
            break;
        }
        case AttentionKind::Dot: probs = at::softmax(dotLogits(), -1); break;
        case AttentionKind::Additive: probs = at::softmax(additiveLogits(), -1); break;
        case AttentionKind::Hybrid: {
            const at::Tensor g = learnedGate(q, get(w, p + ".gw"), get(w, p + ".gb")).unsqueeze(-1);
            probs = g * at::softmax(additiveLogits(), -1) + (1 - g) * at::softmax(dotLogits(), -1);
            break;
        }
        default: {  // local, topk, lsh: the logits softmaxed over the kept keys
            const at::Tensor logits = dotLogits();
            at::Tensor keep;
            if (kind == AttentionKind::Local) keep = localKeep(n, m, c.sparse.window, c.sparse.twoSided, xq.options());
            if (kind == AttentionKind::TopK) keep = topkKeep(logits, c.sparse.keep);
            if (kind == AttentionKind::Lsh) {
                const at::Tensor lengths = s.keyAllowed.defined() ? s.keyAllowed.sum(1) : at::full({B}, m, at::kLong);
                keep = lshKeep(q, c.sparse, s.causal, lengths.view({B, 1}).expand({B, H}));
            }
            probs = softmaxKept(logits, keep);
        }
    }
    if (maps) maps->push_back({s.block, s.layer, probs});
    at::Tensor context = at::matmul(probs, v).transpose(1, 2).reshape({B, n, E});
    return at::linear(context, get(w, p + ".wo"), get(w, p + ".bo"));
}

// Inference, local / topk / lsh / hybrid: per head, exactly what Trace::map computes from the capture.
at::Tensor attendKindHeads(const LayerCapture& cap, const at::Tensor& v, const LayerRun& run) {
    const std::int64_t H = cap.q.size(0), n = cap.q.size(1);
    at::Tensor context = at::empty({H, n, v.size(2)}, v.options());
    for (std::int64_t h = 0; h < H; ++h) {
        const int head = static_cast<int>(h);
        at::Tensor probs;
        if (cap.kind == AttentionKind::Hybrid) {
            const at::Tensor dot = headProbs(cap.q[h], cap.k[h], cap.mask, cap.score, head, run.temperature);
            const at::Tensor add = additiveProbs(cap.qa[h], cap.ka[h], cap.v[h], cap.mask, run.temperature);
            const at::Tensor g = cap.gate[h].unsqueeze(-1);
            probs = g * add + (1 - g) * dot;
        } else {
            const MapVariant variant = cap.kind == AttentionKind::Local  ? MapVariant::Local
                                       : cap.kind == AttentionKind::TopK ? MapVariant::TopK
                                                                         : MapVariant::Lsh;
            const at::Tensor logits = headLogits(cap.q[h], cap.k[h], cap.mask, cap.score, head, run.temperature);
            probs = softmaxKept(logits, sparseKeep(variant, cap.sparse, logits, cap.q[h], cap.mask.causal));
        }
        context[h].copy_(at::mm(probs, v[h]));
    }
    zeroMaskedHeads(context, run);
    return context;
}

// Inference: batch of one, no padding. Records Q/K as the layer used them.
at::Tensor attendInference(const Weights& w, const Config& c, const Site& s, const at::Tensor& xq,
                           const at::Tensor& xkv, const RunOptions& options, BlockCapture* capture) {
    const std::int64_t n = xq.size(1), m = xkv.size(1), H = c.heads, d = c.headDim();
    auto heads = [&](const at::Tensor& x) { return splitHeads(x, H, d); };
    const std::string& p = s.prefix;
    const AttentionKind kind = c.siteKind(s.cross);
    const at::Tensor q0 = heads(at::linear(xq[0], get(w, p + ".wq"), get(w, p + ".bq")));  // [H, n, d]
    const auto [q, k] = queryKey(w, kind, p, q0, xkv[0], heads);
    at::Tensor v = heads(at::linear(xkv[0], get(w, p + ".wv"), get(w, p + ".bv")));
    const LayerRun run = layerRun(options, s.block, s.layer);
    MaskSpec mask;
    mask.causal = s.causal;
    at::Tensor context;
    LayerCapture cap;
    cap.kind = kind;
    cap.mask = mask;
    cap.score.scale = 1.0 / std::sqrt(static_cast<double>(d));  // linear: unused, the dot comparison map's factor
    if (c.relative && !s.cross) cap.score.bias = relativeBias(get(w, p + ".rel"), n, m);
    cap.q = q;
    cap.k = k;  // Model::forward records run.temperature in the capture
    if (c.additiveParts() && kind != AttentionKind::Dot) {
        cap.qa = at::bmm(q, get(w, p + ".aq"));  // [H, n, w]
        cap.ka = at::bmm(k, get(w, p + ".ak"));  // [H, m, w]
        cap.v = get(w, p + ".av");
    }
    if (kind == AttentionKind::Dot) {
        context = attendDot(q, k, v, mask, cap.score, run);
    } else if (kind == AttentionKind::Additive) {
        context = at::empty({H, n, d}, q.options());
        for (std::int64_t h = 0; h < H; ++h)  // blockwise per head: never an [n, m, w] tensor
            context[h].copy_(at::mm(additiveProbs(cap.qa[h], cap.ka[h], cap.v[h], mask, run.temperature), v[h]));
        zeroMaskedHeads(context, run);
        cap.q = std::move(cap.qa);  // an additive layer's capture: q, k are its projections
        cap.k = std::move(cap.ka);
        cap.qa = cap.ka = at::Tensor();
    } else if (kind == AttentionKind::Linear) {  // φ(q_i)ᵀ Σ_j φ(k_j) v_jᵀ / φ(q_i)ᵀ Σ_j φ(k_j), never an n×n map
        context = linearAttention(featureMap(q, FeatureMap::Elu), featureMap(k, FeatureMap::Elu), v, mask);
        zeroMaskedHeads(context, run);
    } else {
        if (kind == AttentionKind::Hybrid) cap.gate = learnedGate(q, get(w, p + ".gw"), get(w, p + ".gb"));
        cap.sparse = c.sparse;
        context = attendKindHeads(cap, v, run);
    }
    // The value sources (analysis/value_norm.h, alti.h): what the heads read, and W_O^h.
    if (run.captureValues) recordValues(cap, v, get(w, p + ".wo"), true, false, run.maskedHeads);
    if (capture) capture->layers.push_back(std::move(cap));
    return at::linear(mergeHeads(context), get(w, p + ".wo"), get(w, p + ".bo")).unsqueeze(0);
}

at::Tensor attend(const Weights& w, const Config& c, const Site& s, const at::Tensor& xq, const at::Tensor& xkv,
                  const Pass& pass, BlockCapture* capture) {
    if (pass.inference()) return attendInference(w, c, s, xq, xkv, *pass.run, capture);
    return attendTraining(w, c, s, xq, xkv, pass.maps);
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
    at::Tensor x = at::embedding(get(w, "src_embed"), ids);
    if (!c.relative) x = x + at::embedding(get(w, "src_pos"), positions);
    for (int l = 0; l < c.encoderLayers; ++l) {
        const std::string p = "encoder." + std::to_string(l);
        Site site{p + ".attn", c.seq2seq ? "encoder" : "self", l, false, keyAllowed};
        at::Tensor h = norm(w, c, p + ".ln1", x);
        const at::Tensor entering = x;
        x = x + attend(w, c, site, h, h, pass, capture);
        // ALTI's residual (pre-norm: y = x + attention): recorded for this single-stream block only.
        if (capture && pass.inference() && pass.run->captureValues)
            recordResidual(capture->layers.back(), entering[0], get(w, p + ".attn.bo"));
        x = x + ffn(w, p + ".ffn", norm(w, c, p + ".ln2", x));
    }
    return norm(w, c, "encoder.ln", x);
}

at::Tensor decode(const Weights& w, const Config& c, const at::Tensor& input, const at::Tensor& memory,
                  const at::Tensor& sourceAllowed, const Pass& pass, BlockCapture* self, BlockCapture* cross,
                  const at::Tensor& targetAllowed) {
    const std::int64_t T = input.size(1);
    at::Tensor x = at::embedding(get(w, "tgt_embed"), input);
    if (!c.relative) x = x + get(w, "tgt_pos").narrow(0, 0, T);
    for (int l = 0; l < c.decoderLayers; ++l) {
        const std::string p = "decoder." + std::to_string(l);
        at::Tensor h = norm(w, c, p + ".ln1", x);
        x = x + attend(w, c, Site{p + ".self", "decoder", l, true, targetAllowed, false}, h, h, pass, self);
        h = norm(w, c, p + ".ln2", x);
        x = x + attend(w, c, Site{p + ".cross", "cross", l, false, sourceAllowed, true}, h, memory, pass, cross);
        x = x + ffn(w, p + ".ffn", norm(w, c, p + ".ln3", x));
    }
    return at::linear(norm(w, c, "decoder.ln", x), get(w, "head.weight"), get(w, "head.bias"));
}

at::Tensor classify(const Weights& w, const at::Tensor& encoded) {
    return at::linear(encoded.select(1, 0), get(w, "head.weight"), get(w, "head.bias"));
}

}  // namespace attnscope::builtin
