#include "commands.h"
#include "common.h"

#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/machine_rates.h"
#include "attnscope/attention/trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <thread>

namespace attnscope::cli {

namespace {

// RssAnon from /proc/self/status (anonymous memory, not the file's page cache), in KiB; 0 when
// it cannot be read.
long long rssAnonKib() {
    std::ifstream in("/proc/self/status");
    std::string key;
    while (in >> key) {
        if (key == "RssAnon:") {
            long long kib = 0;
            in >> kib;
            return kib;
        }
        std::getline(in, key);
    }
    return 0;
}

int runBench(const std::vector<std::string>& argv) {
    Args args(argv, {"seq", "repeat", "warmup", "device", "seed", "thumbnails", "weights", "capture-dtype", "target"},
              {"json", "progress", "rates"});
    args.expectPositionals(1);
    const long long seq = args.integer("seq", 1, kMaxInt).value_or(512);
    const long long repeat = args.integer("repeat", 1, 100000).value_or(5);
    const long long warmup = args.integer("warmup", 0, 100000).value_or(1);
    const long long seed = args.integer("seed", 0, kMaxSeed).value_or(0);
    const long long thumbSide = args.integer("thumbnails", 0, 4096).value_or(0);
    const long long targetLen = args.integer("target", 1, kMaxInt).value_or(0);
    const auto open0 = std::chrono::steady_clock::now();
    auto model = loadModel(args);
    const double openMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - open0).count();
    const ModelInfo& info = model->info();
    if (targetLen > 0 && !info.encoderDecoder) throw UsageError("--target needs an encoder-decoder model");
    RunOptions run;
    applyRunFlags(args, run);
    // Checked before the ids are allocated: 10^9 tokens would take 8 GB first.
    // maxPositions 0: no position table (BLOOM's ALiBi), so no limit but memory's.
    if (!info.imageInput && info.maxPositions > 0 && seq > info.maxPositions)
        throw Error("--seq: " + std::to_string(seq) + " tokens but the model has only " + std::to_string(info.maxPositions) +
                    " positions");
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    std::vector<std::int64_t> ids;
    if (!info.imageInput) {
        std::uniform_int_distribution<std::int64_t> pick(0, info.vocabSize - 1);
        ids.resize(static_cast<std::size_t>(seq));
        for (auto& id : ids) id = pick(rng);
    }
    // Encoder-decoders: a forced target of random ids (the decoder's vocabulary is assumed to be
    // the encoder's); without --target they decode greedily (32 new tokens at most).
    TextInput forced;
    if (targetLen > 0) {
        std::uniform_int_distribution<std::int64_t> pick(0, info.vocabSize - 1);
        forced.ids = ids;
        forced.targetIds.resize(static_cast<std::size_t>(targetLen));
        for (auto& id : forced.targetIds) id = pick(rng);
    }
    // Image models run on one random image of their input size (--seq does not apply).
    RgbImage image{info.imageSize, info.imageSize, {}};
    for (int i = 0; info.imageInput && i < info.imageSize * info.imageSize * 3; ++i)
        image.pixels.push_back(static_cast<std::uint8_t>(rng() & 0xff));

    std::vector<double> ms, thumbMs;
    for (long long r = 0; r < warmup + repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        auto trace = info.imageInput ? model->forwardImage(image, run)
                     : targetLen > 0 ? model->forwardText(forced, run)
                                     : model->forward(ids, run);
        const auto t1 = std::chrono::steady_clock::now();
        if (r >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (thumbSide > 0) {  // what the overview computes after a forward: every head max-pooled
            PoolRequest pool;
            pool.outRows = pool.outCols = static_cast<int>(thumbSide);
            const BlockInfo& b = trace->blocks().front();
            for (int l = 0; l < b.layers; ++l)
                for (int h = 0; h < b.heads; ++h) trace->pooledMap(0, l, h, pool);
            if (r >= warmup)
                thumbMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count());
        }
    }
    // --rates: the issue-14 target, 2 × (FLOPs at the measured GEMM rate + one pass over the
    // weights at the measured read rate). FLOPs ≈ 2 · tokens · (parameters − vocab · hidden):
    // every matrix once per token, the embedding gathered (an untied head counts per token, so
    // this overstates by 2 · tokens · vocab · hidden for those).
    nlohmann::json rates;
    if (args.flag("rates") && !info.imageInput) {
        const MachineRates m = measureRates(seq, info.hidden, info.hidden * 7 / 2);
        const double flops = 2.0 * seq * (static_cast<double>(info.parameters) - static_cast<double>(info.vocabSize) * info.hidden);
        const double bytes = static_cast<double>(info.parameters) * (info.dtype == "F32" ? 4 : 2);
        const double target = 2 * (flops / (m.gemmF32Gflops * 1e9) + bytes / (m.readGBps * 1e9));
        rates = {{"gemm_f32_gflops", m.gemmF32Gflops}, {"gemm_bf16_gflops", m.gemmBf16Gflops}, {"read_gbps", m.readGBps},
                 {"convert_bf16_gbps", m.convertGBps}, {"flops", flops}, {"weight_bytes", bytes}, {"target_ms", target * 1e3}};
    }
    std::sort(thumbMs.begin(), thumbMs.end());
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2], best = ms.front();
    if (args.flag("json")) {
        nlohmann::json j = {{"family", info.family}, {"seq", seq}, {"device", info.device}, {"runs", ms},
                            {"median_ms", median}, {"min_ms", best}, {"threads", std::thread::hardware_concurrency()}};
        if (!thumbMs.empty()) j["thumbnails_median_ms"] = thumbMs[thumbMs.size() / 2];
        j["open_ms"] = openMs;
        if (!rates.is_null()) j["rates"] = rates;
        j["weights"] = info.weights;
        j["rss_anon_peak_kib"] = rssAnonKib();
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << std::fixed << std::setprecision(1) << "forward+capture " << info.family << " " << info.layers << "x"
                  << info.heads << "x" << info.hidden << ", "
                  << (info.imageInput ? std::to_string(info.maxPositions) + " tokens (CLS + patches)" : std::to_string(seq) + " tokens") << " on " << info.device << ": median "
                  << median << " ms, min " << best << " ms over " << repeat << " runs\n";
        std::cout << "open " << openMs << " ms; weights " << info.weights << "; RssAnon " << rssAnonKib() / 1024.0
                  << " MiB after the runs\n";
        if (!rates.is_null())
            std::cout << "rates: GEMM " << rates["gemm_f32_gflops"].get<double>() << " GFLOP/s float32, "
                      << rates["gemm_bf16_gflops"].get<double>() << " GFLOP/s bfloat16; read " << rates["read_gbps"].get<double>()
                      << " GB/s; bf16->f32 " << rates["convert_bf16_gbps"].get<double>() << " GB/s\n"
                      << "target 2 x (" << rates["flops"].get<double>() / 1e9 << " GFLOP at the GEMM rate + "
                      << rates["weight_bytes"].get<double>() / 1e9 << " GB at the read rate) = " << rates["target_ms"].get<double>()
                      << " ms\n";
        if (!thumbMs.empty())
            std::cout << "thumbnails (every head of block 0, max-pooled to " << thumbSide << " px): median "
                      << thumbMs[thumbMs.size() / 2] << " ms, min " << thumbMs.front() << " ms\n";
    }
    return 0;
}

}  // namespace

Command benchCommand() {
    return {"bench", "time forward+capture",
    "usage: attnscope-cli bench MODEL [--seq N] [--repeat R] [--warmup W] [--device cpu|cuda|auto] [--seed S]\n"
    "                          [--thumbnails PX] [--target T] [--json] [--weights auto|convert|stream]\n"
    "                          [--capture-dtype compute|float16|bfloat16] [--progress] [--rates]\n\n"
    "Times forward+capture on N random token ids (default 512), R timed runs after W warm-up runs.\n"
    "Image models (ViT) run on a random image of their input size instead.\n"
    "--thumbnails PX also times what the overview computes after each forward: every head of the first\n"
    "block max-pooled to PX x PX (Trace::pooledMap).\n"
    "Also prints the open time, how the weights are held and RssAnon (anonymous memory, /proc/self/status).\n"
    "--rates also measures this machine's float32 and bfloat16 GEMM rates (tokens x hidden x 3.5 hidden),\n"
    "its read bandwidth and bf16->f32 conversion rate, and prints the target 2 x (FLOPs at the GEMM rate +\n"
    "the weights' bytes at the read rate).\n"
    "--target T: encoder-decoders run forced on T random target ids (else they decode greedily).\n",
            runBench};
}

}  // namespace attnscope::cli
