// Google Benchmark: Trace::map for one head of a GPT-2-small-shaped layer (random weights).
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "attnscope/analysis/rollout.h"
#include "gpt2_fixture.h"

#include <benchmark/benchmark.h>

#include <cmath>
#include <map>
#include <random>

using namespace attnscope;

namespace {

std::shared_ptr<const Model> smallModel(int positions) {
    static std::map<int, std::shared_ptr<const Model>> cache;
    auto& m = cache[positions];
    if (!m) {
        testing::Gpt2Spec spec;
        spec.vocab = 64;
        spec.positions = positions;
        spec.embd = 768;
        spec.heads = 12;
        spec.layers = 1;
        const auto dir = testing::freshDir("bench-map");
        testing::writeGpt2Folder(dir, testing::makeGpt2(spec, 1));
        m = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});
    }
    return m;
}

void BM_HeadMap(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    auto model = smallModel(n);
    std::vector<std::int64_t> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = i % 64;
    auto trace = model->forward(ids);
    for (auto _ : state) benchmark::DoNotOptimize(trace->map(0, 0, 3, MapOptions{0.7}));
    state.SetLabel("n=" + std::to_string(n));
}
BENCHMARK(BM_HeadMap)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);

// Trace::map for each variant at 1024 tokens: 0 dot, 1 linear elu+1, 2 linear relu,
// 3 FAVOR+ (256 features).
void BM_HeadMapVariant(benchmark::State& state) {
    const int n = 1024;
    auto model = smallModel(n);
    std::vector<std::int64_t> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = i % 64;
    auto trace = model->forward(ids);
    MapOptions o;
    const char* names[] = {"dot", "linear-elu", "linear-relu", "favor-256"};
    const int which = static_cast<int>(state.range(0));
    o.variant = which == 0 ? MapVariant::Dot : MapVariant::Linear;
    o.featureMap = which == 2 ? FeatureMap::Relu : which == 3 ? FeatureMap::Favor : FeatureMap::Elu;
    for (auto _ : state) benchmark::DoNotOptimize(trace->map(0, 0, 3, o));
    state.SetLabel(names[which]);
}
BENCHMARK(BM_HeadMapVariant)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// Attention flow (max-flow) over 12 layers of random causal or full maps of n tokens.
void BM_AttentionFlow(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    const bool causal = state.range(1) != 0;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::vector<HeadMap> layers;
    for (int l = 0; l < 12; ++l) {
        HeadMap m{n, n, std::vector<float>(static_cast<std::size_t>(n) * n, 0.f)};
        for (int i = 0; i < n; ++i) {
            float sum = 0;
            for (int j = 0; j <= (causal ? i : n - 1); ++j) sum += m.values[i * n + j] = std::pow(u(rng), 4.f);
            for (int j = 0; j < n; ++j) m.values[i * n + j] /= sum;
        }
        layers.push_back(std::move(m));
    }
    for (auto _ : state) benchmark::DoNotOptimize(attentionFlow(layers));
    state.SetLabel(std::string(causal ? "causal" : "full") + ", 12 layers, n=" + std::to_string(n));
}
BENCHMARK(BM_AttentionFlow)
        ->Args({16, 1})
        ->Args({32, 1})
        ->Args({64, 1})
        ->Args({16, 0})
        ->Args({32, 0})
        ->Args({64, 0})
        ->Unit(benchmark::kMillisecond);

}  // namespace
