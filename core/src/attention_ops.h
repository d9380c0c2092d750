// The attention probability computation shared by the forward pass and Trace::map, so that a
// map recomputed from a Trace is the model's own map.
#pragma once

#include <ATen/ATen.h>

namespace attnscope {

// Which keys each query may see. Kept as a description, not an [n, m] tensor, so a Trace holds
// O(n) mask state however long the input.
struct MaskSpec {
    bool causal = false;    // query i sees keys j <= i + (m - n)
    at::Tensor keyAllowed;  // optional [m] bool: padding mask over keys
};

// Additive mask [n, m]: 0 where allowed, -inf where not. Undefined tensor when nothing is masked.
at::Tensor additiveMask(const MaskSpec& mask, std::int64_t n, std::int64_t m, const at::TensorOptions& options);

// Probabilities softmax(q kᵀ · scale / temperature + mask) for all heads.
// q [H, n, d]; k [Hkv, m, d] with H a multiple of Hkv (grouped-query attention: query head h
// uses key group h / (H / Hkv)); additive [n, m] from additiveMask(), or undefined for none.
// Returns [H, n, m] in q's dtype and device.
at::Tensor attentionProbs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& additive, double scale,
                          double temperature);

// One head: q [n, d], k [m, d] -> [n, m]. Uses the fused CUDA kernel when the tensors are on a
// GPU and the kernels were compiled in.
at::Tensor headProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, double scale,
                     double temperature);

}  // namespace attnscope
