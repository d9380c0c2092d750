// Random checkpoints of the mixture-of-experts decoders (mixtral, qwen2_moe, olmoe) with Hugging
// Face's tensor names and config keys, in the Hub's per-expert layout or the fused one newer
// transformers writes, and their independent double-precision forward (reference_moe.cpp: plain
// loops written from modeling_mixtral.py, modeling_qwen2_moe.py and modeling_olmoe.py, nothing
// shared with core).
#pragma once

#include "family_fixtures.h"

namespace attnscope::testing {

struct MoeFamilySpec {
    std::string type = "mixtral";                                                 // mixtral, qwen2_moe, olmoe
    int vocab = 48, hidden = 32, inner = 40, layers = 3, heads = 4, kvHeads = 2;  // head_dim = hidden / heads
    int positions = 64;
    double eps = 1e-5;
    double theta = 10000.0;  // written as rope_theta unless 0 (then the family's default: Mixtral's 1e6)
    bool tied = false;
    int experts = 4, topK = 2;
    bool normTopK = false;  // qwen2_moe, olmoe: norm_topk_prob (Mixtral always renormalises)
    // qwen2_moe: moe_intermediate_size, shared_expert_intermediate_size, decoder_sparse_step, mlp_only_layers
    int moeInner = 24, sharedInner = 20, sparseStep = 1;
    std::vector<int> mlpOnly;
    int window = 0;            // mixtral: sliding_window (0 = null)
    double clipQkv = 0;        // olmoe: clip_qkv (0 = null)
    float routerScale = 1.0f;  // the routers' weights (large: clear top-k choices)
};

// Whether layer l of `spec` routes (Qwen2-MoE's dense layers do not).
bool moeRouted(const MoeFamilySpec& spec, int l);
// The per-expert layout (block_sparse_moe.experts.N.w1/w3/w2 for Mixtral, mlp.experts.N.gate_proj/
// up_proj/down_proj for the others).
Checkpoint makeMoeFamily(const MoeFamilySpec& spec, unsigned seed);
// The same weights in the fused layout: LAYER.mlp.gate.weight, LAYER.mlp.experts.gate_up_proj
// [E, 2I, D] (gate rows, then up rows) and LAYER.mlp.experts.down_proj [E, D, I], as transformers'
// conversion_mapping.py merges them.
Checkpoint fuseMoeExperts(const Checkpoint& perExpert, const MoeFamilySpec& spec);

struct MoeReference {
    Reference ref;  // maps and next-token logits
    // Per layer: router probabilities [token][expert] (the softmax over all experts) and the
    // chosen experts [token][rank], empty for dense layers.
    std::vector<std::vector<std::vector<double>>> router;
    std::vector<std::vector<std::vector<int>>> chosen;
};
MoeReference referenceMoeFamily(const Checkpoint& perExpert, const MoeFamilySpec& spec,
                                const std::vector<long long>& ids);

}  // namespace attnscope::testing
