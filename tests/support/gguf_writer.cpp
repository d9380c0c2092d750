#include "gguf_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace attnscope::testing {

namespace {
namespace gguf_writer {  // this file's helpers, apart from the other support files' in a unity build

void put(std::vector<std::uint8_t>& out, const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out.insert(out.end(), b, b + n);
}
template <class T>
void put(std::vector<std::uint8_t>& out, T v) {
    put(out, &v, sizeof v);
}
void putString(std::vector<std::uint8_t>& out, const std::string& s) {
    put<std::uint64_t>(out, s.size());
    put(out, s.data(), s.size());
}

// IEEE half from float, rounding to nearest even (normal and subnormal ranges; no overflow here).
std::uint16_t halfBits(float f) {
    if (f == 0) return std::signbit(f) ? 0x8000 : 0;
    const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    double a = std::fabs(static_cast<double>(f));
    int e;
    std::frexp(a, &e);  // a = m · 2^e, m in [0.5, 1)
    int exp = e - 1 + 15;
    if (exp <= 0) {  // subnormal: units of 2^-24
        const auto m = static_cast<std::uint16_t>(std::nearbyint(a / std::ldexp(1.0, -24)));
        return sign | m;
    }
    double mant = a / std::ldexp(1.0, e - 1) - 1.0;  // [0, 1)
    auto m = static_cast<std::uint32_t>(std::nearbyint(mant * 1024));
    if (m == 1024) {
        m = 0;
        ++exp;
    }
    return static_cast<std::uint16_t>(sign | exp << 10 | m);
}
float halfValue(std::uint16_t h) {  // by the formula, not by bits
    const int exp = (h >> 10) & 31, mant = h & 1023;
    const double v = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
    return static_cast<float>((h & 0x8000) ? -v : v);
}
float roundHalf(float f) { return halfValue(halfBits(f)); }

std::uint16_t bf16Bits(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits += 0x7fff + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>(bits >> 16);
}

float absMax(const float* x, int n) {
    float m = 0;
    for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
    return m;
}

void blockQ8_0(const float* x, std::vector<std::uint8_t>& out) {
    const float d = roundHalf(absMax(x, 32) / 127);
    put(out, halfBits(d));
    for (int i = 0; i < 32; ++i) put<std::int8_t>(out, static_cast<std::int8_t>(d ? std::lround(x[i] / d) : 0));
}

void blockQ4_0(const float* x, std::vector<std::uint8_t>& out) {
    const float d = roundHalf(absMax(x, 32) / 7);
    put(out, halfBits(d));
    auto q = [&](float v) { return static_cast<int>(std::clamp<long>(d ? std::lround(v / d) + 8 : 8, 0, 15)); };
    for (int j = 0; j < 16; ++j) put<std::uint8_t>(out, static_cast<std::uint8_t>(q(x[j]) | q(x[j + 16]) << 4));
}

// K-quants with 32-value sub-blocks (Q4_K: levels 15, Q5_K: 31): 6-bit scales and mins.
void blockK(const float* x, int levels, std::vector<std::uint8_t>& out) {
    float scale[8], min[8];
    for (int s = 0; s < 8; ++s) {
        float lo = 0, hi = 0;
        for (int i = 0; i < 32; ++i) lo = std::min(lo, x[32 * s + i]), hi = std::max(hi, x[32 * s + i]);
        scale[s] = (hi - lo) / levels;
        min[s] = -lo;
    }
    const float d = roundHalf(*std::max_element(scale, scale + 8) / 63);
    const float dmin = roundHalf(*std::max_element(min, min + 8) / 63);
    int sc[8], m[8];
    for (int s = 0; s < 8; ++s) {
        sc[s] = d ? std::clamp<int>(static_cast<int>(std::lround(scale[s] / d)), 0, 63) : 0;
        m[s] = dmin ? std::clamp<int>(static_cast<int>(std::lround(min[s] / dmin)), 0, 63) : 0;
    }
    std::uint8_t packed[12];
    for (int j = 0; j < 4; ++j) {
        packed[j] = static_cast<std::uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
        packed[j + 4] = static_cast<std::uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
        packed[j + 8] = static_cast<std::uint8_t>((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
    }
    int q[256];
    for (int i = 0; i < 256; ++i) {
        const int s = i / 32;
        const float step = d * static_cast<float>(sc[s]);
        q[i] = step ? std::clamp<int>(static_cast<int>(std::lround((x[i] + dmin * static_cast<float>(m[s])) / step)), 0,
                                      levels)
                    : 0;
    }
    put(out, halfBits(d));
    put(out, halfBits(dmin));
    put(out, packed, 12);
    if (levels == 31) {  // qh: bit s of byte l is the fifth bit of value 32s + l
        for (int l = 0; l < 32; ++l) {
            std::uint8_t h = 0;
            for (int s = 0; s < 8; ++s) h |= static_cast<std::uint8_t>(((q[32 * s + l] >> 4) & 1) << s);
            put(out, h);
        }
    }
    for (int pair = 0; pair < 4; ++pair)
        for (int l = 0; l < 32; ++l)
            put<std::uint8_t>(out,
                              static_cast<std::uint8_t>((q[64 * pair + l] & 15) | (q[64 * pair + 32 + l] & 15) << 4));
}

void blockQ6_K(const float* x, std::vector<std::uint8_t>& out) {
    float scale[16];
    for (int s = 0; s < 16; ++s) scale[s] = absMax(x + 16 * s, 16) / 31;
    const float d = roundHalf(*std::max_element(scale, scale + 16) / 127);
    int sc[16], q[256];
    for (int s = 0; s < 16; ++s) sc[s] = d ? static_cast<int>(std::lround(scale[s] / d)) : 0;
    for (int i = 0; i < 256; ++i) {
        const float step = d * static_cast<float>(sc[i / 16]);
        q[i] = (step ? std::clamp<int>(static_cast<int>(std::lround(x[i] / step)), -32, 31) : 0) + 32;
    }
    std::uint8_t ql[128], qh[64];
    for (int n = 0; n < 2; ++n)
        for (int l = 0; l < 32; ++l) {
            const int* v = q + 128 * n;
            ql[64 * n + l] = static_cast<std::uint8_t>((v[l] & 15) | (v[l + 64] & 15) << 4);
            ql[64 * n + l + 32] = static_cast<std::uint8_t>((v[l + 32] & 15) | (v[l + 96] & 15) << 4);
            qh[32 * n + l] = static_cast<std::uint8_t>(v[l] >> 4 | (v[l + 32] >> 4) << 2 | (v[l + 64] >> 4) << 4 |
                                                       (v[l + 96] >> 4) << 6);
        }
    put(out, ql, 128);
    put(out, qh, 64);
    for (int s = 0; s < 16; ++s) put<std::int8_t>(out, static_cast<std::int8_t>(sc[s]));
    put(out, halfBits(d));
}

int blockBytes(Ggml t) {
    switch (t) {
        case Ggml::F32: return 4;
        case Ggml::F16:
        case Ggml::BF16: return 2;
        case Ggml::Q8_0: return 34;
        case Ggml::Q4_0: return 18;
        case Ggml::Q4_K: return 144;
        case Ggml::Q5_K: return 176;
        case Ggml::Q6_K: return 210;
    }
    return 0;
}

// 6-bit scale (want = 0) or min (want = 1) number j of a K-quant's 12 packed bytes.
int kScale(const std::uint8_t* s, int j, int want) {
    if (j < 4) return s[j + 4 * want] & 63;
    const int low = want ? s[j + 4] >> 4 : s[j + 4] & 15;
    const int high = s[j - 4 + 4 * want] >> 6;
    return low | high << 4;
}

}  // namespace gguf_writer
}  // namespace

const char* ggmlName(Ggml t) {
    switch (t) {
        case Ggml::F32: return "F32";
        case Ggml::F16: return "F16";
        case Ggml::BF16: return "BF16";
        case Ggml::Q8_0: return "Q8_0";
        case Ggml::Q4_0: return "Q4_0";
        case Ggml::Q4_K: return "Q4_K";
        case Ggml::Q5_K: return "Q5_K";
        case Ggml::Q6_K: return "Q6_K";
    }
    return "?";
}

int ggmlBlock(Ggml t) {
    switch (t) {
        case Ggml::Q8_0:
        case Ggml::Q4_0: return 32;
        case Ggml::Q4_K:
        case Ggml::Q5_K:
        case Ggml::Q6_K: return 256;
        default: return 1;
    }
}

std::vector<std::uint8_t> quantise(const std::vector<float>& x, Ggml type) {
    using namespace gguf_writer;
    std::vector<std::uint8_t> out;
    const std::size_t block = static_cast<std::size_t>(ggmlBlock(type));
    if (x.size() % block != 0) throw std::runtime_error("quantise: not a whole number of blocks");
    for (std::size_t b = 0; b < x.size(); b += block) {
        const float* p = x.data() + b;
        switch (type) {
            case Ggml::F32: put(out, p[0]); break;
            case Ggml::F16: put(out, halfBits(p[0])); break;
            case Ggml::BF16: put(out, bf16Bits(p[0])); break;
            case Ggml::Q8_0: blockQ8_0(p, out); break;
            case Ggml::Q4_0: blockQ4_0(p, out); break;
            case Ggml::Q4_K: blockK(p, 15, out); break;
            case Ggml::Q5_K: blockK(p, 31, out); break;
            case Ggml::Q6_K: blockQ6_K(p, out); break;
        }
    }
    return out;
}

std::vector<float> dequantisePlain(const std::vector<std::uint8_t>& bytes, Ggml type, std::size_t count) {
    using namespace gguf_writer;
    std::vector<float> y(count);
    const std::size_t block = static_cast<std::size_t>(ggmlBlock(type));
    const auto half = [&](std::size_t at) {
        return halfValue(static_cast<std::uint16_t>(bytes[at] | bytes[at + 1] << 8));
    };
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t b = i / block * static_cast<std::size_t>(blockBytes(type)), k = i % block;
        const std::uint8_t* p = bytes.data() + b;
        switch (type) {
            case Ggml::F32: std::memcpy(&y[i], p, 4); break;
            case Ggml::F16: y[i] = half(b); break;
            case Ggml::BF16: {
                const std::uint32_t bits = static_cast<std::uint32_t>(p[0] | p[1] << 8) << 16;
                std::memcpy(&y[i], &bits, 4);
                break;
            }
            case Ggml::Q8_0: y[i] = half(b) * static_cast<float>(static_cast<std::int8_t>(p[2 + k])); break;
            case Ggml::Q4_0: {
                const int q = k < 16 ? p[2 + k] & 15 : p[2 + k - 16] >> 4;
                y[i] = half(b) * static_cast<float>(q - 8);
                break;
            }
            case Ggml::Q4_K:
            case Ggml::Q5_K: {
                const bool five = type == Ggml::Q5_K;
                const int s = static_cast<int>(k / 32), l = static_cast<int>(k % 32);
                const std::uint8_t byte = p[(five ? 48 : 16) + (s / 2) * 32 + l];
                int q = s % 2 ? byte >> 4 : byte & 15;
                if (five) q += ((p[16 + l] >> s) & 1) * 16;
                const float d = half(b) * static_cast<float>(kScale(p + 4, s, 0));
                const float m = half(b + 2) * static_cast<float>(kScale(p + 4, s, 1));
                y[i] = d * static_cast<float>(q) - m;
                break;
            }
            case Ggml::Q6_K: {
                const int n = static_cast<int>(k / 128), r = static_cast<int>(k % 128), part = r / 32, l = r % 32;
                const std::uint8_t low = p[64 * n + l + (part % 2) * 32];
                const int nibble = part < 2 ? low & 15 : low >> 4;
                const int high = (p[128 + 32 * n + l] >> (2 * part)) & 3;
                const int q = (nibble | high << 4) - 32;
                const auto sc = static_cast<std::int8_t>(p[192 + k / 16]);
                y[i] = half(b + 208) * static_cast<float>(sc) * static_cast<float>(q);
                break;
            }
        }
    }
    return y;
}

void GgufBuilder::raw(const std::string& key, std::uint32_t type, const std::vector<std::uint8_t>& value) {
    using namespace gguf_writer;
    putString(meta_, key);
    put(meta_, type);
    meta_.insert(meta_.end(), value.begin(), value.end());
    ++metaCount_;
}
void GgufBuilder::u32(const std::string& key, std::uint32_t v) {
    using namespace gguf_writer;
    std::vector<std::uint8_t> b;
    put(b, v);
    raw(key, 4, b);
}
void GgufBuilder::i32(const std::string& key, std::int32_t v) {
    using namespace gguf_writer;
    std::vector<std::uint8_t> b;
    put(b, v);
    raw(key, 5, b);
}
void GgufBuilder::u64(const std::string& key, std::uint64_t v) {
    using namespace gguf_writer;
    std::vector<std::uint8_t> b;
    put(b, v);
    raw(key, 10, b);
}
void GgufBuilder::f32(const std::string& key, float v) {
    using namespace gguf_writer;
    std::vector<std::uint8_t> b;
    put(b, v);
    raw(key, 6, b);
}
void GgufBuilder::boolean(const std::string& key, bool v) { raw(key, 7, {static_cast<std::uint8_t>(v)}); }
void GgufBuilder::str(const std::string& key, const std::string& v) {
    using namespace gguf_writer;
    std::vector<std::uint8_t> b;
    putString(b, v);
    raw(key, 8, b);
}
void GgufBuilder::strings(const std::string& key, const std::vector<std::string>& v) {
    using namespace gguf_writer;
    std::vector<std::uint8_t> b;
    put<std::uint32_t>(b, 8);
    put<std::uint64_t>(b, v.size());
    for (const auto& s : v) putString(b, s);
    raw(key, 9, b);
}
void GgufBuilder::f32s(const std::string& key, const std::vector<float>& v) {
    using namespace gguf_writer;
    std::vector<std::uint8_t> b;
    put<std::uint32_t>(b, 6);
    put<std::uint64_t>(b, v.size());
    for (float f : v) put(b, f);
    raw(key, 9, b);
}
void GgufBuilder::i32s(const std::string& key, const std::vector<std::int32_t>& v) {
    using namespace gguf_writer;
    std::vector<std::uint8_t> b;
    put<std::uint32_t>(b, 5);
    put<std::uint64_t>(b, v.size());
    for (auto i : v) put(b, i);
    raw(key, 9, b);
}

void GgufBuilder::tensor(const std::string& name, const std::vector<std::int64_t>& shape,
                         const std::vector<float>& values, Ggml type) {
    std::vector<std::uint64_t> dims(shape.rbegin(), shape.rend());
    rawTensor(name, dims, static_cast<std::uint32_t>(type), quantise(values, type));
}

void GgufBuilder::rawTensor(const std::string& name, const std::vector<std::uint64_t>& dims, std::uint32_t type,
                            std::vector<std::uint8_t> bytes, std::int64_t offset) {
    tensors_.push_back({name, dims, type, std::move(bytes), offset});
}

std::vector<std::uint8_t> GgufBuilder::bytes(std::uint32_t version, std::uint64_t alignment) const {
    using namespace gguf_writer;
    std::vector<std::uint8_t> out;
    put(out, "GGUF", 4);
    put(out, version);
    put<std::uint64_t>(out, tensors_.size());
    put<std::uint64_t>(out, metaCount_);
    out.insert(out.end(), meta_.begin(), meta_.end());
    std::vector<std::uint64_t> offsets;
    std::uint64_t at = 0;
    for (const Tensor& t : tensors_) {
        offsets.push_back(t.offset >= 0 ? static_cast<std::uint64_t>(t.offset) : at);
        at = (at + t.data.size() + alignment - 1) / alignment * alignment;
    }
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
        const Tensor& t = tensors_[i];
        putString(out, t.name);
        put<std::uint32_t>(out, static_cast<std::uint32_t>(t.dims.size()));
        for (auto d : t.dims) put(out, d);
        put(out, t.type);
        put(out, offsets[i]);
    }
    out.resize((out.size() + alignment - 1) / alignment * alignment, 0);
    const std::size_t data = out.size();
    at = 0;
    for (const Tensor& t : tensors_) {
        out.resize(data + at, 0);
        out.insert(out.end(), t.data.begin(), t.data.end());
        at = (at + t.data.size() + alignment - 1) / alignment * alignment;
    }
    return out;
}

void GgufBuilder::write(const std::filesystem::path& path, std::uint32_t version, std::uint64_t alignment) const {
    const auto b = bytes(version, alignment);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<long>(b.size()));
}

std::vector<float> permuteRows(const std::vector<float>& v, std::int64_t rows, std::int64_t cols, int heads) {
    // convert_hf_to_gguf.py: reshape(heads, 2, d/2, cols).swapaxes(1, 2): HF row h·d + j·d/2 + i
    // becomes row h·d + 2i + j.
    std::vector<float> out(v.size());
    const std::int64_t d = rows / heads;
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t j = 0; j < 2; ++j)
            for (std::int64_t i = 0; i < d / 2; ++i)
                std::copy_n(v.begin() + (h * d + j * d / 2 + i) * cols, cols, out.begin() + (h * d + 2 * i + j) * cols);
    return out;
}

}  // namespace attnscope::testing
