// GGML's block formats to float32 (gguf.h's dequantiseRows), as ggml-common.h lays the blocks
// out and ggml-quants.c's dequantize_row_* reads them:
//   Q8_0 (32 values, 34 bytes): f16 d, int8 q[32];                  x = d·q
//   Q4_0 (32, 18): f16 d, u8 qs[16]; value j low nibble, j+16 high; x = d·(q − 8)
//   Q4_K (256, 144): f16 d, f16 dmin, u8 scales[12] (eight 6-bit scales and mins), u8 qs[128];
//        each 64 values: 32 low nibbles with scale/min 2k, 32 high nibbles with 2k+1; x = d·sc·q − dmin·m
//   Q5_K (256, 176): as Q4_K plus u8 qh[32] between scales and qs: bit 2k/2k+1 of qh[l] is the fifth bit
//   Q6_K (256, 210): u8 ql[128], u8 qh[64], int8 scales[16], f16 d; per 128 values four runs of 32,
//        6-bit q = low nibble | two bits of qh, x = d·scale·(q − 32)
#include "attnscope/io/gguf.h"

#include "attnscope/runtime/error.h"

#include <cstring>

namespace attnscope {

namespace {

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
    std::uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000 | (mant << 13);
    } else if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: normalise
            int e = -1;
            do {
                ++e;
                mant <<= 1;
            } while ((mant & 0x400) == 0);
            bits = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
        }
    } else {
        bits = sign | (exp + 112) << 23 | mant << 13;
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::uint16_t u16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] | p[1] << 8); }

void q8_0(const unsigned char* b, float* y) {
    const float d = halfToFloat(u16(b));
    const auto* q = reinterpret_cast<const signed char*>(b + 2);
    for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(q[j]);
}

void q4_0(const unsigned char* b, float* y) {
    const float d = halfToFloat(u16(b));
    const unsigned char* qs = b + 2;
    for (int j = 0; j < 16; ++j) {
        y[j] = d * static_cast<float>((qs[j] & 0xf) - 8);
        y[j + 16] = d * static_cast<float>((qs[j] >> 4) - 8);
    }
}

// Scale and min number j (0..7) of a K-quant's 12 packed bytes: 6 bits each; the first four
// plainly in bytes 0-3 / 4-7, the last four as nibbles of bytes 8-11 with their top bits in the
// spare top two bits of bytes 0-7.
void scaleMin(int j, const unsigned char* s, int& scale, int& min) {
    if (j < 4) {
        scale = s[j] & 63;
        min = s[j + 4] & 63;
    } else {
        scale = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
        min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

void q4_k(const unsigned char* b, float* y) {
    const float d = halfToFloat(u16(b)), dmin = halfToFloat(u16(b + 2));
    const unsigned char* scales = b + 4;
    const unsigned char* q = b + 16;
    for (int k = 0; k < 4; ++k, q += 32, y += 64) {
        int sc, m;
        scaleMin(2 * k, scales, sc, m);
        const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
        scaleMin(2 * k + 1, scales, sc, m);
        const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
        for (int l = 0; l < 32; ++l) y[l] = d1 * static_cast<float>(q[l] & 0xf) - m1;
        for (int l = 0; l < 32; ++l) y[l + 32] = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
}

void q5_k(const unsigned char* b, float* y) {
    const float d = halfToFloat(u16(b)), dmin = halfToFloat(u16(b + 2));
    const unsigned char* scales = b + 4;
    const unsigned char* qh = b + 16;
    const unsigned char* q = b + 48;
    for (int k = 0; k < 4; ++k, q += 32, y += 64) {
        int sc, m;
        scaleMin(2 * k, scales, sc, m);
        const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
        scaleMin(2 * k + 1, scales, sc, m);
        const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
        const int lowBit = 1 << (2 * k), highBit = 1 << (2 * k + 1);
        for (int l = 0; l < 32; ++l) y[l] = d1 * static_cast<float>((q[l] & 0xf) + (qh[l] & lowBit ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) y[l + 32] = d2 * static_cast<float>((q[l] >> 4) + (qh[l] & highBit ? 16 : 0)) - m2;
    }
}

void q6_k(const unsigned char* b, float* y) {
    const unsigned char* ql = b;
    const unsigned char* qh = b + 128;
    const auto* sc = reinterpret_cast<const signed char*>(b + 192);
    const float d = halfToFloat(u16(b + 208));
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
        for (int l = 0; l < 32; ++l) {
            const int s = l / 16;
            const int q1 = ((ql[l] & 0xf) | ((qh[l] & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * static_cast<float>(sc[s]) * static_cast<float>(q1);
            y[l + 32] = d * static_cast<float>(sc[s + 2]) * static_cast<float>(q2);
            y[l + 64] = d * static_cast<float>(sc[s + 4]) * static_cast<float>(q3);
            y[l + 96] = d * static_cast<float>(sc[s + 6]) * static_cast<float>(q4);
        }
    }
}

}  // namespace

void dequantiseRows(const GgufTensor& t, const std::byte* data, std::int64_t firstRow, std::int64_t rows, float* out) {
    std::int64_t blockElements = 0, blockBytes = 0;
    if (!supportedGgmlType(t.type) || !ggmlTypeLayout(static_cast<std::uint32_t>(t.type), blockElements, blockBytes))
        throw Error("tensor '" + t.name + "' is " + ggmlTypeName(t.type) +
                    "; AttnScope reads F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K and Q6_K");
    const std::int64_t width = t.rowLength();
    const std::int64_t rowBytes = width / blockElements * blockBytes;
    const auto* src = reinterpret_cast<const unsigned char*>(data) + firstRow * rowBytes;
    const std::int64_t count = rows * width;
    switch (t.type) {
        case GgmlType::F32: std::memcpy(out, src, static_cast<std::size_t>(count) * 4); return;
        case GgmlType::F16:
            for (std::int64_t i = 0; i < count; ++i) out[i] = halfToFloat(u16(src + 2 * i));
            return;
        case GgmlType::BF16:
            for (std::int64_t i = 0; i < count; ++i) {
                const std::uint32_t bits = static_cast<std::uint32_t>(u16(src + 2 * i)) << 16;
                std::memcpy(out + i, &bits, 4);
            }
            return;
        default: break;
    }
    void (*block)(const unsigned char*, float*) = t.type == GgmlType::Q8_0   ? q8_0
                                                  : t.type == GgmlType::Q4_0 ? q4_0
                                                  : t.type == GgmlType::Q4_K ? q4_k
                                                  : t.type == GgmlType::Q5_K ? q5_k
                                                                             : q6_k;
    const std::int64_t blocks = count / blockElements;
    for (std::int64_t i = 0; i < blocks; ++i) block(src + i * blockBytes, out + i * blockElements);
}

}  // namespace attnscope
