// Google Benchmark: Trace::map for one head of a GPT-2-small-shaped layer (random weights).
#include "attnscope/model.h"
#include "attnscope/trace.h"
#include "gpt2_fixture.h"

#include <benchmark/benchmark.h>

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

}  // namespace

BENCHMARK_MAIN();
