// BF16 -> float32 for the streamed forward (io/weights.cpp) and its rate (machine_rates.cpp).
// BF16 is the top half of a float32, so each value is a 16-bit shift. The buffers it fills are
// hundreds of MB, read back by the next matrix product from memory anyway, so the stores bypass
// the cache (non-temporal): no read-for-ownership of the target's lines, a third less traffic.
#pragma once

#include <cstdint>

namespace attnscope {

// dst[i] = float(src[i]) for i in [0, n). dst float32, src the raw BF16 bits.
void bf16ToFloat32(const std::uint16_t* src, float* dst, std::int64_t n);
// The plain loop (cached stores), kept to measure the difference (bench --rates).
void bf16ToFloat32Cached(const std::uint16_t* src, float* dst, std::int64_t n);

}  // namespace attnscope
