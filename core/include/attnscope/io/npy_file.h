// NumPy .npy reading; the writer is npy.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

namespace attnscope {

// NumPy .npy reader (format versions 1.0, 2.0 and 3.0): little-endian float16, float32 or
// float64 in C order, which is what NumPy and torch.save-to-numpy write on every common machine.
// The file is memory-mapped read-only; the header's shape is checked against the file's size
// before anything else happens, so a header announcing a huge array allocates nothing. Anything
// else (big-endian, Fortran order, integer or object dtypes, a short file) is refused with one
// attnscope::Error line naming the file.
enum class NpyDType { Float16, Float32, Float64 };

class NpyFile {
public:
    static std::shared_ptr<const NpyFile> open(const std::filesystem::path& path);
    ~NpyFile();
    NpyFile(const NpyFile&) = delete;
    NpyFile& operator=(const NpyFile&) = delete;

    const std::filesystem::path& path() const { return path_; }
    NpyDType dtype() const { return dtype_; }
    const std::vector<std::int64_t>& shape() const { return shape_; }
    std::uint64_t elements() const { return elements_; }
    std::size_t itemSize() const;
    // The elements, C order, `elements() * itemSize()` bytes, aligned to the item size; valid as
    // long as this object lives.
    const void* data() const { return map_ + dataOffset_; }

private:
    NpyFile() = default;
    std::filesystem::path path_;
    NpyDType dtype_ = NpyDType::Float32;
    std::vector<std::int64_t> shape_;
    std::uint64_t elements_ = 0;
    const unsigned char* map_ = nullptr;
    std::uint64_t mapSize_ = 0;
    std::uint64_t dataOffset_ = 0;
};

const char* npyDTypeName(NpyDType dtype);  // "float16", "float32", "float64"

}  // namespace attnscope
