// GGUF files (llama.cpp, Ollama, LM Studio), versions 2 and 3, as ggml's docs/gguf.md lays them
// out: "GGUF", version u32, tensor count u64, metadata count u64; metadata key/value pairs (a
// string key, a u32 value type, the value; arrays carry an element type and a u64 count); tensor
// infos (name, n_dims u32, dims u64 innermost first, ggml type u32, offset u64 into the data
// section); the data section at the next multiple of general.alignment (default 32). All numbers
// little-endian.
//
// GgufFile maps the file read-only and validates everything before a tensor is read: every
// count and length against the bytes left, dimension products against overflow, types, alignment,
// offsets and sizes against the file, duplicate names. A malformed file throws one
// attnscope::Error "FILE: what is wrong". Nothing is allocated for a count or a length the rest
// of the file cannot back: decoded metadata takes a small multiple of the bytes it is read from
// (8 bytes per number of an array, a std::string per string, a GgufValue per nested array).
// Immutable after open(); share it freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

// ggml's tensor types (ggml.h's enum ggml_type ids). Every id ggml defines is parsed (its block
// size gives the byte size); dequantiseRows reads those supportedGgmlType() names.
enum class GgmlType : std::uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
    MXFP4 = 39
};
const char* ggmlTypeName(GgmlType type);  // "Q4_K"
// Elements per block and bytes per block; false for an id ggml does not define.
bool ggmlTypeLayout(std::uint32_t id, std::int64_t& blockElements, std::int64_t& blockBytes);
// F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K.
bool supportedGgmlType(GgmlType type);

// Metadata value types (gguf_type).
enum class GgufType : std::uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12
};
const char* ggufTypeName(GgufType type);

// One metadata value. Scalars: integers in `integer` (unsigned ones that fit, U64 above 2^63 is
// kept in `unsignedValue` too), floats in `number`, strings in `text`. Arrays: `element` is the
// element type; numbers (integers, floats and bools) in `numbers`, strings in `strings`, nested
// arrays in `items`.
struct GgufValue {
    GgufType type = GgufType::U32;
    GgufType element = GgufType::U32;
    std::int64_t integer = 0;
    std::uint64_t unsignedValue = 0;
    double number = 0;
    std::string text;
    std::vector<double> numbers;
    std::vector<std::string> strings;
    std::vector<GgufValue> items;
    bool isInteger() const;
    bool isNumber() const;     // an integer or a float
    std::size_t size() const;  // array length (0 for a scalar)
};

// One tensor: shape in PyTorch's order (outermost first, the reverse of the file's dims), so a
// Linear weight [out, in] is stored with dims {in, out}; rows are the innermost dimension.
struct GgufTensor {
    std::string name;
    GgmlType type = GgmlType::F32;
    std::vector<std::int64_t> shape;
    std::uint64_t offset = 0;  // into the data section
    std::uint64_t bytes = 0;
    std::int64_t numel() const;
    std::int64_t rowLength() const { return shape.empty() ? 1 : shape.back(); }
};

class GgufFile {
public:
    // Throws attnscope::Error "FILE: ..." for anything malformed (see above). While a reading of
    // the same file (path, inode, size, modification time) is alive, it is returned again.
    static std::shared_ptr<const GgufFile> open(const std::filesystem::path& path);
    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    const std::filesystem::path& path() const { return path_; }
    std::uint32_t version() const { return version_; }
    std::uint64_t alignment() const { return alignment_; }
    std::uint64_t fileSize() const { return size_; }
    const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
    const std::vector<GgufTensor>& tensors() const { return tensors_; }  // in the file's order
    const GgufTensor* find(const std::string& name) const;
    const std::byte* data(const GgufTensor& t) const;  // in the read-only mapping

    // Typed metadata lookups; each throws "FILE: metadata 'KEY' must be ..., found ..." on a wrong
    // type; the optional ones return nullopt when the key is absent.
    const GgufValue* value(const std::string& key) const { return findValue(key); }  // null when absent
    std::optional<std::string> string(const std::string& key) const;
    std::optional<std::int64_t> integer(const std::string& key) const;  // any integer type
    std::optional<double> number(const std::string& key) const;         // any integer or float type
    std::optional<bool> boolean(const std::string& key) const;
    std::string requireString(const std::string& key) const;
    std::int64_t requirePositive(const std::string& key) const;             // a positive integer
    const std::vector<std::string>* strings(const std::string& key) const;  // a string array, or null
    const std::vector<double>* numbers(const std::string& key) const;       // a numeric array, or null
    [[noreturn]] void fail(const std::string& what) const;

private:
    GgufFile() = default;
    static std::shared_ptr<const GgufFile> readFile(const std::filesystem::path& path, int fd, std::uint64_t size);
    const GgufValue* findValue(const std::string& key) const;
    std::filesystem::path path_;
    const std::byte* map_ = nullptr;
    std::uint64_t size_ = 0, dataStart_ = 0, alignment_ = 32;
    std::uint32_t version_ = 0;
    std::map<std::string, GgufValue> metadata_;
    std::vector<GgufTensor> tensors_;
    std::map<std::string, std::size_t> index_;
};

// True when the file starts with the GGUF magic (it exists, is regular and has >= 4 bytes).
bool looksLikeGguf(const std::filesystem::path& path);

// Dequantises rows [firstRow, firstRow + rows) of tensor `t` (rows of rowLength() elements, the
// tensor's bytes at `data`) to float32 at `out` (rows × rowLength floats). Throws
// attnscope::Error naming the tensor and the type for a type outside supportedGgmlType().
void dequantiseRows(const GgufTensor& t, const std::byte* data, std::int64_t firstRow, std::int64_t rows, float* out);

}  // namespace attnscope
