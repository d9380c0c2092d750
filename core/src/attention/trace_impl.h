// Trace internals, for model families that build Traces and for core code that reads them.
#pragma once

#include "attention_ops.h"
#include "readout.h"
#include "attnscope/attention/trace.h"
#include "attnscope/io/input.h"
#include "runtime/capture_type.h"

#include <ATen/ATen.h>

#include <vector>

namespace attnscope {

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

    // [queries, keys] probabilities on the trace's device, float32.
    at::Tensor mapTensor(int block, int layer, int head, const MapOptions& options) const;
};

}  // namespace attnscope
