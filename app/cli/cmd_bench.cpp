#include "commands.h"
#include "common.h"

#include "attnscope/runtime/device.h"
#include "attnscope/runtime/error.h"
#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/machine_rates.h"
#include "attnscope/analysis/source_metrics.h"
#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/attention/trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <map>
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
    Args args(argv,
              {"seq", "repeat", "warmup", "device", "seed", "thumbnails", "weights", "capture-dtype", "target",
               "detail", "rollout-rows", "revision", "source", "generate"},
              {"json", "progress", "rates", "metrics", "no-cache"});
    args.expectPositionals(1);
    const long long seq = args.integer("seq", 1, kMaxInt).value_or(512);
    const long long repeat = args.integer("repeat", 1, 100000).value_or(5);
    const long long warmup = args.integer("warmup", 0, 100000).value_or(1);
    const long long seed = args.integer("seed", 0, kMaxSeed).value_or(0);
    const long long thumbSide = args.integer("thumbnails", 0, 4096).value_or(0);
    const long long detailSide = args.integer("detail", 0, 16384).value_or(0);
    const long long rolloutRows = args.integer("rollout-rows", 0, kMaxInt).value_or(0);
    const long long targetLen = args.integer("target", 1, kMaxInt).value_or(0);
    const long long genTokens = args.integer("generate", 1, kMaxInt).value_or(0);
    const auto open0 = std::chrono::steady_clock::now();
    auto model = loadModel(args);
    const double openMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - open0).count();
    const ModelInfo& info = model->info();
    if (targetLen > 0 && !info.encoderDecoder) throw UsageError("--target needs an encoder-decoder model");
    if (args.flag("no-cache") && genTokens == 0) throw UsageError("--no-cache needs --generate");
    RunOptions run;
    applyRunFlags(args, run);
    // --source S: after each forward, every map of that source for block 0 (issue 31's targets).
    const std::optional<MapSource> source =
            args.value("source") ? std::optional(parseMapSource(*args.value("source"))) : std::nullopt;
    if (source) {
        run.captureValues = sourceNeedsValues(*source);
        run.scoreTerms = sourceNeedsTerms(*source);
    }
    // Checked before the ids are allocated: 10^9 tokens would take 8 GB first.
    // maxPositions 0: no position table (BLOOM's ALiBi), so no limit but memory's.
    // Image–text models (CLIP, SigLIP): the image and `seq` random ids (--seq given, else the text
    // tower's positions) through both towers.
    const bool withText = !info.imageInput || info.imageText;
    const long long textLen = info.imageText && !args.value("seq") ? static_cast<long long>(info.maxPositions) : seq;
    if (withText && info.maxPositions > 0 && textLen > info.maxPositions)
        throw Error("--seq: " + std::to_string(textLen) + " tokens but the model has only " +
                    std::to_string(info.maxPositions) + " positions");
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    std::vector<std::int64_t> ids;
    if (withText) {
        std::uniform_int_distribution<std::int64_t> pick(0, info.vocabSize - 1);
        ids.resize(static_cast<std::size_t>(textLen));
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

    std::vector<double> ms, thumbMs, metricsMs, detailMs, zoomMs, temperatureMs, rolloutMs, sourceMs, generateMs;
    bool generationCached = false;
    // Process CPU time (every thread) beside the wall times: on a loaded machine it says what a
    // step costs when wall time mostly measures the wait for a core.
    std::map<std::string, double> cpuMs;
    const auto cpuNow = [] { return 1000.0 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC; };
    const auto since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    };
    for (long long r = 0; r < warmup + repeat; ++r) {
        double c = cpuNow();
        const auto t0 = std::chrono::steady_clock::now();
        TextInput text;
        if (info.imageText) text.ids = ids;
        auto trace = info.imageText    ? model->forwardImageText(image, text, run)
                     : info.imageInput ? model->forwardImage(image, run)
                     : targetLen > 0   ? model->forwardText(forced, run)
                                       : model->forward(ids, run);
        synchronizeDevice();  // the GPU's queued work is part of the forward's time
        const auto t1 = std::chrono::steady_clock::now();
        // Adds the CPU time since the last step to `step` (timed runs only).
        const auto charge = [&](const char* step) {
            const double now = cpuNow();
            if (r >= warmup) cpuMs[step] += now - c;
            c = now;
        };
        charge("forward");
        if (r >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (thumbSide > 0) {  // what the overview computes after a forward: every head max-pooled
            PoolRequest pool;
            pool.outRows = pool.outCols = static_cast<int>(thumbSide);
            const BlockInfo& b = trace->blocks().front();
            for (int l = 0; l < b.layers; ++l)
                for (int h = 0; h < b.heads; ++h) trace->pooledMap(0, l, h, pool);
            if (r >= warmup)
                thumbMs.push_back(
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count());
            charge("thumbnails");
        }
        const BlockInfo& b0 = trace->blocks().front();
        if (detailSide > 0) {  // the heat map of the last layer's last head at screen resolution
            const int layer = b0.layers - 1, head = b0.heads - 1;
            PoolRequest pool;
            pool.outRows = pool.outCols = static_cast<int>(detailSide);
            auto t = std::chrono::steady_clock::now();
            const HeadMap whole = trace->pooledMap(0, layer, head, pool);
            if (r >= warmup) detailMs.push_back(since(t));
            // A wheel step (1.25x in) about the centre, then the whole map at another temperature.
            const int n = static_cast<int>(b0.queryTokens.size()), m = static_cast<int>(b0.keyTokens.size());
            pool.rowBegin = n / 10, pool.rowEnd = n - n / 10, pool.colBegin = m / 10, pool.colEnd = m - m / 10;
            t = std::chrono::steady_clock::now();
            trace->pooledMap(0, layer, head, pool);
            if (r >= warmup) zoomMs.push_back(since(t));
            pool = PoolRequest{};
            pool.outRows = pool.outCols = static_cast<int>(detailSide);
            MapOptions hotter;
            hotter.temperature = 0.5;
            t = std::chrono::steady_clock::now();
            trace->pooledMap(0, layer, head, pool, hotter);
            if (r >= warmup) temperatureMs.push_back(since(t));
            (void)whole;
            charge("detail");
        }
        if (args.flag("metrics")) {  // the Metrics tab: every head of every block
            const auto t = std::chrono::steady_clock::now();
            headMetrics(*trace);
            if (r >= warmup) metricsMs.push_back(since(t));
            charge("metrics");
        }
        if (source) {
            const auto t = std::chrono::steady_clock::now();
            const MapProvider maps = traceMapProvider(*trace, *source);
            const bool perHead = perHeadSource(*source);
            for (int l = 0; l < b0.layers; ++l)
                for (int h = perHead ? 0 : -1; h < (perHead ? b0.heads : 0); ++h) maps(0, l, h);
            if (r >= warmup) sourceMs.push_back(since(t));
            charge("source");
        }
        if (rolloutRows > 0) {  // rollout of the last rollout-rows positions, all layers
            std::vector<int> rows;
            const int n = static_cast<int>(b0.queryTokens.size());
            for (int i = std::max(0, n - static_cast<int>(rolloutRows)); i < n; ++i) rows.push_back(i);
            const auto t = std::chrono::steady_clock::now();
            blockRolloutRows(*trace, 0, rows);
            if (r >= warmup) rolloutMs.push_back(since(t));
            charge("rollout");
        }
        if (genTokens > 0) {  // greedy generation after the same prompt: its forward, then the new tokens
            GenerateOptions g;
            g.tokens = static_cast<int>(genTokens);
            g.run = run;
            g.cache = !args.flag("no-cache");
            const auto t = std::chrono::steady_clock::now();
            generationCached = generate(*model, ids, g).cached;
            synchronizeDevice();
            if (r >= warmup) generateMs.push_back(since(t));
            charge("generate");
        }
    }
    // --rates: the issue-14 target, 2 × (FLOPs at the measured GEMM rate + one pass over the
    // weights at the measured read rate). FLOPs ≈ 2 · tokens · (parameters − vocab · hidden):
    // every matrix once per token, the embedding gathered (an untied head counts per token, so
    // this overstates by 2 · tokens · vocab · hidden for those).
    nlohmann::json rates;
    if (args.flag("rates") && !info.imageInput) {
        const MachineRates m = measureRates(seq, info.hidden, info.hidden * 7 / 2);
        const double flops =
                2.0 * seq * (static_cast<double>(info.parameters) - static_cast<double>(info.vocabSize) * info.hidden);
        const double bytes = static_cast<double>(info.parameters) * (info.dtype == "F32" ? 4 : 2);
        const double target = 2 * (flops / (m.gemmF32Gflops * 1e9) + bytes / (m.readGBps * 1e9));
        rates = {{"gemm_f32_gflops", m.gemmF32Gflops},
                 {"gemm_bf16_gflops", m.gemmBf16Gflops},
                 {"read_gbps", m.readGBps},
                 {"convert_bf16_gbps", m.convertGBps},
                 {"convert_bf16_cached_gbps", m.convertCachedGBps},
                 {"matrix_convert_then_f32_gflops", m.convertThenF32Gflops},
                 {"matrix_bf16_direct_gflops", m.bf16DirectGflops},
                 {"flops", flops},
                 {"weight_bytes", bytes},
                 {"target_ms", target * 1e3}};
    }
    for (auto* v : {&metricsMs, &detailMs, &zoomMs, &temperatureMs, &rolloutMs, &sourceMs, &generateMs})
        std::sort(v->begin(), v->end());
    const auto medianOf = [](const std::vector<double>& v) { return v[v.size() / 2]; };
    std::sort(thumbMs.begin(), thumbMs.end());
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2], best = ms.front();
    if (args.flag("json")) {
        nlohmann::json j = {{"family", info.family},
                            {"seq", seq},
                            {"device", info.device},
                            {"runs", ms},
                            {"median_ms", median},
                            {"min_ms", best},
                            {"threads", std::thread::hardware_concurrency()}};
        if (!thumbMs.empty()) j["thumbnails_median_ms"] = thumbMs[thumbMs.size() / 2];
        j["open_ms"] = openMs;
        if (!rates.is_null()) j["rates"] = rates;
        j["weights"] = info.weights;
        j["rss_anon_peak_kib"] = rssAnonKib();
        if (!metricsMs.empty()) j["metrics_median_ms"] = medianOf(metricsMs);
        if (!detailMs.empty()) {
            j["detail_median_ms"] = medianOf(detailMs);
            j["zoom_median_ms"] = medianOf(zoomMs);
            j["temperature_median_ms"] = medianOf(temperatureMs);
        }
        if (!rolloutMs.empty()) j["rollout_rows_median_ms"] = medianOf(rolloutMs);
        if (!sourceMs.empty()) j["source_median_ms"] = medianOf(sourceMs);
        if (!generateMs.empty()) {
            j["generate_median_ms"] = medianOf(generateMs);
            j["generate_cached"] = generationCached;
            j["generate_over_forward"] = medianOf(generateMs) / median;
        }
        for (const auto& [step, total] : cpuMs) j["cpu_ms_per_run"][step] = total / static_cast<double>(repeat);
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << std::fixed << std::setprecision(1) << "forward+capture " << info.family << " " << info.layers
                  << "x" << info.heads << "x" << info.hidden << ", "
                  << (info.imageText    ? "an image and " + std::to_string(textLen) + " text tokens"
                      : info.imageInput ? std::to_string(info.maxPositions) + " tokens (" +
                                                  std::to_string(info.imageSpecialTokens.size()) + " special + patches)"
                                        : std::to_string(seq) + " tokens")
                  << " on " << info.device << ": median " << median << " ms, min " << best << " ms over " << repeat
                  << " runs\n";
        std::cout << "open " << openMs << " ms; weights " << info.weights << "; RssAnon " << rssAnonKib() / 1024.0
                  << " MiB after the runs\n";
        if (!rates.is_null())
            std::cout << "rates: GEMM " << rates["gemm_f32_gflops"].get<double>() << " GFLOP/s float32, "
                      << rates["gemm_bf16_gflops"].get<double>() << " GFLOP/s bfloat16; read "
                      << rates["read_gbps"].get<double>() << " GB/s; bf16->f32 "
                      << rates["convert_bf16_gbps"].get<double>() << " GB/s (cached stores "
                      << rates["convert_bf16_cached_gbps"].get<double>() << " GB/s)\n"
                      << "a BF16-stored matrix: converted then float32 GEMM "
                      << rates["matrix_convert_then_f32_gflops"].get<double>() << " GFLOP/s, BF16 directly "
                      << rates["matrix_bf16_direct_gflops"].get<double>() << " GFLOP/s\n"
                      << "target 2 x (" << rates["flops"].get<double>() / 1e9 << " GFLOP at the GEMM rate + "
                      << rates["weight_bytes"].get<double>() / 1e9
                      << " GB at the read rate) = " << rates["target_ms"].get<double>() << " ms\n";
        if (!thumbMs.empty())
            std::cout << "thumbnails (every head of block 0, max-pooled to " << thumbSide << " px): median "
                      << thumbMs[thumbMs.size() / 2] << " ms, min " << thumbMs.front() << " ms\n";
        if (!detailMs.empty())
            std::cout << "detail map (last head, " << detailSide << " px): median " << medianOf(detailMs)
                      << " ms; zoom step " << medianOf(zoomMs) << " ms; temperature change " << medianOf(temperatureMs)
                      << " ms\n";
        if (!metricsMs.empty())
            std::cout << "all-head metrics: median " << medianOf(metricsMs) << " ms, min " << metricsMs.front()
                      << " ms\n";
        if (!rolloutMs.empty())
            std::cout << "rollout of the last " << rolloutRows << " rows: median " << medianOf(rolloutMs) << " ms\n";
        if (!sourceMs.empty())
            std::cout << "source " << sourceName(*source) << " (every map of block 0): median " << medianOf(sourceMs)
                      << " ms, min " << sourceMs.front() << " ms\n";
        if (!generateMs.empty())
            std::cout << "generate " << genTokens << " tokens after the prompt ("
                      << (generationCached ? "key/value cache" : "a full forward per token") << "): median "
                      << medianOf(generateMs) << " ms, min " << generateMs.front() << " ms = " << std::setprecision(2)
                      << medianOf(generateMs) / median << "x the forward\n"
                      << std::setprecision(1);
        std::cout << "process CPU time per run (all threads):";
        for (const auto& [step, total] : cpuMs)
            std::cout << " " << step << " " << total / static_cast<double>(repeat) << " ms";
        std::cout << "\n";
    }
    return 0;
}

}  // namespace

Command benchCommand() {
    return {"bench", "time forward+capture",
            "usage: attnscope-cli bench MODEL [--seq N] [--repeat R] [--warmup W] [--device cpu|cuda|auto] [--seed S]\n"
            "                          [--thumbnails PX] [--detail PX] [--metrics] [--rollout-rows K] [--target T] [--json]\n"
            "                          [--source value-norm|value-norm-layer|alti|alti-rollout]\n"
            "                          [--weights auto|convert|stream] [--capture-dtype compute|float16|bfloat16] [--progress] [--rates]\n"
            "                          [--generate N [--no-cache]]\n\n"
            "Times forward+capture on N random token ids (default 512), R timed runs after W warm-up runs.\n"
            "Image models (ViT) run on a random image of their input size instead.\n"
            "--thumbnails PX also times what the overview computes after each forward: every head of the first\n"
            "block max-pooled to PX x PX (Trace::pooledMap). --detail PX times the heat map's image of the\n"
            "last head at PX x PX, a zoom step (the middle 80%) and a temperature change (T = 0.5); --metrics\n"
            "every head's metrics (headMetrics); --rollout-rows K the rollout of the last K positions.\n"
            "Also prints the open time, how the weights are held and RssAnon (anonymous memory, /proc/self/status).\n"
            "--rates also measures this machine's float32 and bfloat16 GEMM rates (tokens x hidden x 3.5 hidden),\n"
            "its read bandwidth, bf16->f32 conversion rate (streamed and cached stores), one BF16-stored matrix\n"
            "converted then multiplied in float32 against multiplied in BF16 directly, and prints the target\n"
            "2 x (FLOPs at the GEMM rate + the weights' bytes at the read rate).\n"
            "--target T: encoder-decoders run forced on T random target ids (else they decode greedily).\n"
            "--source S runs the forward recording the values and residuals and then times every map of that\n"
            "  source for the first block (each head, or each layer for the per-layer sources).\n"
            "--generate N also times greedy generation of N tokens after the same ids (the prompt's forward\n"
            "included) with the key/value cache, or with --no-cache one full forward per token, and its ratio\n"
            "to the forward alone.\n",
            runBench};
}

}  // namespace attnscope::cli
