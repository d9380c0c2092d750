// NumPy .npy writer (format version 1.0): little-endian float32 (int64 for writeNpyInt64), C order.
// Data is streamed so an [L,H,n,n] array never has to exist in memory at once. Written through
// AtomicFile: the file appears only when finish() succeeds; an unfinished writer leaves no file.
#pragma once

#include "attnscope/io/atomic_file.h"

#include <cstdint>
#include <filesystem>
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
    std::vector<std::int64_t> shape_;
    std::uint64_t expected_ = 0;
    std::uint64_t written_ = 0;
    AtomicFile file_;
};

void writeNpy(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
              const std::vector<float>& values);
// The same for little-endian int64 ('<i8'), e.g. token ids.
void writeNpyInt64(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
                   const std::vector<std::int64_t>& values);
// The same for numpy's bool ('|b1', one byte each; nonzero values are written as 1).
void writeNpyBool(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
                  const std::vector<std::uint8_t>& values);

}  // namespace attnscope
