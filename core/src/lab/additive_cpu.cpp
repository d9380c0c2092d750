#include "additive_cpu.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace attnscope {

namespace {

// One query row: out[j] += v_w / (1 + ea_w · eb[w][j]) over w, j < keys. Compiled for AVX2 and
// the baseline; the loader picks one (GCC/Clang function multiversioning on x86-64).
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void rowSums(const float* ea, const float* ebT, const float* v, float* out, int keys, int m, int w) {
    for (int j = 0; j < keys; ++j) out[j] = 0.f;
    for (int c = 0; c < w; ++c) {
        const float a = ea[c], vc = v[c];
        const float* eb = ebT + static_cast<std::size_t>(c) * m;
        for (int j = 0; j < keys; ++j) out[j] += vc / (1.f + a * eb[j]);
    }
}

}  // namespace

at::Tensor additiveLogitsCpu(const at::Tensor& qa, const at::Tensor& ka, const at::Tensor& v, bool causal) {
    if (qa.abs().max().item<float>() > 20.f || ka.abs().max().item<float>() > 20.f) return {};
    const int n = static_cast<int>(qa.size(0)), m = static_cast<int>(ka.size(0)), w = static_cast<int>(qa.size(1));
    const at::Tensor ea = (qa * 2).exp_().contiguous();           // [n, w]
    const at::Tensor ebT = (ka * 2).exp_().t().contiguous();      // [w, m]
    const at::Tensor vc = v.contiguous();
    const float vSum = vc.sum().item<float>();
    at::Tensor logits = at::zeros({n, m}, qa.options());
    const float* eaP = ea.data_ptr<float>();
    const float* ebP = ebT.data_ptr<float>();
    const float* vP = vc.data_ptr<float>();
    float* outP = logits.data_ptr<float>();
    auto work = [&](int begin, int end) {
        for (int i = begin; i < end; ++i) {
            const int keys = causal ? std::max(0, std::min(m, i + (m - n) + 1)) : m;
            float* row = outP + static_cast<std::size_t>(i) * m;
            rowSums(eaP + static_cast<std::size_t>(i) * w, ebP, vP, row, keys, m, w);
            for (int j = 0; j < keys; ++j) row[j] = vSum - 2.f * row[j];
        }
    };
    const double elements = static_cast<double>(n) * m * w;
    const int threads = elements < 1e6 ? 1 : static_cast<int>(std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
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
