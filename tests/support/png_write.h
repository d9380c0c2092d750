// A minimal PNG writer for tests (8-bit RGB, uncompressed deflate blocks), written from the PNG
// and zlib specifications so that image decoding is tested on a real file format.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace attnscope::testing {

// pixels: row-major RGB, width·height·3 bytes.
void writePng(const std::filesystem::path& file, int width, int height, const std::vector<std::uint8_t>& pixels);
// A picture of random bytes (std::mt19937(seed), each byte rng() % 256, row-major RGB).
void writeNoisePng(const std::filesystem::path& file, int width, int height, unsigned seed);

}  // namespace attnscope::testing
