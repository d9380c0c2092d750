// The blocked forward's two products for float32 on AVX-512 CPUs, in register tiles of our own:
// a block's scores s = α·q·kᵀ and its weighted sum of values p·v. Debian's OpenBLAS runs them
// with AVX2 kernels at about 95 GFLOP/s per core on these shapes (64 query rows, 64-wide heads,
// keys packed again for every block); these run at 185-225 (docs/benchmarks.md, issue 13 round
// 8). Keys are packed once per layer into panels of 16, so one vector holds a panel's values of
// one dimension. Used by blockedAttend only where the CPU has AVX-512F (checked once).
#pragma once

#include <cstdint>

namespace attnscope::dotk {

constexpr std::int64_t kPanel = 16;  // keys per packed panel: one 16-float vector

// Whether this CPU runs the kernels (AVX-512F).
bool supported();

// Panels needed for m keys.
inline std::int64_t panels(std::int64_t m) { return (m + kPanel - 1) / kPanel; }

// k [m, d] (row stride ldk) into out [panels(m), d, 16]: panel p holds keys 16p .. 16p + 15,
// dimension-major; the keys past m are 0.
void packKeys(const float* k, std::int64_t m, std::int64_t d, std::int64_t ldk, float* out);

// s[r][c] = alpha · Σ_j q[r][j] · key(16·p0 + c)[j] for r < len, c < width (at most 16·count,
// the panels p0 .. p0 + count - 1): q [len, d] (row stride ldq), keys from packKeys' output, s
// with row stride lds. Each sum runs over j in order, whatever the row's place in the block.
void scores(const float* q, std::int64_t ldq, std::int64_t len, std::int64_t d, const float* packed, std::int64_t p0,
            std::int64_t count, std::int64_t width, float alpha, float* s, std::int64_t lds);

// out[r][c] = rowScale[r] · Σ_w p[r][w] · v[w][c] for r < len, c < dv, w < width: p with row
// stride ldp, v with row stride ldv, out with row stride ldo. dv must be a multiple of 16.
void weightedSum(const float* p, std::int64_t ldp, std::int64_t len, std::int64_t width, const float* v,
                 std::int64_t ldv, std::int64_t dv, const float* rowScale, float* out, std::int64_t ldo);

}  // namespace attnscope::dotk
