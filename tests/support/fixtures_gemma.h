// Random checkpoints of the RMSNorm decoder families (gemma, gemma2, gemma3_text, qwen3, olmo2,
// phi3) with Hugging Face's tensor names and config keys, and their independent double-precision
// forward (reference_gemma.cpp: plain loops written from the modeling_*.py definitions, nothing
// shared with core).
#pragma once

#include "family_fixtures.h"

#include <utility>

namespace attnscope::testing {

struct RmsFamilySpec {
    std::string type = "gemma";  // gemma, gemma2, gemma3_text, qwen3, olmo2, phi3
    int vocab = 48, hidden = 32, inner = 40, layers = 3, heads = 4, kvHeads = 2;
    int headDim = 12;  // written as head_dim for gemma*/qwen3; olmo2 and phi3 use hidden / heads
    int positions = 64;
    double eps = 1e-6, theta = 10000.0;
    bool tied = true;
    bool prefix = true;          // tensor names under "model." (lm_head.weight never is)
    bool attentionBias = false;  // q/k/v/o biases (not phi3)
    // gemma2 / gemma3_text
    double queryPreAttnScalar = 8;  // written as query_pre_attn_scalar
    double attnSoftcap = 0;         // attn_logit_softcapping (0 = null)
    double finalSoftcap = 0;        // final_logit_softcapping (0 = null)
    int slidingPattern = 0;         // gemma3_text: sliding_window_pattern when > 0 (else HF's 6)
    double localTheta = 10000.0;    // gemma3_text: rope_local_base_freq
    // windows: sliding_window (0 = null) on the layers layer_types marks, or the family's default
    int window = 0;
    nlohmann::json layerTypes;      // null, or the list written as layer_types
    bool useSlidingWindow = false;  // qwen3
    int maxWindowLayers = 28;       // qwen3
    nlohmann::json ropeScaling;     // null or {"rope_type": ..., ...}
    double partialRotary = 1.0;     // phi3: partial_rotary_factor (written when != 1)
    int originalPositions = 0;      // phi3: original_max_position_embeddings (written when > 0)
};

int rmsHeadDim(const RmsFamilySpec& spec);
Checkpoint makeRmsFamily(const RmsFamilySpec& spec, unsigned seed);

// The forward of `spec`'s family on `ids`: every head's map and the next-token logits.
// temperature divides every layer's pre-mask logits (after scale and soft-cap); maskHeads
// ({layer, head}) zeroes those heads' outputs before o_proj.
Reference referenceRmsFamily(const Checkpoint& c, const RmsFamilySpec& spec, const std::vector<long long>& ids,
                             double temperature = 1.0, const std::vector<std::pair<int, int>>& maskHeads = {});

}  // namespace attnscope::testing
