// Rotary position embeddings as the Llama family uses them (rotate-half pairing: dimension i is
// paired with i + d/2), with the inverse frequencies of the config's rope scaling.
#pragma once

#include "io/json_util.h"

#include <ATen/ATen.h>

#include <vector>

namespace attnscope {

// Inverse frequencies inv_freq[i] = theta^(-2i/d), i < d/2, adjusted for rope_scaling (types
// "default", "linear", "llama3"). Reads rope_theta and rope_scaling, or the newer
// rope_parameters object ({"rope_type", "rope_theta", "factor", ...}); other types are errors
// naming the key.
std::vector<double> ropeInverseFrequencies(const JsonConfig& config, int headDim);

// cos and sin [n, d] float32 for positions 0..n-1: angle(p, i) = p · inv_freq[i mod d/2].
struct RopeTables {
    at::Tensor cos, sin;
};
RopeTables ropeTables(const std::vector<double>& invFreq, std::int64_t n, const c10::Device& device);

// x [heads, n, d] rotated: x·cos + rotate_half(x)·sin, rotate_half(x) = [-x2, x1]. The tables
// are cast to x's dtype.
at::Tensor applyRope(const at::Tensor& x, const RopeTables& tables);

}  // namespace attnscope
