// The attention probability computation shared by the forward pass and Trace::map, so that a
// map recomputed from a Trace is the model's own map.
#pragma once

#include "attnscope/attention/run_options.h"
#include "attnscope/attention/trace.h"

#include <ATen/ATen.h>

#include <string>

namespace attnscope {

// Which keys each query may see. Kept as a description, not an [n, m] tensor, so a Trace holds
// O(n) mask state however long the input.
struct MaskSpec {
    bool causal = false;    // query i sees keys j <= i + (m - n)
    at::Tensor keyAllowed;  // optional [m] bool: padding mask over keys
    std::int64_t window = 0;  // sliding window (Mistral): query i sees keys j > i + (m - n) - window; 0 = none
};

// Additive mask [n, m]: 0 where allowed, -inf where not. Undefined tensor when nothing is masked.
at::Tensor additiveMask(const MaskSpec& mask, std::int64_t n, std::int64_t m, const at::TensorOptions& options);

// Probabilities softmax(q kᵀ · scale / temperature + mask) for all heads.
// q [H, n, d]; k [Hkv, m, d] with H a multiple of Hkv (grouped-query attention: query head h
// uses key group h / (H / Hkv)); additive [n, m] from additiveMask(), or undefined for none.
// Returns [H, n, m] on q's device, in q's dtype for float32 (the softmax of F16/BF16 scores is
// taken in float32 and returned as float32, as Hugging Face's eager attention does).
at::Tensor attentionProbs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& additive, double scale,
                          double temperature);

// One head: q [n, d], k [m, d] -> [n, m]. Uses the fused CUDA kernel when the tensors are on a
// GPU and the kernels were compiled in.
at::Tensor headProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, double scale,
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
    double temperature = 1.0;       // inside the softmax
    std::vector<int> maskedHeads;   // heads whose output is zeroed
};
LayerRun layerRun(const RunOptions& options, const std::string& block, int layer);

// Dot-product attention output with capture-compatible semantics: probabilities from
// attentionProbs (GQA-aware) at run.temperature, context = probs · v with v [Hkv, m, dv] (probs
// cast to v's dtype),
// masked heads zeroed. Returns [H, n, dv].
at::Tensor attendDot(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& additive,
                     double scale, const LayerRun& run);

// Zeroes the masked heads of a context [H, n, dv] in place.
void zeroMaskedHeads(at::Tensor& context, const LayerRun& run);

}  // namespace attnscope
