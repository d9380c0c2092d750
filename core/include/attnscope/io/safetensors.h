// safetensors files (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length N, N bytes of UTF-8 JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {str: str}}, then the data section. Offsets are relative to the data section.
//
// SafetensorsFile maps the file read-only and validates it like the reference implementation
// before any tensor is read. No torch here: the bytes are handed out as pointers into the map.
// Thread-safety: a SafetensorsFile is immutable after open(); share it freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// Weights are F32, F16 or BF16. I64 is read too because older checkpoints store buffers such
// as BERT's embeddings.position_ids with it; no family uses them as weights.
enum class DType { F32, F16, BF16, I64 };

const char* dtypeName(DType);                                     // "F32", "F16", "BF16", "I64"
std::size_t dtypeSize(DType);                                     // bytes per element
std::string shapeString(const std::vector<std::int64_t>& shape);  // "[4, 8]", "[]" for a scalar

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;  // empty = scalar
    std::uint64_t begin = 0;          // byte offsets into the data section, end exclusive
    std::uint64_t end = 0;

    std::int64_t numel() const;
};

class SafetensorsFile {
public:
    // Throws attnscope::Error naming the file (and tensor) on any violation.
    static std::shared_ptr<const SafetensorsFile> open(const std::filesystem::path& path);

    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::filesystem::path& path() const { return path_; }
    // Sorted by data offset.
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* find(std::string_view name) const;  // nullptr when absent
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    // Pointer to the tensor's first byte inside the read-only mapping; valid while this lives.
    const std::byte* data(const TensorInfo& t) const;
    std::uint64_t fileSize() const { return size_; }

private:
    SafetensorsFile() = default;
    std::filesystem::path path_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, std::size_t> index_;
    std::map<std::string, std::string> metadata_;
    const std::byte* map_ = nullptr;
    std::uint64_t size_ = 0;
    std::uint64_t dataStart_ = 0;
};

// One tensor to write: raw little-endian bytes of shape's numel × dtypeSize(dtype).
struct TensorBytes {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;
    std::vector<std::byte> bytes;
};

// Writes a valid safetensors file (tensors in the given order, header padded to 8 bytes).
// Writes to a temporary file and renames it, so a failure never leaves a half-written file.
void writeSafetensors(const std::filesystem::path& path, const std::vector<TensorBytes>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace attnscope
