// GPU figures for docs/benchmarks.md (hidden case, run by tests/gpu/run.sh): the achieved memory
// bandwidth of core's CUDA kernels against a device-to-device copy measured in the same process,
// and the fused softmax against LibTorch's matmul + softmax on the same inputs. Each kernel's
// output is first checked against the plain-op result, so a fast wrong kernel fails here.
#include "attention/attention_ops.h"
#include "attention/additive_cpu.h"
#include "attention/linear_attention.h"
#include "../cuda/attention_kernels.h"  // from core/src

#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

namespace cuda_kernel_rates {

using namespace attnscope;

namespace {

// Median wall time of `f` in ms over `repeat` runs after 3 warm-up runs, the GPU drained
// before and after each.
double medianMs(const std::function<void()>& f, int repeat = 20) {
    for (int i = 0; i < 3; ++i) f();
    std::vector<double> ms;
    for (int i = 0; i < repeat; ++i) {
        torch::cuda::synchronize();
        const auto t = std::chrono::steady_clock::now();
        f();
        torch::cuda::synchronize();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

void line(const char* what, double ms, double bytes, double ceiling) {
    const double rate = gbps(bytes, ms);
    std::printf("cuda-rates %-44s %8.3f ms  %7.0f GB/s  %5.1f%% of the copy, %5.1f%% of 4.8 TB/s\n", what, ms, rate,
                100 * rate / ceiling, 100 * rate / 4800);
}

}  // namespace

TEST_CASE("CUDA kernel rates", "[.cuda-rates]") {
    REQUIRE(at::hasCUDA());
    at::manual_seed(11);
    const auto gpu = at::TensorOptions().device(at::kCUDA);

    // The ceiling: a 2 GiB device-to-device copy, bytes read plus bytes written.
    const at::Tensor src = at::randn({512, 1024, 1024}, gpu), dst = at::empty_like(src);
    const double copyBytes = 2.0 * static_cast<double>(src.nbytes());
    const double copyMs = medianMs([&] { dst.copy_(src); });
    const double ceiling = gbps(copyBytes, copyMs);
    std::printf("cuda-rates %-44s %8.3f ms  %7.0f GB/s  (the ceiling below)\n", "device-to-device copy, 2 GiB", copyMs,
                ceiling);

    for (const int n : {4096, 16384}) {
        const int d = 64;
        const auto q = at::randn({n, d}, gpu), k = at::randn({n, d}, gpu);
        MaskSpec causal;
        causal.causal = true;
        const ScoreSpec score{0.125};
        // Correct first: the fused kernel against LibTorch's ops on the GPU.
        const at::Tensor fused = headProbs(q, k, causal, score, 0, 1.0);
        at::Tensor s = at::mm(q, k.t()) * 0.125;
        s.masked_fill_(at::ones({n, n}, gpu.dtype(at::kBool)).triu(1), -INFINITY);
        REQUIRE((fused - at::softmax(s, -1)).abs().max().item<double>() < 1e-5);

        // The fewest bytes: q and k read once, the [n, n] map written once.
        const double bytes = 4.0 * (2.0 * n * d + static_cast<double>(n) * n);
        char what[96];
        std::snprintf(what, sizeof what, "headProbs (cuBLAS q kT + row softmax), %d x %d", n, n);
        line(what, medianMs([&] { headProbs(q, k, causal, score, 0, 1.0); }), bytes, ceiling);
#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
        // The row softmax alone, memory-bound: the fewest bytes are the map read once and written once.
        at::Tensor scores = at::mm(q, k.t());
        std::snprintf(what, sizeof what, "  of which the in-place row softmax, %d x %d", n, n);
        line(what,
             medianMs([&] { REQUIRE(cuda::softmaxRowsInPlace(scores.data_ptr<float>(), n, n, 0.125f, true).empty()); }),
             8.0 * n * n, ceiling);
#endif
        const at::Tensor mask = at::ones({n, n}, gpu.dtype(at::kBool)).triu(1);
        std::snprintf(what, sizeof what, "LibTorch mm + mask + softmax, %d x %d", n, n);
        line(what, medianMs([&] { at::softmax((at::mm(q, k.t()) * 0.125).masked_fill_(mask, -INFINITY), -1); }), bytes,
             ceiling);

        const int w = 64;
        const auto qa = at::randn({n, w}, gpu), ka = at::randn({n, w}, gpu), v = at::randn({w}, gpu);
        std::snprintf(what, sizeof what, "fused additive softmax, %d x %d, w %d", n, n, w);
        line(what, medianMs([&] { additiveProbs(qa, ka, v, causal, 1.0); }, 5), 4.0 * (2.0 * n * w + double(n) * n),
             ceiling);
        std::printf("cuda-rates   (additive: %.1f G tanh per run; its floor is arithmetic, not bytes)\n",
                    static_cast<double>(n) * n * w / 2 / 1e9);
    }

    // Causal linear attention: 12 heads, 4,096 positions, 64 features and value columns; the
    // fewest bytes are φ(q), φ(k), v read and out written once.
    const int heads = 12, len = 4096, f = 64, dv = 64;
    const auto pq = at::rand({heads, len, f}, gpu), pk = at::rand({heads, len, f}, gpu);
    const auto v = at::randn({heads, len, dv}, gpu);
    MaskSpec causal;
    causal.causal = true;
    line("causal linear attention, 12 x 4096, f 64, dv 64", medianMs([&] { linearAttention(pq, pk, v, causal); }, 5),
         4.0 * heads * len * (2.0 * f + 2.0 * dv), ceiling);
}

}  // namespace cuda_kernel_rates
