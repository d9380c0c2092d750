// dotk (dot_kernels.h): the blocked forward's products in AVX-512 register tiles.
//
// Both kernels keep a tile of R ≤ 6 rows × up to 4 vectors (64 columns) of results in 24 of the
// 32 vector registers and, per step of the shared dimension, load the tile's vectors of the
// right-hand matrix once and broadcast one value of each row: 24 FMAs for 4 loads and 6
// broadcasts. scores walks 64 keys (16 KB of packed keys) at a time past every row of the block;
// weightedSum walks 128 keys (32 KB of values at 64 columns) at a time, so the right-hand side
// stays in L1 while every row group passes.
#include "dot_kernels.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

// 64-byte vectors by value between inlined helpers: no ABI is crossed.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace attnscope::dotk {

#if defined(__x86_64__)

namespace {

#define ATTNSCOPE_AVX512 __attribute__((target("avx512f")))
#define ATTNSCOPE_AVX512_INLINE inline __attribute__((always_inline, target("avx512f")))
#define ATTNSCOPE_UNROLL _Pragma("GCC unroll 8")

typedef float vf __attribute__((vector_size(64)));

ATTNSCOPE_AVX512_INLINE vf load(const float* p) {
    vf v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
ATTNSCOPE_AVX512_INLINE void store(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
ATTNSCOPE_AVX512_INLINE vf splat(float x) { return vf{x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }

constexpr std::int64_t kRows = 6;        // rows per register tile
constexpr std::int64_t kScoreKeys = 4;   // panels (of 16 keys) per score tile
constexpr std::int64_t kSumKeys = 128;   // keys per pass of weightedSum
constexpr std::int64_t kSumVectors = 4;  // value columns per tile, in vectors of 16

// s[r][16i + l] = alpha · Σ_j q[r][j] · panel i's key l, for R rows and NP panels; of the last
// panel only the first lastCols columns are stored.
template <int R, int NP>
ATTNSCOPE_AVX512 void scoreTile(const float* q, std::int64_t ldq, std::int64_t d, const float* packed, float alpha,
                                float* s, std::int64_t lds, std::int64_t lastCols) {
    vf acc[R][NP];
    ATTNSCOPE_UNROLL for (int r = 0; r < R; ++r) ATTNSCOPE_UNROLL for (int i = 0; i < NP; ++i) acc[r][i] = splat(0.0f);
    const std::int64_t panelSize = d * kPanel;
    for (std::int64_t j = 0; j < d; ++j) {
        vf b[NP];
        ATTNSCOPE_UNROLL for (int i = 0; i < NP; ++i) b[i] = load(packed + i * panelSize + j * kPanel);
        ATTNSCOPE_UNROLL for (int r = 0; r < R; ++r) {
            const vf a = splat(q[r * ldq + j]);
            ATTNSCOPE_UNROLL for (int i = 0; i < NP; ++i) acc[r][i] += a * b[i];
        }
    }
    const vf scale = splat(alpha);
    ATTNSCOPE_UNROLL for (int r = 0; r < R; ++r) {
        ATTNSCOPE_UNROLL for (int i = 0; i < NP - 1; ++i) store(s + r * lds + i * kPanel, acc[r][i] * scale);
        const vf last = acc[r][NP - 1] * scale;
        if (lastCols == kPanel) {
            store(s + r * lds + (NP - 1) * kPanel, last);
        } else {
            float tail[kPanel];
            store(tail, last);
            std::memcpy(s + r * lds + (NP - 1) * kPanel, tail, static_cast<std::size_t>(lastCols) * sizeof(float));
        }
    }
}

template <int R>
ATTNSCOPE_AVX512_INLINE void scoreTiles(std::int64_t np, const float* q, std::int64_t ldq, std::int64_t d,
                                        const float* packed, float alpha, float* s, std::int64_t lds,
                                        std::int64_t lastCols) {
    switch (np) {
        case 4: return scoreTile<R, 4>(q, ldq, d, packed, alpha, s, lds, lastCols);
        case 3: return scoreTile<R, 3>(q, ldq, d, packed, alpha, s, lds, lastCols);
        case 2: return scoreTile<R, 2>(q, ldq, d, packed, alpha, s, lds, lastCols);
        default: return scoreTile<R, 1>(q, ldq, d, packed, alpha, s, lds, lastCols);
    }
}

// out[r][16i + l] (=, or += when !first) Σ_w p[r][w] · v[w][16i + l] over `width` keys, for R
// rows and NV vectors; scaled by rowScale[r] when rowScale is given (the last pass).
template <int R, int NV>
ATTNSCOPE_AVX512 void sumTile(const float* p, std::int64_t ldp, std::int64_t width, const float* v, std::int64_t ldv,
                              bool first, const float* rowScale, float* out, std::int64_t ldo) {
    vf acc[R][NV];
    ATTNSCOPE_UNROLL for (int r = 0; r < R; ++r) ATTNSCOPE_UNROLL for (int i = 0; i < NV; ++i) acc[r][i] =
            first ? splat(0.0f) : load(out + r * ldo + i * kPanel);
    for (std::int64_t w = 0; w < width; ++w) {
        vf b[NV];
        ATTNSCOPE_UNROLL for (int i = 0; i < NV; ++i) b[i] = load(v + w * ldv + i * kPanel);
        ATTNSCOPE_UNROLL for (int r = 0; r < R; ++r) {
            const vf a = splat(p[r * ldp + w]);
            ATTNSCOPE_UNROLL for (int i = 0; i < NV; ++i) acc[r][i] += a * b[i];
        }
    }
    ATTNSCOPE_UNROLL for (int r = 0; r < R; ++r) {
        const vf scale = splat(rowScale ? rowScale[r] : 1.0f);
        ATTNSCOPE_UNROLL for (int i = 0; i < NV; ++i)
                store(out + r * ldo + i * kPanel, rowScale ? acc[r][i] * scale : acc[r][i]);
    }
}

template <int R>
ATTNSCOPE_AVX512_INLINE void sumTiles(std::int64_t nv, const float* p, std::int64_t ldp, std::int64_t width,
                                      const float* v, std::int64_t ldv, bool first, const float* rowScale, float* out,
                                      std::int64_t ldo) {
    switch (nv) {
        case 4: return sumTile<R, 4>(p, ldp, width, v, ldv, first, rowScale, out, ldo);
        case 3: return sumTile<R, 3>(p, ldp, width, v, ldv, first, rowScale, out, ldo);
        case 2: return sumTile<R, 2>(p, ldp, width, v, ldv, first, rowScale, out, ldo);
        default: return sumTile<R, 1>(p, ldp, width, v, ldv, first, rowScale, out, ldo);
    }
}

// The tile functions for `rows` (1 to 6) rows.
ATTNSCOPE_AVX512_INLINE void scoreRows(std::int64_t rows, std::int64_t np, const float* q, std::int64_t ldq,
                                       std::int64_t d, const float* packed, float alpha, float* s, std::int64_t lds,
                                       std::int64_t lastCols) {
    switch (rows) {
        case 6: return scoreTiles<6>(np, q, ldq, d, packed, alpha, s, lds, lastCols);
        case 5: return scoreTiles<5>(np, q, ldq, d, packed, alpha, s, lds, lastCols);
        case 4: return scoreTiles<4>(np, q, ldq, d, packed, alpha, s, lds, lastCols);
        case 3: return scoreTiles<3>(np, q, ldq, d, packed, alpha, s, lds, lastCols);
        case 2: return scoreTiles<2>(np, q, ldq, d, packed, alpha, s, lds, lastCols);
        default: return scoreTiles<1>(np, q, ldq, d, packed, alpha, s, lds, lastCols);
    }
}
ATTNSCOPE_AVX512_INLINE void sumRows(std::int64_t rows, std::int64_t nv, const float* p, std::int64_t ldp,
                                     std::int64_t width, const float* v, std::int64_t ldv, bool first,
                                     const float* rowScale, float* out, std::int64_t ldo) {
    switch (rows) {
        case 6: return sumTiles<6>(nv, p, ldp, width, v, ldv, first, rowScale, out, ldo);
        case 5: return sumTiles<5>(nv, p, ldp, width, v, ldv, first, rowScale, out, ldo);
        case 4: return sumTiles<4>(nv, p, ldp, width, v, ldv, first, rowScale, out, ldo);
        case 3: return sumTiles<3>(nv, p, ldp, width, v, ldv, first, rowScale, out, ldo);
        case 2: return sumTiles<2>(nv, p, ldp, width, v, ldv, first, rowScale, out, ldo);
        default: return sumTiles<1>(nv, p, ldp, width, v, ldv, first, rowScale, out, ldo);
    }
}

ATTNSCOPE_AVX512 void scoresAvx512(const float* q, std::int64_t ldq, std::int64_t len, std::int64_t d,
                                   const float* packed, std::int64_t p0, std::int64_t count, std::int64_t width,
                                   float alpha, float* s, std::int64_t lds) {
    const float* base = packed + p0 * d * kPanel;
    for (std::int64_t p = 0; p < count; p += kScoreKeys) {
        const std::int64_t np = std::min(kScoreKeys, count - p);
        const std::int64_t lastCols = std::min(kPanel, width - (p + np - 1) * kPanel);
        const float* keys = base + p * d * kPanel;
        float* sp = s + p * kPanel;
        for (std::int64_t r = 0; r < len; r += kRows)
            scoreRows(std::min<std::int64_t>(kRows, len - r), np, q + r * ldq, ldq, d, keys, alpha, sp + r * lds, lds,
                      lastCols);
    }
}

ATTNSCOPE_AVX512 void weightedSumAvx512(const float* p, std::int64_t ldp, std::int64_t len, std::int64_t width,
                                        const float* v, std::int64_t ldv, std::int64_t dv, const float* rowScale,
                                        float* out, std::int64_t ldo) {
    for (std::int64_t c = 0; c < dv; c += kSumVectors * kPanel) {
        const std::int64_t nv = std::min(kSumVectors, (dv - c) / kPanel);
        for (std::int64_t k = 0; k < width; k += kSumKeys) {
            const std::int64_t kw = std::min(kSumKeys, width - k);
            const bool first = k == 0, last = k + kw == width;
            for (std::int64_t r = 0; r < len; r += kRows)
                sumRows(std::min<std::int64_t>(kRows, len - r), nv, p + r * ldp + k, ldp, kw, v + k * ldv + c, ldv,
                        first, last ? rowScale + r : nullptr, out + r * ldo + c, ldo);
        }
    }
}

}  // namespace

bool supported() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}

void scores(const float* q, std::int64_t ldq, std::int64_t len, std::int64_t d, const float* packed, std::int64_t p0,
            std::int64_t count, std::int64_t width, float alpha, float* s, std::int64_t lds) {
    // Only whole panels past the first that holds a stored column: width > 16·(count - 1).
    count = std::min(count, panels(width));
    if (count <= 0) return;
    scoresAvx512(q, ldq, len, d, packed, p0, count, width, alpha, s, lds);
}

void weightedSum(const float* p, std::int64_t ldp, std::int64_t len, std::int64_t width, const float* v,
                 std::int64_t ldv, std::int64_t dv, const float* rowScale, float* out, std::int64_t ldo) {
    if (width <= 0) {
        for (std::int64_t r = 0; r < len; ++r) std::fill(out + r * ldo, out + r * ldo + dv, 0.0f);
        return;
    }
    weightedSumAvx512(p, ldp, len, width, v, ldv, dv, rowScale, out, ldo);
}

#else  // not x86-64: blockedAttend keeps the BLAS path

bool supported() { return false; }
void scores(const float*, std::int64_t, std::int64_t, std::int64_t, const float*, std::int64_t, std::int64_t,
            std::int64_t, float, float*, std::int64_t) {
    throw std::logic_error("dotk::scores: the AVX-512 kernels exist on x86-64 only (check dotk::supported())");
}
void weightedSum(const float*, std::int64_t, std::int64_t, std::int64_t, const float*, std::int64_t, std::int64_t,
                 const float*, float*, std::int64_t) {
    throw std::logic_error("dotk::weightedSum: the AVX-512 kernels exist on x86-64 only (check dotk::supported())");
}

#endif

void packKeys(const float* k, std::int64_t m, std::int64_t d, std::int64_t ldk, float* out) {
    for (std::int64_t p = 0; p < panels(m); ++p) {
        float* panel = out + p * d * kPanel;
        for (std::int64_t l = 0; l < kPanel; ++l) {
            const std::int64_t key = p * kPanel + l;
            if (key < m)
                for (std::int64_t j = 0; j < d; ++j) panel[j * kPanel + l] = k[key * ldk + j];
            else
                for (std::int64_t j = 0; j < d; ++j) panel[j * kPanel + l] = 0.0f;
        }
    }
}

}  // namespace attnscope::dotk
