// NumPy .npy writer (format version 1.0): little-endian float32, C order.
// Data is streamed so an [L,H,n,n] array never has to exist in memory at once. The file is
// written under a temporary name and renamed by finish(); an unfinished writer removes it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

namespace attnscope {

class NpyWriter {
public:
    // Throws attnscope::Error when the file cannot be created.
    NpyWriter(std::filesystem::path path, std::vector<std::int64_t> shape);
    ~NpyWriter();
    NpyWriter(const NpyWriter&) = delete;
    NpyWriter& operator=(const NpyWriter&) = delete;

    void append(const float* values, std::size_t count);
    // Checks the element count against the shape, flushes and renames into place.
    void finish();

private:
    std::filesystem::path path_;
    std::filesystem::path tmp_;
    std::vector<std::int64_t> shape_;
    std::ofstream out_;
    std::uint64_t expected_ = 0;
    std::uint64_t written_ = 0;
    bool finished_ = false;
};

void writeNpy(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
              const std::vector<float>& values);

}  // namespace attnscope
