// Trace internals, for model families that build Traces and for core code that reads them.
#pragma once

#include "attention_ops.h"
#include "readout.h"
#include "attnscope/attention/image_text.h"
#include "attnscope/attention/router_trace.h"
#include "attnscope/attention/score_terms.h"
#include "attnscope/attention/trace.h"
#include "attnscope/io/input.h"
#include "runtime/capture_type.h"

#include <ATen/ATen.h>

#include <vector>

namespace attnscope {

// How a layer's attention output reaches the residual stream, for ALTI (analysis/alti.h).
//   None:   y = x + attn                 (pre-norm and parallel blocks)
//   Post:   y = norm(x + attn)           (post-norm: BERT family, OPT's post-LN variant)
//   Branch: y = x + norm(attn)           (a norm on the attention output: Gemma-2/3, OLMo-2)
// attn = Σ heads · W_O + b_O. residual [queries, width] is the x added (before the pre-attention
// norm; the normed input where the family adds that (BLOOM)), in the forward's dtype; bias b_O,
// weight (the norm's effective scale: Gemma's 1 + γ) and normBias [width] float32 on the CPU,
// undefined where the layer has none.
struct AttentionResidual {
    enum class Norm { None, Post, Branch };
    at::Tensor residual, bias;
    Norm norm = Norm::None;
    bool rms = false;  // RMSNorm (no centring, no β) instead of LayerNorm
    at::Tensor weight, normBias;
    double eps = 0;
};

// Dot and Linear layers: q [heads, queries, head_dim] and k [kv_heads, keys, head_dim] as the
// model used them (after any norms and rotation); score says how q·k became the layer's logits
// (scale, soft-cap, ALiBi) and mask which keys each query saw (per layer: Gemma-2 and GPT-Neo
// alternate sliding-window and global layers).
// Additive layers: q = W_q·q [heads, queries, width], k = W_k·k [heads, keys, width] and
// v [heads, width], so that logits_ij = vᵀ tanh(q_i + k_j).
struct LayerCapture {
    at::Tensor q;
    at::Tensor k;
    ScoreSpec score;
    MaskSpec mask;
    AttentionKind kind = AttentionKind::Dot;
    at::Tensor v;  // Additive: v [heads, width]; Hybrid: the additive part's v
    // Local / TopK / Lsh layers: their parameters (the Native map is that variant of q, k). Lsh
    // layers share Q and K: k = q / |q| (Reformer), and hash q.
    SparseOptions sparse;
    // Hybrid layers: q, k and score are the dot part; qa [heads, queries, width], ka [heads, keys,
    // width] and v the additive part; gate [heads, queries] = σ(W_g q) as the layer used it.
    at::Tensor qa, ka, gate;
    // Propagated temperature the layer ran at (RunOptions); maps divide their logits by it, so
    // that a map at display temperature 1 is the one the model used. Model::forward sets it from
    // RunOptions for every family; families need not.
    double temperature = 1.0;
    // Maps-only Traces (attention_file.h): the layer's given maps [heads, queries, keys] in the
    // file's dtype, read-only (a view of the file's mapping); q and k are then zero-width and
    // only carry the shape.
    at::Tensor maps;
    // RunOptions::captureValues only (undefined otherwise): values [kv_heads, keys, head_dim] =
    // x̃ W_V + b_V as the heads read them, outProjection [heads · head_dim, width] with rows
    // h·d .. h·d + d reading head h (W_O^h), and the heads the model zeroed (RunOptions::maskHeads).
    at::Tensor values, outProjection;
    std::vector<int> maskedHeads;
    // Window attention (Swin): each key's window (the tokens', then the window padding's),
    // numbered row-major over the shifted grid's windows; empty for layers without windows.
    std::vector<int> windows;
    // RunOptions::captureValues on the families that record it: what ALTI (analysis/alti.h) adds
    // to the values. Undefined residual: not recorded (cross and encoder-decoder decoder blocks).
    AttentionResidual residual;
};

// A dot-product layer's capture, Q and K narrowed to the running forward's capture dtype
// (runtime/capture_type.h) right away.
inline LayerCapture dotCapture(at::Tensor q, at::Tensor k, ScoreSpec score, MaskSpec mask) {
    LayerCapture c;
    const auto type = captureType();
    c.q = type ? q.to(*type) : std::move(q);
    c.k = type ? k.to(*type) : std::move(k);
    c.score = std::move(score);
    c.mask = std::move(mask);
    return c;
}

// Records a dot layer's values for the value-weighted sources: v [kv_heads, keys, head_dim] and
// the output projection as [heads · head_dim, width] (a weight stored [width, heads · head_dim]
// is transposed as a view; `copy` for weights that a streamed forward overwrites per layer).
inline void recordValues(LayerCapture& c, const at::Tensor& v, const at::Tensor& outProjection, bool transposed,
                         bool copy, std::vector<int> maskedHeads) {
    c.values = v.contiguous();  // a view of a fused qkv would keep all of it
    c.maskedHeads = std::move(maskedHeads);
    c.outProjection = transposed ? outProjection.t() : outProjection;
    if (!copy) return;
    // Streamed matrices come from a BF16 or F16 file: keep the copy in the half dtype that holds
    // it exactly (half the memory of the float32 buffer), else in float32.
    for (const auto type : {at::kBFloat16, at::kHalf}) {
        at::Tensor half = c.outProjection.to(type);
        if (at::equal(half.to(c.outProjection.scalar_type()), c.outProjection)) {
            c.outProjection = std::move(half);
            return;
        }
    }
    c.outProjection = c.outProjection.clone();
}

// Records ALTI's inputs beside recordValues' (small [width] tensors are copied: streamed
// forwards reuse their buffers per layer).
inline void recordResidual(LayerCapture& c, const at::Tensor& residual, const at::Tensor& outBias,
                           AttentionResidual::Norm norm = AttentionResidual::Norm::None, bool rms = false,
                           const at::Tensor& weight = {}, const at::Tensor& normBias = {}, double eps = 0) {
    const auto vec = [](const at::Tensor& t) {
        return t.defined() ? t.to(at::kCPU, at::kFloat, false, true).reshape({-1}) : at::Tensor();
    };
    AttentionResidual& r = c.residual;
    const auto type = captureType();
    r.residual = type ? residual.to(*type) : residual;
    r.bias = vec(outBias);
    r.norm = norm;
    r.rms = rms;
    r.weight = vec(weight);
    r.normBias = vec(normBias);
    r.eps = eps;
}

struct BlockCapture {
    std::vector<LayerCapture> layers;
};

struct Trace::Impl {
    std::vector<std::int64_t> ids;
    std::vector<std::string> tokens;
    std::vector<std::string> displayTokens;  // readable labels; empty means "same as tokens"
    std::vector<BlockInfo> infos;            // parallel to blocks
    std::vector<BlockCapture> blocks;
    std::vector<float> nextTokenLogits;
    std::vector<std::string> classLabels;
    std::vector<float> classProbabilities;
    std::vector<std::int64_t> outputIds;
    std::vector<std::string> outputTokens;
    std::vector<float> targetLogProbs;  // Trace::targetLogProbs
    std::vector<float> finalHidden;     // [tokens, finalHiddenWidth] float32, CPU (Trace::finalHidden)
    int finalHiddenWidth = 0;
    TokenPredictions tokenPredictions;  // Trace::tokenPredictions
    // The input beyond ids, when it was given (Model::rerun runs it again).
    std::shared_ptr<const TextInput> textInput;
    std::shared_ptr<const RgbImage> imageInput;
    c10::Device device = c10::Device(c10::kCPU);
    bool mapsOnly = false;  // Trace::mapsOnly
    std::string source;     // Trace::source
    // Decoders asked for them (RunOptions): the residual stream entering each block, then the
    // final one, [tokens, hidden] each; the final residual's parts at one position; the readout.
    std::vector<at::Tensor> residuals;
    ResidualParts parts;
    std::shared_ptr<const Readout> readout;

    // Mixture-of-experts decoders: every layer's router (traceRouter); last, so the members above
    // keep their offsets.
    RouterTrace router;
    // DeBERTa v2/v3 with RunOptions::scoreTerms: every layer's score terms (traceScoreTerms).
    ScoreTerms scoreTerms;
    // Image–text models (CLIP, SigLIP): the similarity and the patch contributions (traceImageText).
    ImageTextScore imageText;

    // [queries, keys] probabilities on the trace's device, float32.
    at::Tensor mapTensor(int block, int layer, int head, const MapOptions& options) const;
};

}  // namespace attnscope
