// Random checkpoints of the GPT-NeoX, GPT-J, GPT-Neo and Phi families for tests, with the real
// Hugging Face tensor names and shapes, and their independent double-precision references
// (reference_neox.cpp: plain loops written from the Hugging Face definitions, nothing shared
// with core). Write them with writeCheckpoint (family_fixtures.h) in F32, F16 or BF16, as one
// file or shards.
#pragma once

#include "family_fixtures.h"

#include <utility>
#include <vector>

namespace attnscope::testing {

// What a forward run asks, as RunOptions does: temperature T inside the softmax of the chosen
// layers (empty = all) and heads {layer, head} whose attention output is zeroed.
struct RefOptions {
    double temperature = 1.0;
    std::vector<int> temperatureLayers;
    std::vector<std::pair<int, int>> maskHeads;
};

// ---- GPT-NeoX (Pythia) ----------------------------------------------------------------------
struct NeoxSpec {
    int vocab = 48, hidden = 64, inner = 80, layers = 2, heads = 4, positions = 64;
    double rotaryPct = 0.25, base = 10000.0, eps = 1e-5;
    bool parallel = true;  // use_parallel_residual
    bool bias = true;      // attention_bias (q/k/v and dense biases)
    bool tied = false;     // tie_word_embeddings (no embed_out)
    bool prefix = true;    // names start with "gpt_neox."
    bool newKeys = false;  // write theta and the fraction as rope_theta / partial_rotary_factor only
    std::string activation = "gelu";
};
Checkpoint makeNeox(const NeoxSpec& spec, unsigned seed);
Reference referenceNeox(const Checkpoint& c, const NeoxSpec& spec, const std::vector<long long>& ids,
                        const RefOptions& options = {});

// ---- GPT-J ----------------------------------------------------------------------------------
struct GptjSpec {
    int vocab = 48, hidden = 32, inner = 0, layers = 2, heads = 2, positions = 64;  // inner 0: n_inner null (4·hidden)
    int rotaryDim = 8;
    double eps = 1e-5;
    bool tied = false;   // tie_word_embeddings: lm_head.weight is wte (its bias stays)
    bool prefix = true;  // "transformer."
    std::string activation = "gelu_new";
};
Checkpoint makeGptj(const GptjSpec& spec, unsigned seed);
Reference referenceGptj(const Checkpoint& c, const GptjSpec& spec, const std::vector<long long>& ids,
                        const RefOptions& options = {});

// ---- GPT-Neo --------------------------------------------------------------------------------
struct NeoSpec {
    int vocab = 48, hidden = 32, inner = 0, layers = 4, heads = 4, positions = 64, window = 3;  // inner 0: null
    std::vector<std::string> kinds = {"global", "local"};  // attention_types [[kinds, layers / kinds.size()]]
    double eps = 1e-5;
    bool tied = true;         // tie_word_embeddings (GPT-Neo's default): no lm_head.weight
    bool prefix = true;       // "transformer."
    bool writeLayers = true;  // also write the expanded attention_layers, as Hugging Face saves it
    std::string activation = "gelu_new";
};
Checkpoint makeNeo(const NeoSpec& spec, unsigned seed);
// Layer l is local when spec.kinds[l % kinds.size()] == "local".
Reference referenceNeo(const Checkpoint& c, const NeoSpec& spec, const std::vector<long long>& ids,
                       const RefOptions& options = {});

// ---- Phi ------------------------------------------------------------------------------------
struct PhiSpec {
    int vocab = 48, hidden = 32, inner = 40, layers = 2, heads = 4, kvHeads = 4, positions = 64;
    double partial = 0.5, theta = 10000.0, eps = 1e-5;
    bool qkNorm = false;  // qk_layernorm
    bool tied = false;
    bool prefix = true;  // "model."
    std::string activation = "gelu_new";
};
Checkpoint makePhi(const PhiSpec& spec, unsigned seed);
Reference referencePhi(const Checkpoint& c, const PhiSpec& spec, const std::vector<long long>& ids,
                       const RefOptions& options = {});

}  // namespace attnscope::testing
