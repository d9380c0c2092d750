// Random checkpoints of the BERT, Llama and ViT families for tests: the real Hugging Face tensor
// names and shapes, deterministic weights, written as one model.safetensors or as shards with
// model.safetensors.index.json, in F32, F16 or BF16.
#pragma once

#include "attnscope/io/safetensors.h"
#include "gpt2_fixture.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <random>

namespace attnscope::testing {

// A checkpoint: config.json and tensors by full name (values already rounded to the dtype).
struct Checkpoint {
    nlohmann::json config;
    std::map<std::string, Tensor> tensors;
    const Tensor& get(const std::string& name) const { return tensors.at(name); }
};

struct WriteOptions {
    std::string dtype = "F32";       // F32, F16 or BF16
    int shards = 1;                  // > 1: model-0000i-of-0000N.safetensors + model.safetensors.index.json
    std::vector<TensorBytes> extra;  // written as given into the first file (buffers such as I64 position_ids)
};

// Rounds every value to the dtype (so references see what the model reads).
void roundTensors(Checkpoint& c, const std::string& dtype);
// Writes config.json and the weights into dir (created).
void writeCheckpoint(const std::filesystem::path& dir, const Checkpoint& c, const WriteOptions& options = {});

// ---- Llama family ---------------------------------------------------------------------------
struct LlamaSpec {
    std::string type = "llama";                                                                // llama, mistral, qwen2
    int vocab = 48, hidden = 32, inner = 40, layers = 2, heads = 4, kvHeads = 2, headDim = 0;  // 0: hidden/heads
    int positions = 64;
    double theta = 10000.0, eps = 1e-6;
    nlohmann::json ropeScaling;   // null or {"rope_type": ..., ...}
    bool ropeParameters = false;  // write theta and scaling as the newer rope_parameters object
    bool tied = false;
    bool qkvBias = false;       // q/k/v biases (always written for qwen2)
    int window = 0;             // mistral sliding_window (0 = null)
    bool randomWeights = true;  // false: a fixed pattern (where only the shapes matter; much quicker to make)
};
Checkpoint makeLlama(const LlamaSpec& spec, unsigned seed);
int llamaHeadDim(const LlamaSpec& spec);

// ---- BERT family ----------------------------------------------------------------------------
struct BertSpec {
    std::string type = "bert";  // bert, roberta, distilbert
    int vocab = 50, hidden = 24, inner = 48, layers = 2, heads = 3, positions = 40, typeVocab = 2;
    int pad = 1;              // roberta's pad_token_id
    bool prefix = true;       // names start with "bert." / "roberta." / "distilbert."
    bool legacyNorm = false;  // LayerNorm.gamma / .beta (BERT only)
    std::string activation = "gelu";
    // > 0: a sequence classification head with this many classes ("class0", ...): BERT's pooler
    // and classifier, RoBERTa's classifier.dense / out_proj, DistilBERT's pre_classifier and classifier.
    int labels = 0;
};
Checkpoint makeBert(const BertSpec& spec, unsigned seed);

// ---- ViT ------------------------------------------------------------------------------------
struct VitSpec {
    int hidden = 24, inner = 48, layers = 2, heads = 3, imageSize = 16, patch = 4, labels = 5;
    bool prefix = true;  // "vit." (ViTForImageClassification)
};
Checkpoint makeVit(const VitSpec& spec, unsigned seed);

// ---- Independent references (double precision, plain loops) --------------------------------
struct Reference {
    // probs[l][h][i * m + j]: attention of query i on key j.
    std::vector<std::vector<std::vector<double>>> probs;
    std::vector<double> logits;               // next-token logits (Llama) or class logits (ViT)
    std::vector<std::vector<double>> hidden;  // BERT, ViT: final hidden states [n][hidden] (ViT: after its LayerNorm)
    // Hooks for the logit lens, DLA and patching: residuals[l][i] the stream entering block l, then
    // the final one before the final norm (Llama, GPT-NeoX, the RMS families; BERT, ViT, OPT: the
    // entering streams only); Llama: headOut[l][h][i] head h's context through its columns of
    // o_proj; Llama, GPT-NeoX, the RMS families: contexts[l][i] the heads' outputs before the
    // output projection, mlpOut[l][i] what the MLP adds (after any post-norm).
    std::vector<std::vector<std::vector<double>>> residuals, mlpOut, contexts;
    std::vector<std::vector<std::vector<std::vector<double>>>> headOut;
    // Llama, BERT, ViT, GPT-NeoX, OPT, the RMS families: values[l][j]: the value projection of what layer l's heads
    // read (x̃_j), [kvHeads · headDim]
    std::vector<std::vector<std::vector<double>>> values;
};

Reference referenceLlama(const Checkpoint& c, const LlamaSpec& spec, const std::vector<long long>& ids);
// The same, with contextHook(layer, context) called on each layer's heads' outputs before o_proj
// (context[i] = [heads · head_dim], head h at h·d..), which it may change (activation patching);
// Reference::contexts records them as used.
using ContextHook = std::function<void(int, std::vector<std::vector<double>>&)>;
Reference referenceLlama(const Checkpoint& c, const LlamaSpec& spec, const std::vector<long long>& ids,
                         const ContextHook& contextHook);
// typeIds / attend empty = all 0 / all 1. maskHeads: {layer, head} pairs whose attention output
// is zeroed before the output projection (RunOptions::maskHeads).
Reference referenceBert(const Checkpoint& c, const BertSpec& spec, const std::vector<long long>& ids,
                        const std::vector<long long>& typeIds = {}, const std::vector<int>& attend = {},
                        const std::vector<std::pair<int, int>>& maskHeads = {});
// pixels: [3][size][size] already preprocessed (channels first).
Reference referenceVit(const Checkpoint& c, const VitSpec& spec, const std::vector<double>& pixels);

}  // namespace attnscope::testing
