// vmath (vector_math.h): exp, log and a fused row softmax in 16-lane float vectors.
//
// exp: Cody–Waite range reduction x = n·ln2 + r, |r| <= ln2/2, then exp(r) by its Taylor
// polynomial to degree 7 (truncation 5e-9 relative), and 2^n built in the exponent bits.
// log: x = 2^e·m with m in [√½, √2), log(m) = 2·atanh(s), s = (m - 1)/(m + 1), by its series to
// s^9 (truncation 1e-9), plus e·ln2 split in two. Both are about 1 ulp (rounding of s or r).
#include "vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

// 64-byte vectors by value between inlined helpers: no ABI is crossed.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace attnscope::vmath {

namespace {

#define ATTNSCOPE_INLINE inline __attribute__((always_inline))

constexpr int L = 16;
typedef float vf __attribute__((vector_size(4 * L)));
typedef std::int32_t vi __attribute__((vector_size(4 * L)));
typedef std::uint32_t vu __attribute__((vector_size(4 * L)));
typedef float vf8 __attribute__((vector_size(4 * L / 2)));
typedef double vd8 __attribute__((vector_size(8 * L / 2)));

ATTNSCOPE_INLINE vf splat(float x) { return vf{x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }
ATTNSCOPE_INLINE vi splati(std::int32_t x) { return vi{x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}; }
ATTNSCOPE_INLINE vf load(const float* p) {
    vf v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
ATTNSCOPE_INLINE void store(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
ATTNSCOPE_INLINE vf asFloat(vi v) { return __builtin_bit_cast(vf, v); }
ATTNSCOPE_INLINE vi asInt(vf v) { return __builtin_bit_cast(vi, v); }
// The float whose exponent field is `biased` (unsigned shift: a NaN lane's garbage cannot overflow).
ATTNSCOPE_INLINE vf exponentBits(vi biased) { return __builtin_bit_cast(vf, __builtin_bit_cast(vu, biased) << 23); }
// mask ? a : b per lane (mask: a comparison's result). The vector conditional, not bit masks:
// AVX-512F compares into mask registers, and turning those into vectors would need AVX-512DQ.
ATTNSCOPE_INLINE vf select(vi mask, vf a, vf b) { return mask ? a : b; }

constexpr float kInf = std::numeric_limits<float>::infinity();

ATTNSCOPE_INLINE vf expV(vf x) {
    // n = round(x / ln2) by the 1.5·2^23 trick (no float-to-int conversion, so NaN is harmless);
    // 2^n as 2^(n>>1)·2^(n - (n>>1)), so that subnormal results (n down to -150) and n = 128
    // (x up to 88.72) need no special case.
    const vf lo = splat(-103.972f), hi = splat(88.72283f), magic = splat(12582912.0f);
    vf c = select(x < lo, lo, x);
    c = select(c > hi, hi, c);
    const vf t = c * splat(1.44269504088896341f) + magic;
    const vf n = t - magic;
    vf r = c - n * splat(0.693145751953125f);
    r = r - n * splat(1.428606765330187045e-06f);
    vf p = splat(1.0f / 5040);
    p = p * r + splat(1.0f / 720);
    p = p * r + splat(1.0f / 120);
    p = p * r + splat(1.0f / 24);
    p = p * r + splat(1.0f / 6);
    p = p * r + splat(0.5f);
    p = p * r + splat(1.0f);
    p = p * r + splat(1.0f);
    const vi ni = asInt(t) - asInt(magic), half = ni >> 1;
    const vf a = exponentBits(half + splati(127)), b = exponentBits(ni - half + splati(127));
    vf out = p * a * b;
    out = select(x < lo, splat(0.0f), out);
    return select(x > hi, splat(kInf), out);
}

ATTNSCOPE_INLINE vf logV(vf x) {
    const vf tiny = splat(std::numeric_limits<float>::min());
    const vi sub = x < tiny;  // subnormal: scaled by 2^23 first (zero and negatives are set at the end)
    const vf xs = select(sub, x * splat(8388608.0f), x);
    const vi bits = asInt(xs);
    vi e = ((bits >> 23) & splati(0xff)) - (sub ? splati(150) : splati(127));
    vf m = asFloat((bits & splati(0x007fffff)) | splati(0x3f800000));  // [1, 2)
    const vi big = m > splat(1.41421356f);
    m = select(big, m * splat(0.5f), m);
    e = big ? e + splati(1) : e;
    const vf f = m - splat(1.0f);
    const vf s = f / (splat(2.0f) + f), z = s * s;
    vf poly = splat(1.0f / 9);
    poly = poly * z + splat(1.0f / 7);
    poly = poly * z + splat(1.0f / 5);
    poly = poly * z + splat(1.0f / 3);
    const vf s2 = s + s;
    const vf log1p = s2 + s2 * (z * poly);
    const vf ef = __builtin_convertvector(e, vf);
    vf out = ef * splat(0.693145751953125f) + (log1p + ef * splat(1.428606765330187045e-06f));
    out = select(x == splat(0.0f), splat(-kInf), out);
    out = select(x == splat(kInf), splat(kInf), out);
    return select(x >= splat(0.0f), out, splat(std::numeric_limits<float>::quiet_NaN()));
}

// The tail of an array (count < L values) copied into a vector padded with `pad`, and back.
ATTNSCOPE_INLINE vf loadTail(const float* x, std::int64_t count, float pad) {
    float buffer[L];
    for (int l = 0; l < L; ++l) buffer[l] = l < count ? x[l] : pad;
    return load(buffer);
}
ATTNSCOPE_INLINE void storeTail(float* out, vf v, std::int64_t count) {
    float buffer[L];
    store(buffer, v);
    std::memcpy(out, buffer, static_cast<std::size_t>(count) * sizeof(float));
}

// sum += v, v's 16 floats added into 8 double lanes (the softmax's sum, exact to ~1e-16).
ATTNSCOPE_INLINE void addWide(vd8& sum, vf v) {
    const vf8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
    const vf8 b = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    sum += __builtin_convertvector(a, vd8) + __builtin_convertvector(b, vd8);
}

void fillNan(float* row, std::int64_t width) {
    for (std::int64_t j = 0; j < width; ++j) row[j] = std::numeric_limits<float>::quiet_NaN();
}

}  // namespace

ATTNSCOPE_CLONES void expInto(const float* x, float* out, std::int64_t n) {
    std::int64_t i = 0;
    for (; i + L <= n; i += L) store(out + i, expV(load(x + i)));
    if (i < n) storeTail(out + i, expV(loadTail(x + i, n - i, 0.0f)), n - i);
}

ATTNSCOPE_CLONES void logInto(const float* x, float* out, std::int64_t n) {
    std::int64_t i = 0;
    for (; i + L <= n; i += L) store(out + i, logV(load(x + i)));
    if (i < n) storeTail(out + i, logV(loadTail(x + i, n - i, 1.0f)), n - i);
}

// expRow's work; with Logs, also logs[begin, end) = x - max (the exp's argument), -inf outside,
// all NaN for a NaN row, and *total = Σ exp(x - max) in double.
template <bool Logs>
ATTNSCOPE_INLINE float expRowImpl(float* row, float* logs, std::int64_t width, std::int64_t begin, std::int64_t end,
                                  double* total) {
    if (begin < 0) begin = 0;
    if (end > width) end = width;
    if (end <= begin) {
        fillNan(row, width);
        if (Logs) fillNan(logs, width);
        return std::numeric_limits<float>::quiet_NaN();
    }
    std::memset(row, 0, static_cast<std::size_t>(begin) * sizeof(float));
    std::memset(row + end, 0, static_cast<std::size_t>(width - end) * sizeof(float));
    if (Logs) {
        std::fill(logs, logs + begin, -kInf);
        std::fill(logs + end, logs + width, -kInf);
    }
    float* p = row + begin;
    float* lg = Logs ? logs + begin : nullptr;
    const std::int64_t w = end - begin;
    // The maximum, and whether a NaN is among the values (ATen's softmax propagates it).
    vf mx = splat(-kInf);
    vi nan = splati(0);
    std::int64_t j = 0;
    for (; j + L <= w; j += L) {
        const vf v = load(p + j);
        nan = v != v ? splati(1) : nan;
        mx = select(v > mx, v, mx);
    }
    float best = -kInf;
    bool bad = false;
    for (int l = 0; l < L; ++l) best = mx[l] > best ? mx[l] : best, bad |= nan[l] != 0;
    for (; j < w; ++j) best = p[j] > best ? p[j] : best, bad |= p[j] != p[j];
    if (bad || best == -kInf || best == kInf) {
        fillNan(row, width);
        if (Logs) fillNan(logs, width);
        return std::numeric_limits<float>::quiet_NaN();
    }
    // exp(x - max) stored and summed in the same pass. The sum: 8 vectors
    // (128 values) at a time in float lanes, those partial sums in double.
    const vf shift = splat(best);
    vd8 sum = {0, 0, 0, 0, 0, 0, 0, 0};
    j = 0;
    for (; j + 8 * L <= w; j += 8 * L) {
        vf part = splat(0.0f);
        for (int k = 0; k < 8; ++k) {
            const vf d = load(p + j + k * L) - shift;
            if (Logs) store(lg + j + k * L, d);
            const vf a = expV(d);
            store(p + j + k * L, a);
            part += a;
        }
        addWide(sum, part);
    }
    for (; j + L <= w; j += L) {
        const vf d = load(p + j) - shift;
        if (Logs) store(lg + j, d);
        const vf a = expV(d);
        store(p + j, a);
        addWide(sum, a);
    }
    if (j < w) {
        const vf d = loadTail(p + j, w - j, -kInf) - shift;
        if (Logs) storeTail(lg + j, d, w - j);
        const vf a = expV(d);
        storeTail(p + j, a, w - j);
        addWide(sum, a);  // the padding's lanes are exp(-inf) = 0
    }
    double all = 0;
    for (int l = 0; l < L / 2; ++l) all += sum[l];
    if (total) *total = all;
    return static_cast<float>(1.0 / all);
}

ATTNSCOPE_CLONES float expRow(float* row, std::int64_t width, std::int64_t begin, std::int64_t end) {
    return expRowImpl<false>(row, nullptr, width, begin, end, nullptr);
}

ATTNSCOPE_CLONES void softmaxRowLogs(float* row, float* logs, std::int64_t width, std::int64_t begin,
                                     std::int64_t end) {
    double total = 0;
    const float inverse = expRowImpl<true>(row, logs, width, begin, end, &total);
    if (inverse != inverse) return;  // a NaN row
    begin = std::max<std::int64_t>(begin, 0);
    end = std::min(end, width);
    float* p = row + begin;
    float* lg = logs + begin;
    const std::int64_t w = end - begin;
    const float logTotal = static_cast<float>(std::log(total));
    const vf scale = splat(inverse), shift = splat(logTotal);
    std::int64_t j = 0;
    for (; j + L <= w; j += L) {
        store(p + j, load(p + j) * scale);
        store(lg + j, load(lg + j) - shift);
    }
    for (; j < w; ++j) p[j] *= inverse, lg[j] -= logTotal;
}

ATTNSCOPE_CLONES void softmaxRow(float* row, std::int64_t width, std::int64_t begin, std::int64_t end) {
    const float inverse = expRow(row, width, begin, end);
    if (inverse != inverse) return;  // a NaN row
    begin = std::max<std::int64_t>(begin, 0);
    end = std::min(end, width);
    float* p = row + begin;
    const std::int64_t w = end - begin;
    const vf scale = splat(inverse);
    std::int64_t j = 0;
    for (; j + L <= w; j += L) store(p + j, load(p + j) * scale);
    for (; j < w; ++j) p[j] *= inverse;
}

ATTNSCOPE_CLONES void normaliseRow(float* row, std::int64_t width, std::int64_t begin, std::int64_t end) {
    if (begin < 0) begin = 0;
    if (end > width) end = width;
    if (end < begin) end = begin;
    std::memset(row, 0, static_cast<std::size_t>(begin) * sizeof(float));
    std::memset(row + end, 0, static_cast<std::size_t>(width - end) * sizeof(float));
    float* p = row + begin;
    const std::int64_t w = end - begin;
    vd8 sum = {0, 0, 0, 0, 0, 0, 0, 0};
    std::int64_t j = 0;
    for (; j + 8 * L <= w; j += 8 * L) {
        vf part = load(p + j);
        for (int k = 1; k < 8; ++k) part += load(p + j + k * L);
        addWide(sum, part);
    }
    for (; j + L <= w; j += L) addWide(sum, load(p + j));
    double total = 0;
    for (int l = 0; l < L / 2; ++l) total += sum[l];
    for (; j < w; ++j) total += p[j];
    if (total <= 0) return;
    const float s = static_cast<float>(total);
    const vf divisor = splat(s);
    j = 0;
    for (; j + L <= w; j += L) store(p + j, load(p + j) / divisor);
    for (; j < w; ++j) p[j] /= s;
}

}  // namespace attnscope::vmath
