// Random OPT, BLOOM and Falcon checkpoints for tests (the real Hugging Face tensor names and
// shapes, deterministic weights; write them with writeCheckpoint) and their independent
// double-precision references (reference_alibi.cpp).
#pragma once

#include "family_fixtures.h"

#include <utility>
#include <vector>

namespace attnscope::testing {

// What the forward is asked beyond the ids (RunOptions' propagated temperature and head masking).
struct AlibiFamilyRun {
    double temperature = 1.0;                    // divides the layer's pre-mask logits
    std::vector<int> temperatureLayers;          // empty = every layer
    std::vector<std::pair<int, int>> maskHeads;  // {layer, head}: that head's output is zeroed
    bool inLayer(int layer) const;
};

// ---- OPT ------------------------------------------------------------------------------------
struct OptSpec {
    int vocab = 48, hidden = 32, inner = 40, layers = 2, heads = 4, positions = 64;
    int projDim = 0;               // word_embed_proj_dim; 0 = hidden (no project_in / project_out)
    bool preNorm = true;           // do_layer_norm_before
    bool removeFinalNorm = false;  // _remove_final_layer_norm
    bool bias = true;              // enable_bias
    bool affine = true;            // layer_norm_elementwise_affine
    bool tied = true;              // false: a separate lm_head.weight
    bool prefix = true;            // "model.decoder." (OPTForCausalLM); false: "decoder." (OPTModel)
    std::string activation = "relu";
};
Checkpoint makeOpt(const OptSpec& spec, unsigned seed);
Reference referenceOpt(const Checkpoint& c, const OptSpec& spec, const std::vector<long long>& ids,
                       const AlibiFamilyRun& run = {});

// ---- BLOOM ----------------------------------------------------------------------------------
struct BloomSpec {
    int vocab = 48, hidden = 36, layers = 2, heads = 6;  // 6 heads: not a power of two
    bool residualAfterNorm = false;                      // apply_residual_connection_post_layernorm
    bool tied = true;
    bool prefix = true;  // "transformer."
};
Checkpoint makeBloom(const BloomSpec& spec, unsigned seed);
Reference referenceBloom(const Checkpoint& c, const BloomSpec& spec, const std::vector<long long>& ids,
                         const AlibiFamilyRun& run = {});

// ---- Falcon ---------------------------------------------------------------------------------
struct FalconSpec {
    std::string type = "falcon";
    int vocab = 48, hidden = 32, layers = 2, heads = 4, positions = 64;
    int kvHeads = 0;          // num_kv_heads (new_decoder_architecture); 0 = not written
    int inner = 0;            // ffn_hidden_size; 0 = not written (4 × hidden)
    int normsInParallel = 0;  // num_ln_in_parallel_attn; 0 = not written
    bool alibi = false, newArch = false, multiQuery = true, parallel = true, bias = false;
    bool tied = true;
    bool prefix = true;       // "transformer."
    bool legacyKeys = false;  // n_head, n_layer, n_head_kv (RefinedWeb configs)
    double theta = 10000.0;
    std::string activation = "gelu";
};
Checkpoint makeFalcon(const FalconSpec& spec, unsigned seed);
Reference referenceFalcon(const Checkpoint& c, const FalconSpec& spec, const std::vector<long long>& ids,
                          const AlibiFamilyRun& run = {});

// Hugging Face's ALiBi slopes (build_alibi_tensor), in double.
std::vector<double> referenceAlibiSlopes(int heads);

}  // namespace attnscope::testing
