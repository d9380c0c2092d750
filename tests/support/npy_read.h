// A small .npy reader for tests, written independently of core's writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope::testing {

struct NpyArray {
    std::string descr;  // e.g. "<f4"
    bool fortranOrder = false;
    std::vector<std::int64_t> shape;
    std::vector<float> values;
};

// Throws std::runtime_error on anything that is not a v1/v2 little-endian float32 .npy; with
// int64Values, an int64 ('<i8') one, whose values go there (NpyArray::values stays empty).
NpyArray readNpy(const std::filesystem::path& file, std::vector<std::int64_t>* int64Values = nullptr);

}  // namespace attnscope::testing
