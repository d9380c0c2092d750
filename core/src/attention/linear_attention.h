// Linear attention output (Katharopoulos et al. 2020) in O(n·f·dv) time, for models and
// benchmarks. The map itself (n×n) is linearProbs / favorProbs; this is the attention output
// that never forms it.
#pragma once

#include "attention_ops.h"

#include <ATen/ATen.h>

namespace attnscope {

// out_i = Σ_{j allowed} (φq_i·φk_j) v_j / Σ_{j allowed} φq_i·φk_j, a row with a zero denominator
// giving 0. phiQ [H, n, f], phiK [H, m, f] (features, >= 0), v [H, m, dv]; returns [H, n, dv].
// Non-causal: S = φKᵀV and z = Σ_j φk_j once. Causal (keys j <= i + m - n, m >= n): chunks of
// `chunk` queries, each against the running prefix state (S, z) of all earlier keys plus a
// lower-triangular chunk×chunk product inside the chunk: O(n·chunk·f + n·f·dv) time,
// O(chunk² + f·dv) memory per head. keyAllowed zeroes padded keys' features. On a GPU with
// float32 tensors and m = n the causal case runs the prefix-sum kernel (core/cuda).
at::Tensor linearAttention(const at::Tensor& phiQ, const at::Tensor& phiK, const at::Tensor& v, const MaskSpec& mask,
                           std::int64_t chunk = 64);

}  // namespace attnscope
