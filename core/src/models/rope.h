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
    // Types whose frequencies depend on the sequence length n (ropeTables picks them):
    //   "dynamic" (NTK): n > maxPositions recomputes theta' = theta·(factor·n/maxPositions − (factor−1))^(r/(r−2));
    //   "longrope": n > originalPositions uses longInvFreq instead of invFreq (the short factors).
    double theta = 10000.0;
    double dynamicFactor = 1.0;
    std::int64_t maxPositions = 0;
    std::int64_t originalPositions = 0;
    std::vector<double> longInvFreq;
    // The inverse frequencies for a sequence of n tokens.
    std::vector<double> frequenciesFor(std::int64_t n) const;
};

// Where a family keeps theta: the key and its default (GPT-NeoX: rotary_emb_base).
struct RopeKeys {
    const char* theta = "rope_theta";
    double defaultTheta = 10000.0;
    // longrope: the pretrained context when config.json has no original_max_position_embeddings
    // (Phi-3's configuration defaults it to 4096); 0 = fall back to max_position_embeddings.
    int defaultOriginalPositions = 0;
};

// inv_freq[i] = theta^(-2i/rotaryDim), i < rotaryDim/2, adjusted for rope_scaling as Hugging
// Face's modeling_rope_utils does (types "default", "linear", "dynamic", "yarn", "longrope",
// "llama3"). Reads theta and rope_scaling, or the newer rope_parameters object ({"rope_type",
// "rope_theta", "factor", ...}); dynamic, yarn and longrope also read max_position_embeddings.
// Other types are errors naming the key, the type and the file.
RopeSpec readRope(const JsonConfig& config, int rotaryDim, bool interleaved = false, RopeKeys keys = {});

// Rotate-half rotary on rotaryDim dimensions with plain frequencies theta^(-2i/rotaryDim) (type "default").
RopeSpec plainRope(double theta, int rotaryDim);

// cos and sin [n, rotaryDim] float32 for positions 0..n-1 (angle(p, i) = p · frequenciesFor(n)[i], laid
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
