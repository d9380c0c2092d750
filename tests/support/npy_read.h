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

// Throws std::runtime_error on anything that is not a v1/v2 little-endian float32 .npy.
NpyArray readNpy(const std::filesystem::path& file);

}  // namespace attnscope::testing
