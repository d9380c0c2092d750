// Rotary position embeddings: rotate-half (Llama, GPT-NeoX, Phi) or interleaved (GPT-J) pairing,
// full or partial, with the inverse frequencies of the config's rope scaling.
#pragma once

#include "io/json_util.h"

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace attnscope {

// A family's rotary embedding as its config says: which dimensions rotate, how they pair, and the
// frequencies (with rope scaling). Families compute rotaryDim from their own key (rotary_pct,
// rotary_dim, partial_rotary_factor); readRope reads theta and scaling.
struct RopeSpec {
    int rotaryDim = 0;         // the first rotaryDim dimensions of each head rotate; the rest pass through
    bool interleaved = false;  // GPT-J pairs (2i, 2i+1); otherwise rotate-half pairs (i, i + rotaryDim/2)
    std::string type = "default";
    std::vector<double> invFreq;    // rotaryDim/2 inverse frequencies, scaling applied
    double attentionScaling = 1.0;  // multiplies cos and sin
};

// Where a family keeps theta: the key and its default (GPT-NeoX: rotary_emb_base).
struct RopeKeys {
    const char* theta = "rope_theta";
    double defaultTheta = 10000.0;
};

// inv_freq[i] = theta^(-2i/rotaryDim), i < rotaryDim/2, adjusted for rope_scaling (types
// "default", "linear", "llama3"). Reads theta and rope_scaling, or the newer rope_parameters
// object ({"rope_type", "rope_theta", "factor", ...}); other types are errors naming the key.
RopeSpec readRope(const JsonConfig& config, int rotaryDim, bool interleaved = false, RopeKeys keys = {});

// cos and sin [n, rotaryDim] float32 for positions 0..n-1 (angle(p, i) = p · inv_freq[i], laid
// out as the pairing needs), times attentionScaling; with the spec's layout.
struct RopeTables {
    at::Tensor cos, sin;
    int rotaryDim = 0;
    bool interleaved = false;
};
RopeTables ropeTables(const RopeSpec& spec, std::int64_t n, const c10::Device& device);

// x [heads, n, d] with its first rotaryDim dimensions rotated: x·cos + rotate(x)·sin, where
// rotate pairs the dimensions as the tables say (rotate-half: [-x2, x1]; interleaved: each
// (x_2i, x_2i+1) -> (-x_2i+1, x_2i)). The tables are cast to x's dtype.
at::Tensor applyRope(const at::Tensor& x, const RopeTables& tables);

}  // namespace attnscope
