// GGUF files for tests, written from the GGUF specification (ggml's docs/gguf.md) and the GGML
// block layouts (ggml-common.h), independently of core's reader: a metadata/tensor writer, the
// quantisers of each supported block type (simple absmax / min-max schemes: any valid block is
// a valid test), a plain per-element dequantiser, and Hugging Face checkpoints converted to GGUF
// as llama.cpp's convert_hf_to_gguf.py does (names, Q/K row permutation for llama, Gemma's +1).
#pragma once

#include "family_fixtures.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope::testing {

// ggml type ids used here.
enum class Ggml : std::uint32_t { F32 = 0, F16 = 1, Q4_0 = 2, Q8_0 = 8, Q4_K = 12, Q5_K = 13, Q6_K = 14, BF16 = 30 };
const char* ggmlName(Ggml type);
int ggmlBlock(Ggml type);  // elements per block

// Stored bytes of `values` (a whole number of blocks) in `type`.
std::vector<std::uint8_t> quantise(const std::vector<float>& values, Ggml type);
// Plain per-element decoding of those bytes (count elements).
std::vector<float> dequantisePlain(const std::vector<std::uint8_t>& bytes, Ggml type, std::size_t count);

class GgufBuilder {
public:
    void u32(const std::string& key, std::uint32_t v);
    void i32(const std::string& key, std::int32_t v);
    void u64(const std::string& key, std::uint64_t v);
    void f32(const std::string& key, float v);
    void boolean(const std::string& key, bool v);
    void str(const std::string& key, const std::string& v);
    void strings(const std::string& key, const std::vector<std::string>& v);
    void f32s(const std::string& key, const std::vector<float>& v);
    void i32s(const std::string& key, const std::vector<std::int32_t>& v);
    // A raw pair: type id and value bytes as given (for malformed files).
    void raw(const std::string& key, std::uint32_t type, const std::vector<std::uint8_t>& value);

    // A tensor of PyTorch shape `shape` (outermost first) quantised to `type`.
    void tensor(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<float>& values,
                Ggml type = Ggml::F32);
    // A tensor given as file fields (dims innermost first, any type id, offset set by write
    // unless `offset` >= 0) and bytes.
    void rawTensor(const std::string& name, const std::vector<std::uint64_t>& dims, std::uint32_t type,
                   std::vector<std::uint8_t> bytes, std::int64_t offset = -1);

    // The file's bytes: version, the alignment its data is laid out at (general.alignment is
    // written only when set with u32).
    std::vector<std::uint8_t> bytes(std::uint32_t version = 3, std::uint64_t alignment = 32) const;
    void write(const std::filesystem::path& path, std::uint32_t version = 3, std::uint64_t alignment = 32) const;

private:
    struct Tensor {
        std::string name;
        std::vector<std::uint64_t> dims;
        std::uint32_t type;
        std::vector<std::uint8_t> data;
        std::int64_t offset;
    };
    std::vector<std::uint8_t> meta_;
    std::uint64_t metaCount_ = 0;
    std::vector<Tensor> tensors_;
};

// A Hugging Face checkpoint (family_fixtures / fixtures_gemma) as a GGUF file: tensors renamed,
// 2-D ones stored as `type` (1-D ones F32), llama's Q/K rows permuted, Gemma's norms + 1, the
// metadata from its config. `arch` is general.architecture (llama, qwen2, qwen3, gemma, gemma2,
// gemma3, phi3).
GgufBuilder ggufFromCheckpoint(const Checkpoint& c, const std::string& arch, Ggml type);
// The same checkpoint with every 2-D tensor replaced by its `type`-quantised values as decoded
// by dequantisePlain: what the GGUF file holds, in float32 and Hugging Face's layout.
Checkpoint dequantisedCheckpoint(const Checkpoint& c, Ggml type);

// llama.cpp's row permutation of a Q or K weight [rows, cols] (cols = 1 for a bias) over `heads`.
std::vector<float> permuteRows(const std::vector<float>& v, std::int64_t rows, std::int64_t cols, int heads);

}  // namespace attnscope::testing
