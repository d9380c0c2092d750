#include "additive_cpu.h"

#include <algorithm>
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif
#include <thread>
#include <vector>

namespace attnscope {

namespace {

// One query row: out[j] = Σ_w v_w / (1 + ea_w · eb[w][j]) for j < keys. Portable version.
void rowSumsPortable(const float* ea, const float* ebT, const float* v, float* out, int keys, int m, int w) {
    for (int j = 0; j < keys; ++j) out[j] = 0.f;
    for (int c = 0; c < w; ++c) {
        const float a = ea[c], vc = v[c];
        const float* eb = ebT + static_cast<std::size_t>(c) * m;
        for (int j = 0; j < keys; ++j) out[j] += vc / (1.f + a * eb[j]);
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
// AVX2 + FMA: 64 keys per tile held in 8 registers across the whole sum over w, and the divide
// replaced by a reciprocal estimate refined by one Newton step (relative error ~1e-7; the
// denominator is >= 1 and < 2^116, inside rcpps's range).
__attribute__((target("avx2,fma"))) void rowSumsAvx2(const float* ea, const float* ebT, const float* v, float* out,
                                                     int keys, int m, int w) {
    const __m256 one = _mm256_set1_ps(1.f), two = _mm256_set1_ps(2.f);
    int j = 0;
    for (; j + 64 <= keys; j += 64) {
        __m256 acc[8];
        for (int t = 0; t < 8; ++t) acc[t] = _mm256_setzero_ps();
        for (int c = 0; c < w; ++c) {
            const __m256 a = _mm256_set1_ps(ea[c]), vc = _mm256_set1_ps(v[c]);
            const float* eb = ebT + static_cast<std::size_t>(c) * m + j;
            for (int t = 0; t < 8; ++t) {
                const __m256 x = _mm256_fmadd_ps(a, _mm256_loadu_ps(eb + 8 * t), one);
                __m256 r = _mm256_rcp_ps(x);
                r = _mm256_mul_ps(r, _mm256_fnmadd_ps(x, r, two));
                acc[t] = _mm256_fmadd_ps(vc, r, acc[t]);
            }
        }
        for (int t = 0; t < 8; ++t) _mm256_storeu_ps(out + j + 8 * t, acc[t]);
    }
    if (j < keys) rowSumsPortable(ea, ebT + j, v, out + j, keys - j, m, w);
}
#endif

using AdditiveRowSums = void (*)(const float*, const float*, const float*, float*, int, int, int);

AdditiveRowSums pickRowSums() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return rowSumsAvx2;
#endif
    return rowSumsPortable;
}

}  // namespace

at::Tensor additiveLogitsCpu(const at::Tensor& qa, const at::Tensor& ka, const at::Tensor& v, bool causal) {
    if (qa.abs().max().item<float>() > 20.f || ka.abs().max().item<float>() > 20.f) return {};
    const int n = static_cast<int>(qa.size(0)), m = static_cast<int>(ka.size(0)), w = static_cast<int>(qa.size(1));
    const at::Tensor ea = (qa * 2).exp_().contiguous();       // [n, w]
    const at::Tensor ebT = (ka * 2).exp_().t().contiguous();  // [w, m]
    const at::Tensor vc = v.contiguous();
    const float vSum = vc.sum().item<float>();
    at::Tensor logits = at::zeros({n, m}, qa.options());
    const float* eaP = ea.data_ptr<float>();
    const float* ebP = ebT.data_ptr<float>();
    const float* vP = vc.data_ptr<float>();
    float* outP = logits.data_ptr<float>();
    static const AdditiveRowSums rowSums = pickRowSums();
    auto work = [&](int begin, int end) {
        for (int i = begin; i < end; ++i) {
            const int keys = causal ? std::max(0, std::min(m, i + (m - n) + 1)) : m;
            float* row = outP + static_cast<std::size_t>(i) * m;
            rowSums(eaP + static_cast<std::size_t>(i) * w, ebP, vP, row, keys, m, w);
            for (int j = 0; j < keys; ++j) row[j] = vSum - 2.f * row[j];
        }
    };
    const double elements = static_cast<double>(n) * m * w;
    const int threads =
            elements < 1e6 ? 1 : static_cast<int>(std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
    if (threads == 1) {
        work(0, n);
        return logits;
    }
    // Causal rows grow with i: interleave rows in stripes so the threads get similar work.
    std::vector<std::thread> pool;
    const int stripe = 16;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int s = t * stripe; s < n; s += threads * stripe) work(s, std::min(n, s + stripe));
        });
    for (auto& th : pool) th.join();
    return logits;
}

}  // namespace attnscope
