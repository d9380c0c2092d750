// FAVOR+ (Choromanski et al., "Rethinking Attention with Performers", 2021): positive
// orthogonal random features whose inner products estimate the softmax kernel.
#pragma once

#include "attention_ops.h"

#include <ATen/ATen.h>

#include <cstdint>

namespace attnscope {

// ω [m, d], float32 on the CPU: ⌈m/d⌉ blocks of d mutually orthogonal rows (Gram-Schmidt on
// Gaussian blocks), each row then rescaled to the norm of an independent N(0, I_d) sample, so
// that every row is marginally N(0, I_d) and rows within a block are orthogonal ("orthogonal
// random features"; lower variance than iid). Deterministic in (d, m, seed): own generator
// (splitmix64 + Box-Muller), identical on every platform. Cached per (d, m, seed).
at::Tensor favorFeatures(std::int64_t d, std::int64_t m, std::uint64_t seed);

// φ(x) = exp(ωx - ‖x‖²/2) / √m has E[φ(x)·φ(y)] = exp(x·y). The map for one head uses
// x = √scale·q, y = √scale·k (scale includes 1/temperature), so that it estimates
// softmax(q·k·scale + mask) row by row: A_ij = φ(q_i)·φ(k_j) / Σ_allowed φ(q_i)·φ(k_j').
// Constant factors per query and over all keys cancel in that normalisation and are used to
// keep exp() in range. q [n, d], k [m, d]; returns [n, m] on q's device. Throws
// attnscope::Error for features < 1.
at::Tensor favorProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, double scale, int features,
                      std::uint64_t seed);

// φ for a whole [.., n, d] tensor with the given ω [m, d] (already on x's device and dtype) and
// a per-row stabiliser: exp(ωx - ‖x‖²/2 - max over the row) (queries) or - max over all rows
// (keys, rowwiseMax false).
at::Tensor favorFeatureMap(const at::Tensor& x, const at::Tensor& omega, bool rowwiseMax);

}  // namespace attnscope
