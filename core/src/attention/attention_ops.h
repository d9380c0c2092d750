// The attention probability computation shared by the forward pass and Trace::map, so that a
// map recomputed from a Trace is the model's own map.
#pragma once

#include "attnscope/attention/run_options.h"
#include "attnscope/attention/trace.h"

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace attnscope {

// Which keys each query may see. Kept as a description, not an [n, m] tensor, so a Trace holds
// O(n) mask state however long the input.
struct MaskSpec {
    bool causal = false;      // query i sees keys j <= i + (m - n)
    at::Tensor keyAllowed;    // optional [m] bool: padding mask over keys
    std::int64_t window = 0;  // sliding window (Mistral): query i sees keys j > i + (m - n) - window; 0 = none
    // Optional [n, m] bool on the logits' device: cells knocked out (attention knockout, logits
    // -inf before the softmax), on top of the limits above.
    at::Tensor blocked;
};

// How one layer turns q·k into its pre-mask logits (the model's own, before temperature and mask):
//   logits_ij = cap(scale · q_i·k_j) + slope_h · j + bias_hij,   cap(x) = softcap · tanh(x / softcap).
// ALiBi is written with the key position j; Hugging Face's BLOOM and Falcon form differs from it
// by a constant per row, which the softmax removes.
struct ScoreSpec {
    double scale = 1.0;
    double softcap = 0.0;             // > 0: tanh soft-cap (Gemma-2's attn_logit_softcapping)
    std::vector<double> alibiSlopes;  // empty, or one per query head (BLOOM, Falcon with alibi)
    // Undefined, or [H, n, m] in the logits' dtype and device: an additive per-head bias (T5's
    // relative position bias). Layers may share one tensor.
    at::Tensor bias;

    bool plain() const { return softcap <= 0 && alibiSlopes.empty() && !bias.defined(); }  // logits = scale · q·k
    // What the logits carry beyond the scaled product, for messages ("a tanh soft-cap", "ALiBi"); "" when plain.
    std::string extras() const;
};

// Additive mask [n, m]: 0 where allowed, -inf where not. Undefined tensor when nothing is masked.
at::Tensor additiveMask(const MaskSpec& mask, std::int64_t n, std::int64_t m, const at::TensorOptions& options);

// Probabilities softmax(logits / temperature + mask) for all heads, logits as ScoreSpec says.
// q [H, n, d]; k [Hkv, m, d] with H a multiple of Hkv (grouped-query attention: query head h
// uses key group h / (H / Hkv)); additive [n, m] from additiveMask(), or undefined for none;
// score.alibiSlopes, when given, has H entries.
// Returns [H, n, m] on q's device, in q's dtype for float32 (the softmax of F16/BF16 scores is
// taken in float32 and returned as float32, as Hugging Face's eager attention does).
// keyStart: the position of k's first key (ALiBi's j), when k is a span of the layer's keys.
at::Tensor attentionProbs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& additive, const ScoreSpec& score,
                          double temperature, std::int64_t keyStart = 0);

// One head, query head `head` of the layer (it picks the ALiBi slope): q [n, d], k [m, d] -> [n, m].
// On the CPU computed in blocks of query rows over the keys each block may see
// (blocked_attention.h; no [n, m] mask); on a GPU the fused CUDA kernel when it was compiled in
// and the logits are plain.
at::Tensor headProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, const ScoreSpec& score, int head,
                     double temperature);

// One head's logits as ScoreSpec defines them, divided by temperature, with the mask's -inf added:
// q [n, d], k [m, d] -> [n, m] (what headProbs softmaxes; the sparse kinds keep a subset of it).
at::Tensor headLogits(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, const ScoreSpec& score, int head,
                      double temperature);

// Linear attention map for one head: φ(q)·φ(k) over allowed keys, each row normalised to sum 1.
// q [n, d], k [m, d] unscaled; φ is elu+1 or relu (FAVOR+ lives with the lab code).
at::Tensor linearProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, FeatureMap featureMap);
at::Tensor featureMap(const at::Tensor& x, FeatureMap map);  // elu+1 or relu
// The linear map from features φq [n, f], φk [m, f] (>= 0): φq·φk over allowed keys, rows
// normalised; causal inputs compute only the products below the diagonal.
at::Tensor linearMapFromFeatures(const at::Tensor& phiQ, const at::Tensor& phiK, const MaskSpec& mask);
// Non-negative scores [n, m] -> zero where the mask forbids, rows divided by their sums (a row
// that sums to 0 stays 0), in place; no [n, m] mask tensor is built.
at::Tensor normaliseAllowed(at::Tensor scores, const MaskSpec& mask);

// Additive (Bahdanau) map for one head: softmax(vᵀ tanh(qa_i + ka_j) / T + mask), computed in
// query blocks so that no [n, m, width] tensor is materialised. qa [n, w], ka [m, w], v [w].
at::Tensor additiveProbs(const at::Tensor& qa, const at::Tensor& ka, const at::Tensor& v, const MaskSpec& mask,
                         double temperature);

// What RunOptions asks of one layer of one block during a forward pass.
struct LayerRun {
    double temperature = 1.0;      // inside the softmax
    std::vector<int> maskedHeads;  // heads whose output is zeroed
    bool captureValues = false;    // RunOptions::captureValues
    // Gradient sources (analysis/gradient_sources.h): when set, attendDot takes the whole-score
    // path and appends the layer's α [H, n, m] (the tensor that multiplies V, its gradient
    // retained when it has one). Not owned.
    std::vector<at::Tensor>* alphas = nullptr;
    // RunOptions::linearHeads of this layer (the last entry per head), not owned: attendDot
    // replaces their softmax by the learned linear map (learned_features.h).
    std::vector<const LinearHead*> linearHeads;
};
LayerRun layerRun(const RunOptions& options, const std::string& block, int layer);

// The cells RunOptions::knockouts blocks in `layer` of a causal self-attention block of n
// positions under `limits` (its causal limit and window): [n, n] bool on `device`, undefined
// where none. Throws attnscope::Error for a position outside 0..n-1 or a query row left with no key.
at::Tensor knockoutCells(const std::vector<Knockout>& knockouts, int layer, std::int64_t n, const MaskSpec& limits,
                         c10::Device device);
// Throws attnscope::Error for a knockout whose layers are outside 0..layers-1 or reversed.
void checkKnockoutLayers(const std::vector<Knockout>& knockouts, int layers);

// Dot-product attention output with capture-compatible semantics: the probabilities headProbs
// gives (GQA-aware) at run.temperature under `mask`, context = probs · v with v [Hkv, m, dv]
// (probs cast to v's dtype), masked heads zeroed. Returns [H, n, dv]. Without gradients (and with
// 16 query rows or more on the CPU) it runs in blocks of query rows and never builds [H, n, m]
// scores or an [n, m] mask
// (blocked_attention.h: on the CPU on every core, on a GPU all heads per block); with gradients
// (training) through attentionProbs.
at::Tensor attendDot(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                     const ScoreSpec& score, const LayerRun& run);

// probs [H, n, m] (cast to v's dtype) · v [Hkv, m, dv] -> [H, n, dv], query head h over key/value
// group h / (H / Hkv).
at::Tensor weightedValues(const at::Tensor& probs, const at::Tensor& v);

// Zeroes the masked heads of a context [H, n, dv] in place.
void zeroMaskedHeads(at::Tensor& context, const LayerRun& run);

}  // namespace attnscope
