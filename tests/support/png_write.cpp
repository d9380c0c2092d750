#include "png_write.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <string>

namespace attnscope::testing {

namespace {
namespace png_write {  // this file's helpers, apart from the other support files' in a unity build

std::uint32_t crc32(const std::uint8_t* data, std::size_t n, std::uint32_t crc = 0xffffffffu) {
    for (std::size_t i = 0; i < n; ++i) {
        crc ^= data[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc;
}

void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));
}

void chunk(std::vector<std::uint8_t>& png, const char* type, const std::vector<std::uint8_t>& data) {
    put32(png, static_cast<std::uint32_t>(data.size()));
    std::vector<std::uint8_t> body(type, type + 4);
    body.insert(body.end(), data.begin(), data.end());
    png.insert(png.end(), body.begin(), body.end());
    put32(png, crc32(body.data(), body.size()) ^ 0xffffffffu);
}

}  // namespace png_write
}  // namespace

void writePng(const std::filesystem::path& file, int width, int height, const std::vector<std::uint8_t>& pixels) {
    using namespace png_write;
    std::vector<std::uint8_t> raw;  // each scanline: filter type 0, then the row
    for (int y = 0; y < height; ++y) {
        raw.push_back(0);
        raw.insert(raw.end(), pixels.begin() + static_cast<long>(y) * width * 3,
                   pixels.begin() + static_cast<long>(y + 1) * width * 3);
    }
    std::vector<std::uint8_t> z = {0x78, 0x01};  // zlib header, no compression preset
    for (std::size_t at = 0; at < raw.size() || at == 0; at += 65535) {
        const std::size_t len = std::min<std::size_t>(65535, raw.size() - at);
        z.push_back(at + len >= raw.size() ? 1 : 0);  // BFINAL, BTYPE = stored
        z.push_back(static_cast<std::uint8_t>(len));
        z.push_back(static_cast<std::uint8_t>(len >> 8));
        z.push_back(static_cast<std::uint8_t>(~len));
        z.push_back(static_cast<std::uint8_t>(~len >> 8));
        z.insert(z.end(), raw.begin() + static_cast<long>(at), raw.begin() + static_cast<long>(at + len));
        if (at + len >= raw.size()) break;
    }
    std::uint32_t a = 1, b = 0;  // Adler-32
    for (auto v : raw) {
        a = (a + v) % 65521;
        b = (b + a) % 65521;
    }
    put32(z, (b << 16) | a);
    std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    std::vector<std::uint8_t> header;
    put32(header, static_cast<std::uint32_t>(width));
    put32(header, static_cast<std::uint32_t>(height));
    header.insert(header.end(), {8, 2, 0, 0, 0});  // 8 bits, truecolour, deflate, no filter, no interlace
    chunk(png, "IHDR", header);
    chunk(png, "IDAT", z);
    chunk(png, "IEND", {});
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
}

void writeNoisePng(const std::filesystem::path& file, int width, int height, unsigned seed) {
    std::vector<std::uint8_t> pixels(static_cast<std::size_t>(width) * height * 3);
    std::mt19937 rng(seed);
    for (auto& p : pixels) p = static_cast<std::uint8_t>(rng() % 256);
    writePng(file, width, height, pixels);
}

}  // namespace attnscope::testing
