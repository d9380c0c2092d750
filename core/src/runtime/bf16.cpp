#include "bf16.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace attnscope {

namespace {
inline float widen(std::uint16_t h) {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
}  // namespace

void bf16ToFloat32Cached(const std::uint16_t* src, float* dst, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) dst[i] = widen(src[i]);
}

void bf16ToFloat32(const std::uint16_t* src, float* dst, std::int64_t n) {
#if defined(__SSE2__)
    std::int64_t i = 0;
    // Streaming stores need 16-byte aligned targets.
    for (; i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 15) != 0; ++i) dst[i] = widen(src[i]);
    const __m128i zero = _mm_setzero_si128();
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
        // Interleaving zero words below each BF16 word gives the float32 bits.
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_unpacklo_epi16(zero, h));
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 4), _mm_unpackhi_epi16(zero, h));
    }
    for (; i < n; ++i) dst[i] = widen(src[i]);
    _mm_sfence();  // the streamed stores are visible before another thread multiplies
#else
    bf16ToFloat32Cached(src, dst, n);
#endif
}

}  // namespace attnscope
