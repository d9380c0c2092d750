// The gradient sources against the forward + capture of the weights (issue 31's target:
// grad-weighted ≤ 4×), and the backward's peak memory. Runs the two alternately in one process
// (so a loaded machine slows both alike) and prints the medians of wall and CPU time and the
// peak resident memory (VmHWM) the gradient run adds above the forward's.
//   attnscope_bench_gradient_sources MODEL [--seq N] [--repeat R]
#include "attnscope/runtime/allocator.h"
#include "attnscope/runtime/blas_kernels.h"
#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/attention/trace.h"
#include "attnscope/models/model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace attnscope;

namespace {

// Peak resident memory of the process so far, in MiB (/proc/self/status VmHWM).
double peakMiB() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    return 0;
}

struct Times {
    std::vector<double> wall, cpu;
};

template <class F>
void timeOnce(Times& t, const F& f) {
    const auto w0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    f();
    t.cpu.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    t.wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    attnscope::ensureBlasKernels(argv);  // the kernels the app runs (bench_main.cpp)
    attnscope::shortenBlasSpin();
    attnscope::tuneAllocator();
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODEL [--seq N] [--repeat R]\n", argv[0]);
        return 1;
    }
    int seq = 512, repeat = 3;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--seq") seq = std::stoi(argv[i + 1]);
        if (a == "--repeat") repeat = std::stoi(argv[i + 1]);
    }
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    load.weights = WeightPlan::Convert;
    const auto model = Model::load(argv[1], load);
    std::mt19937 rng(1);
    GradientInput in;
    for (int i = 0; i < seq; ++i) in.text.ids.push_back(static_cast<std::int64_t>(rng() % model->info().vocabSize));

    model->forward(in.text.ids);  // warm-up: weights touched, allocator and BLAS ready
    const double afterForward = peakMiB();
    Times forward, gradient;
    for (int r = 0; r < repeat; ++r) {
        timeOnce(forward, [&] { model->forward(in.text.ids); });
        timeOnce(gradient, [&] { gradientSources(*model, in, GradientTarget{}); });
    }
    const double afterGradient = peakMiB();
    std::printf("%d tokens, %d runs each (alternating)\n", seq, repeat);
    std::printf("forward + capture: median %.3f s wall, %.3f s CPU\n", median(forward.wall), median(forward.cpu));
    std::printf("grad-weighted + relevance: median %.3f s wall, %.3f s CPU\n", median(gradient.wall),
                median(gradient.cpu));
    std::printf("ratio: %.2fx wall, %.2fx CPU\n", median(gradient.wall) / median(forward.wall),
                median(gradient.cpu) / median(forward.cpu));
    std::printf(
            "peak RSS: %.0f MiB after the forwards, %.0f MiB after the gradient runs (+%.0f MiB); estimate %.0f MiB\n",
            afterForward, afterGradient, afterGradient - afterForward,
            static_cast<double>(gradientSourcesBytes(model->info(), seq)) / (1024.0 * 1024.0));
    return 0;
}
