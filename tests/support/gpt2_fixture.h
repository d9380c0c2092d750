// Random GPT-2 checkpoints for tests: real tensor names and shapes, deterministic weights.
#pragma once

#include "attnscope/io/safetensors.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace attnscope::testing {

struct Gpt2Spec {
    int vocab = 40;
    int positions = 24;
    int embd = 16;
    int heads = 4;
    int layers = 2;
    double eps = 1e-5;
    std::string activation = "gelu_new";
    bool prefix = true;         // names start with "transformer."
    bool untiedHead = false;    // write a separate lm_head.weight
    bool legacyBuffers = true;  // write attn.bias / attn.masked_bias like old checkpoints
    bool vocabJson = true;      // write vocab.json with labels "t0", "t1", ...
    std::string dtype = "F32";  // storage dtype: F32, F16 or BF16 (values are rounded to it)
};

struct Tensor {
    std::vector<std::int64_t> shape;
    std::vector<float> values;
};

struct Gpt2Checkpoint {
    Gpt2Spec spec;
    std::map<std::string, Tensor> tensors;  // names without the "transformer." prefix

    const Tensor& get(const std::string& name) const { return tensors.at(name); }
};

Gpt2Checkpoint makeGpt2(const Gpt2Spec& spec, unsigned seed = 1);

// IEEE half and bfloat16 encodings (round to nearest even) and back, for F16/BF16 checkpoints.
std::uint16_t toHalf(float value);
float fromHalf(std::uint16_t bits);
std::uint16_t toBFloat16(float value);
float fromBFloat16(std::uint16_t bits);
// value stored as dtype ("F32", "F16" or "BF16") and read back.
float roundTo(float value, const std::string& dtype);

// Normal values: offset + scale · N(0, 1), shape's element count of them.
Tensor randomTensor(std::vector<std::int64_t> shape, std::mt19937& rng, float scale, float offset = 0.f);
// `name` with t's shape and values encoded as dtype (F32, F16 or BF16).
TensorBytes encodeTensor(const std::string& name, const Tensor& t, const std::string& dtype);

// Writes config.json, model.safetensors and (optionally) vocab.json into dir (created).
void writeGpt2Folder(const std::filesystem::path& dir, const Gpt2Checkpoint& checkpoint);

// A random GPT-2 checkpoint (seeded) over the pruned GPT-2 vocabulary of tests/data/tokenizers
// (8,257 ids, no vocab.json) with that folder's tokenizer.json copied in: a GPT-2 folder the
// way Hugging Face ships one, for the tokenizer tests.
void writeGpt2TokenizerFolder(const std::filesystem::path& dir, const std::filesystem::path& tokenizerJson,
                              std::uint32_t seed);

// Writes the config.json only (for config validation tests), from a JSON text.
void writeText(const std::filesystem::path& file, const std::string& text);

// A fresh, empty directory under the system temp dir, unique per call.
std::filesystem::path freshDir(const std::string& name);

}  // namespace attnscope::testing
