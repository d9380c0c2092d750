// Google Benchmark: each attention variant as AttnScope computes it (core) against the same
// computation composed from plain LibTorch ops (plain), one head of width d = 64, causal, on
// the CPU; time and peak tensor memory (counter peak_MiB: the most bytes of LibTorch CPU tensors
// alive at once during an iteration, recorded through c10's memory-reporting hook).
//   maps     n×n probabilities: dot, linear elu+1, FAVOR+ (M = 256), additive (width 64)
//   outputs  attention output [n, 64]: dot (softmax(QKᵀ)V, n² memory) vs causal linear attention
//            (core: chunked prefix sums; plain: cumsum over an [n, f, d] tensor, and quadratic)
// Results are written down in docs/benchmarks.md.
#include "attention/attention_ops.h"
#include "runtime/device.h"
#include "attention/favor.h"
#include "attention/linear_attention.h"
#include "analysis/lower_bands.h"

#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <limits>

using namespace attnscope;

namespace {

constexpr std::int64_t kDim = 64;

class PeakMemory : public c10::MemoryReportingInfoBase {
public:
    void reportMemoryUsage(void*, int64_t size, int64_t, int64_t, c10::Device) override {
        current_ += size;
        peak_ = std::max(peak_, current_);
    }
    bool memoryProfilingEnabled() const override { return true; }
    std::int64_t peak() const { return peak_; }

private:
    std::int64_t current_ = 0, peak_ = 0;
};

struct Inputs {
    at::Tensor q, k, v;
    MaskSpec mask;
    double scale = 1 / std::sqrt(double(kDim));
};

Inputs inputs(std::int64_t n) {
    resolveDevice(DeviceChoice::Cpu);  // the engine's threading and allocator policy
    at::manual_seed(0);
    Inputs in;
    in.q = at::randn({n, kDim});
    in.k = at::randn({n, kDim});
    in.v = at::randn({n, kDim});
    in.mask.causal = true;
    return in;
}

at::Tensor causalAdditive(std::int64_t n) { return at::full({n, n}, -std::numeric_limits<float>::infinity()).triu_(1); }

// Runs fn each iteration; reports peak tensor memory of one extra, tracked run.
template <typename Fn>
void run(benchmark::State& state, Fn&& fn) {
    for (auto _ : state) benchmark::DoNotOptimize(fn());
    auto peak = std::make_shared<PeakMemory>();
    {
        c10::DebugInfoGuard guard(c10::DebugInfoKind::PROFILER_STATE, peak);
        benchmark::DoNotOptimize(fn());
    }
    state.counters["peak_MiB"] = static_cast<double>(peak->peak()) / (1 << 20);
}

// ---- maps ----
void BM_DotMap_Core(benchmark::State& s) {
    auto in = inputs(s.range(0));
    run(s, [&] { return headProbs(in.q, in.k, in.mask, ScoreSpec{in.scale}, 0, 1.0); });
}
void BM_DotMap_Plain(benchmark::State& s) {
    auto in = inputs(s.range(0));
    run(s, [&] { return at::softmax(at::mm(in.q, in.k.t()) * in.scale + causalAdditive(in.q.size(0)), -1); });
}
void BM_LinearMap_Core(benchmark::State& s) {
    auto in = inputs(s.range(0));
    run(s, [&] { return linearProbs(in.q, in.k, in.mask, FeatureMap::Elu); });
}
void BM_LinearMap_Plain(benchmark::State& s) {
    auto in = inputs(s.range(0));
    run(s, [&] {
        at::Tensor a = at::mm(at::elu(in.q) + 1, (at::elu(in.k) + 1).t()).tril();
        return a / a.sum(-1, true);
    });
}
void BM_FavorMap_Core(benchmark::State& s) {
    auto in = inputs(s.range(0));
    run(s, [&] { return favorProbs(in.q, in.k, in.mask, in.scale, 256, 0); });
}
void BM_FavorMap_Plain(benchmark::State& s) {
    auto in = inputs(s.range(0));
    const at::Tensor w = favorFeatures(kDim, 256, 0);
    const double r = std::sqrt(in.scale);
    run(s, [&] {
        auto phi = [&](const at::Tensor& x) {
            return at::exp(at::mm(x * r, w.t()) - (x * r).pow(2).sum(-1, true) / 2);
        };
        at::Tensor a = at::mm(phi(in.q), phi(in.k).t()).tril();
        return a / a.sum(-1, true);
    });
}
void BM_AdditiveMap_Core(benchmark::State& s) {
    auto in = inputs(s.range(0));
    const at::Tensor w = at::randn({kDim}) / 8;
    const at::Tensor qa = in.q / 4, ka = in.k / 4;
    run(s, [&] { return additiveProbs(qa, ka, w, in.mask, 1.0); });
}
void BM_AdditiveMap_Plain(benchmark::State& s) {
    auto in = inputs(s.range(0));
    const at::Tensor w = at::randn({kDim}) / 8;
    const at::Tensor qa = in.q / 4, ka = in.k / 4;
    run(s, [&] {
        return at::softmax(at::matmul(at::tanh(qa.unsqueeze(1) + ka.unsqueeze(0)), w) + causalAdditive(qa.size(0)), -1);
    });
}

// ---- attention outputs ----
void BM_DotOutput_Core(benchmark::State& s) {
    auto in = inputs(s.range(0));
    const at::Tensor q = in.q.unsqueeze(0), k = in.k.unsqueeze(0), v = in.v.unsqueeze(0);
    run(s, [&] { return attendDot(q, k, v, in.mask, ScoreSpec{in.scale}, LayerRun{}); });
}
void BM_DotOutput_Plain(benchmark::State& s) {
    auto in = inputs(s.range(0));
    run(s, [&] {
        return at::mm(at::softmax(at::mm(in.q, in.k.t()) * in.scale + causalAdditive(in.q.size(0)), -1), in.v);
    });
}
void BM_LinearOutput_Core(benchmark::State& s) {
    auto in = inputs(s.range(0));
    const at::Tensor q = in.q.unsqueeze(0), k = in.k.unsqueeze(0), v = in.v.unsqueeze(0);
    run(s, [&] { return linearAttention(at::elu(q) + 1, at::elu(k) + 1, v, in.mask); });
}
void BM_LinearOutput_PlainCumsum(benchmark::State& s) {
    auto in = inputs(s.range(0));
    run(s, [&] {
        const at::Tensor pq = at::elu(in.q) + 1, pk = at::elu(in.k) + 1;
        const at::Tensor kv = at::cumsum(pk.unsqueeze(2) * in.v.unsqueeze(1), 0);  // [n, f, d]
        const at::Tensor num = at::bmm(pq.unsqueeze(1), kv).squeeze(1);
        return num / (pq * at::cumsum(pk, 0)).sum(-1, true);
    });
}
void BM_LinearOutput_PlainQuadratic(benchmark::State& s) {
    auto in = inputs(s.range(0));
    run(s, [&] {
        at::Tensor a = at::mm(at::elu(in.q) + 1, (at::elu(in.k) + 1).t()).tril();
        return at::mm(a, in.v) / a.sum(-1, true);
    });
}

void maps(benchmark::internal::Benchmark* b, std::int64_t largest) {
    for (std::int64_t n = 256; n <= largest; n *= 2) b->Arg(n);
    if (largest == 16384)  // attention outputs: finer steps around where linear overtakes dot
        for (std::int64_t n : {128, 192, 320, 384, 448}) b->Arg(n);
    // Wall time, and CPU time of the whole process (BLAS threads included): on a shared machine
    // the second is the steadier measure of the work done.
    b->Unit(benchmark::kMillisecond)->MinTime(0.2)->UseRealTime()->MeasureProcessCPUTime();
}

// The rollout's products over causal layer means (rolloutInPlace, the JSON of `metrics`): 12
// layers of row-stochastic lower-triangular n×n maps, as LowerBands.
void BM_RolloutBands(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0)), L = 12;
    std::vector<std::vector<float>> rows(static_cast<std::size_t>(L));
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (auto& m : rows) {
        m.assign(static_cast<std::size_t>(n) * n, 0.0f);
        for (int i = 0; i < n; ++i) {
            float sum = 0;
            for (int j = 0; j <= i; ++j) sum += m[std::size_t(i) * n + j] = u(rng);
            for (int j = 0; j <= i; ++j) m[std::size_t(i) * n + j] /= sum;
        }
    }
    for (auto _ : state) {
        state.PauseTiming();
        std::vector<LowerBands> layers;
        for (const auto& m : rows) {
            layers.emplace_back(n);
            for (int i = 0; i < n; ++i)
                std::copy_n(m.data() + std::size_t(i) * n, layers.back().rowWidth(i), layers.back().row(i));
        }
        state.ResumeTiming();
        rolloutInPlace(layers, 0.5);
        benchmark::DoNotOptimize(layers.back().row(n - 1)[0]);
    }
}

}  // namespace

BENCHMARK(BM_RolloutBands)->Arg(2048)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_DotMap_Core)->Apply([](auto* b) { maps(b, 8192); });
BENCHMARK(BM_DotMap_Plain)->Apply([](auto* b) { maps(b, 8192); });
BENCHMARK(BM_LinearMap_Core)->Apply([](auto* b) { maps(b, 8192); });
BENCHMARK(BM_LinearMap_Plain)->Apply([](auto* b) { maps(b, 8192); });
BENCHMARK(BM_FavorMap_Core)->Apply([](auto* b) { maps(b, 8192); });
BENCHMARK(BM_FavorMap_Plain)->Apply([](auto* b) { maps(b, 8192); });
BENCHMARK(BM_AdditiveMap_Core)->Apply([](auto* b) { maps(b, 8192); });
BENCHMARK(BM_AdditiveMap_Plain)->Apply([](auto* b) { maps(b, 2048); });  // [n, n, 64] floats: 1 GiB at 2048
BENCHMARK(BM_DotOutput_Core)->Apply([](auto* b) { maps(b, 16384); });
BENCHMARK(BM_DotOutput_Plain)->Apply([](auto* b) { maps(b, 16384); });
BENCHMARK(BM_LinearOutput_Core)->Apply([](auto* b) { maps(b, 16384); });
BENCHMARK(BM_LinearOutput_PlainCumsum)->Apply([](auto* b) { maps(b, 16384); });
BENCHMARK(BM_LinearOutput_PlainQuadratic)->Apply([](auto* b) { maps(b, 16384); });
