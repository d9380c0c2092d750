#include "attnscope/runtime/machine_rates.h"

#include "bf16.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace attnscope {

namespace {

// Best of `repeat` timed calls after one warm-up, in seconds.
template <typename Fn>
double bestSeconds(int repeat, Fn fn) {
    fn();
    double best = 1e30;
    for (int r = 0; r < repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

// `work(begin, end)` over [0, count) split across the cores.
template <typename Fn>
void onEveryCore(std::size_t count, Fn work) {
    const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> threads;
    const std::size_t per = (count + workers - 1) / workers;
    for (unsigned w = 0; w < workers; ++w) {
        const std::size_t b = std::min(count, per * w), e = std::min(count, b + per);
        threads.emplace_back(work, b, e);
    }
    for (auto& t : threads) t.join();
}

}  // namespace

MachineRates measureRates(std::int64_t m, std::int64_t k, std::int64_t n) {
    c10::InferenceMode guard;
    MachineRates r;
    const at::Tensor a = at::randn({m, k}), b = at::randn({k, n});
    const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
    r.gemmF32Gflops = flops / bestSeconds(3, [&] { (void)at::mm(a, b); }) / 1e9;
    const at::Tensor ah = a.to(at::kBFloat16), bh = b.to(at::kBFloat16);
    r.gemmBf16Gflops = flops / bestSeconds(2, [&] { (void)at::mm(ah, bh); }) / 1e9;

    // 1 GiB of 64-bit words, summed on every core: what reading weights once costs.
    const std::size_t words = (1ull << 30) / 8;
    std::vector<std::uint64_t> data(words, 1);
    std::vector<std::uint64_t> sums(std::max(1u, std::thread::hardware_concurrency()) + 1, 0);
    const double read = bestSeconds(3, [&] {
        onEveryCore(words, [&](std::size_t begin, std::size_t end) {
            std::uint64_t s = 0;
            for (std::size_t i = begin; i < end; ++i) s += data[i];
            sums[begin * (sums.size() - 1) / std::max<std::size_t>(1, words)] += s;
        });
    });
    r.readGBps = (1ull << 30) / read / 1e9;

    // The streamed forward's conversion: 1 GiB of bf16 into 2 GiB of float32 (a shift per value).
    const std::size_t halves = (1ull << 30) / 2;
    const auto* src = reinterpret_cast<const std::uint16_t*>(data.data());
    std::vector<float> out(halves);
    const auto convertWith = [&](void (*kernel)(const std::uint16_t*, float*, std::int64_t)) {
        return (1ull << 30) /
               bestSeconds(3,
                           [&] {
                               onEveryCore(halves, [&](std::size_t begin, std::size_t end) {
                                   kernel(src + begin, out.data() + begin, static_cast<std::int64_t>(end - begin));
                               });
                           }) /
               1e9;
    };
    r.convertGBps = convertWith(bf16ToFloat32);
    r.convertCachedGBps = convertWith(bf16ToFloat32Cached);

    // One streamed matrix W [n, k] stored in BF16, applied to x [m, k]: converted then float32,
    // or BF16 directly.
    const at::Tensor wh = at::randn({n, k}).to(at::kBFloat16), x = a;
    at::Tensor wf = at::empty({n, k});
    const auto* wbits = reinterpret_cast<const std::uint16_t*>(wh.data_ptr());
    r.convertThenF32Gflops = flops /
                             bestSeconds(2,
                                         [&] {
                                             const std::size_t count = static_cast<std::size_t>(n * k);
                                             onEveryCore(count, [&](std::size_t begin, std::size_t end) {
                                                 bf16ToFloat32(wbits + begin, wf.data_ptr<float>() + begin,
                                                               static_cast<std::int64_t>(end - begin));
                                             });
                                             (void)at::mm(x, wf.t());
                                         }) /
                             1e9;
    r.bf16DirectGflops =
            flops / bestSeconds(2, [&] { (void)at::mm(x.to(at::kBFloat16), wh.t()).to(at::kFloat); }) / 1e9;
    return r;
}

}  // namespace attnscope
