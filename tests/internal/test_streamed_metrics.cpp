// Streamed per-head metrics and rollout rows (forEachRowBlock, never a head's full map)
// against the same measures on the exact maps Trace::map returns: causal maps with and without a
// sliding window, grouped-query heads, a padding mask, row counts that are not a multiple of the
// row block, one and two workers.
#include "attention/trace_impl.h"

#include "attnscope/analysis/rollout.h"
#include "attnscope/attention/map_rows.h"
#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/runtime/error.h"

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <memory>
#include <mutex>

namespace test_streamed_metrics {

using namespace attnscope;

namespace {

// A self-attention block of `layers` layers, H query heads over G key groups; layer l uses
// masks[l % masks.size()]; Q and K drawn in float32 on the CPU, then stored as `storage` says
// (a half-precision capture, a GPU trace).
std::shared_ptr<const Trace> blockTrace(int layers, std::int64_t H, std::int64_t G, std::int64_t n,
                                        const std::vector<MaskSpec>& masks, const at::TensorOptions& storage = {}) {
    auto impl = std::make_unique<Trace::Impl>();
    impl->device = storage.device();  // where Q and K are kept, as a model's forward records it
    for (std::int64_t i = 0; i < n; ++i) {
        impl->ids.push_back(i);
        impl->tokens.push_back(i % 97 == 5 ? "</s>" : "t" + std::to_string(i));
    }
    BlockInfo info;
    info.name = "self";
    info.layers = layers;
    info.heads = static_cast<int>(H);
    info.kvHeads = static_cast<int>(G);
    info.causal = masks[0].causal;
    info.queryTokens = info.keyTokens = impl->tokens;
    impl->infos.push_back(info);
    BlockCapture block;
    for (int l = 0; l < layers; ++l) {
        ScoreSpec score;
        score.scale = 0.3;
        // Some heads sharp (large q), some broad, so the pattern scores differ between heads.
        const at::Tensor q = at::randn({H, n, 16}) * at::linspace(0.5, 3.0, H).view({H, 1, 1});
        const at::Tensor k = at::randn({G, n, 16});
        block.layers.push_back(dotCapture(q.to(storage), k.to(storage), score, masks[std::size_t(l) % masks.size()]));
    }
    impl->blocks.push_back(std::move(block));
    return std::make_shared<const Trace>(std::move(impl));
}

// The rows are the map's rows, but a block's matrix product may run on another number of BLAS
// threads (or rows) than Trace::map's, which moves a few cells by a float ulp (~1e-7).
void checkClose(double streamed, double exact) { CHECK(streamed == Approx(exact).epsilon(1e-6).margin(1e-9)); }

}  // namespace

TEST_CASE("streamed head metrics equal the metrics of the exact maps", "[analysis][streamed]") {
    at::manual_seed(11);
    MaskSpec causal;
    causal.causal = true;
    MaskSpec window = causal;
    window.window = 70;
    MaskSpec padded;
    padded.keyAllowed = at::ones({600}, at::kBool);
    padded.keyAllowed.narrow(0, 590, 10).fill_(false);
    std::vector<MaskSpec> masks{causal, window};
    int workers = 2;
    SECTION("causal and windowed layers, two workers") {}
    SECTION("causal and windowed layers, one worker") { workers = 1; }
    SECTION("bidirectional with padded keys") { masks = {padded}; }
    const auto trace = blockTrace(2, 4, 2, 600, masks);  // 600 rows: 4 full blocks of 128 and one of 88

    MetricsOptions options;
    options.workers = workers;
    std::vector<HeadMetrics> seen;
    options.onHead = [&](const HeadMetrics& m) { seen.push_back(m); };
    const std::vector<HeadMetrics> streamed = headMetrics(*trace, options);
    REQUIRE(streamed.size() == 8);
    REQUIRE(seen.size() == 8);

    MapOptions linear;
    linear.variant = MapVariant::Linear;
    const std::vector<int> separators = separatorColumns(trace->blocks()[0], options.separatorLabels);
    REQUIRE(separators.size() == 7);
    for (const HeadMetrics& s : streamed) {
        INFO("layer " << s.layer << " head " << s.head);
        const HeadMap map = trace->map(0, s.layer, s.head);
        checkClose(s.entropy, meanRowEntropy(map));
        checkClose(s.meanDistance, meanAttentionDistance(map));
        checkClose(s.firstToken, attentionToKeys(map, {0}));
        checkClose(s.separator, attentionToKeys(map, separators));
        const PatternScores p = patternScores(map);
        checkClose(s.scores.diagonal, p.diagonal);
        checkClose(s.scores.previous, p.previous);
        checkClose(s.scores.global, p.global);
        CHECK(s.scores.globalKey == p.globalKey);
        checkClose(s.scores.local, p.local);
        checkClose(s.scores.sparse, p.sparse);
        CHECK(s.pattern == classifyPattern(map));
        // The linear rows are computed per block (one matrix product per block instead of one
        // for the map), so they may differ from the whole map's in the last float bits.
        CHECK(s.klDotLinear == Approx(meanRowKl(map, trace->map(0, s.layer, s.head, linear))).epsilon(1e-5));
        CHECK(s.klDotLinear > 0.01);
        CHECK(seen[std::size_t(&s - streamed.data())].entropy == s.entropy);
    }
    // The heads really differ (so equal values are not an accident of identical maps).
    CHECK(streamed[0].entropy > streamed[3].entropy + 0.1);
    // In Trace order, and the same bit for bit on any number of workers (each head is summed on one).
    for (std::size_t i = 0; i < streamed.size(); ++i) {
        CHECK(streamed[i].layer == int(i) / 4);
        CHECK(streamed[i].head == int(i) % 4);
    }
    MetricsOptions three;
    three.workers = 3;
    const std::vector<HeadMetrics> other = headMetrics(*trace, three);
    REQUIRE(other.size() == streamed.size());
    for (std::size_t i = 0; i < streamed.size(); ++i) {
        CHECK(other[i].entropy == streamed[i].entropy);
        CHECK(other[i].klDotLinear == streamed[i].klDotLinear);
        CHECK(other[i].scores.sparse == streamed[i].scores.sparse);
    }
}

TEST_CASE("streamed head metrics stop when progress says so, and pass a worker's error on", "[analysis][streamed]") {
    at::manual_seed(12);
    MaskSpec causal;
    causal.causal = true;
    const auto trace = blockTrace(3, 4, 2, 300, {causal});
    for (int workers : {1, 2}) {
        INFO("workers " << workers);
        MetricsOptions options;
        options.workers = workers;
        std::vector<std::pair<int, int>> seen;
        options.onHead = [&](const HeadMetrics& m) { seen.emplace_back(m.layer, m.head); };
        options.progress = [](long long done, long long total) {
            CHECK(total == 12);
            return done < 3;
        };
        CHECK_THROWS_AS(headMetrics(*trace, options), Cancelled);
        CHECK(seen == std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {0, 2}});

        // An exception from onHead ends the run with that exception, the workers stopped.
        options.progress = {};
        options.onHead = [](const HeadMetrics& m) {
            if (m.layer == 1) throw std::runtime_error("onHead failed");
        };
        CHECK_THROWS_WITH(headMetrics(*trace, options), "onHead failed");
        // A bad temperature fails in whichever worker computes a head first.
        options.onHead = {};
        options.map.temperature = -1;
        CHECK_THROWS_WITH(headMetrics(*trace, options), Catch::Contains("temperature must be"));
    }
}

TEST_CASE("forEachRowBlock hands out each row once with the exact map's values", "[analysis][streamed]") {
    at::manual_seed(5);
    MaskSpec window;
    window.causal = true;
    window.window = 40;
    const auto trace = blockTrace(1, 2, 1, 700, {window});
    const HeadMap map = trace->map(0, 0, 1);
    for (const auto& range : std::vector<std::pair<int, int>>{{0, 0}, {100, 301}, {699, 700}}) {
        std::vector<int> seen(700, 0);
        std::mutex lock;
        double worst = 0;
        forEachRowBlock(
                *trace, 0, 0, 1, {}, 2,
                [&](int worker, const MapRowBlock& b) {
                    CHECK((worker == 0 || worker == 1));
                    std::lock_guard<std::mutex> hold(lock);
                    CHECK(b.cols == 700);
                    for (int r = 0; r < b.rows; ++r) {
                        ++seen[std::size_t(b.rowBegin + r)];
                        for (int j = 0; j < 700; ++j) {
                            const bool stored = j >= b.colBegin && j < b.colEnd;
                            const double v =
                                    stored ? b.values[std::size_t(r) * (b.colEnd - b.colBegin) + (j - b.colBegin)]
                                           : 0.0;
                            worst = std::max(worst, std::abs(v - map.at(b.rowBegin + r, j)));
                        }
                    }
                },
                nullptr, range.first, range.second);
        const int end = range.second ? range.second : 700;
        for (int i = 0; i < 700; ++i) CHECK(seen[std::size_t(i)] == (i >= range.first && i < end ? 1 : 0));
        CHECK(worst < 1e-6);  // a float ulp where the row range starts off a block edge
    }
    CHECK_THROWS_WITH(forEachRowBlock(
                              *trace, 0, 0, 0, {}, 1, [](int, const MapRowBlock&) {}, nullptr, 650, 701),
                      Catch::Contains("map rows 650..701 are not inside the map's 700 rows"));
}

TEST_CASE("forEachRowBlock on a half-precision capture hands out Trace::map's values", "[analysis][streamed]") {
    // --capture-dtype bfloat16 (and a GPU's F16/BF16 forward) store Q and K in half precision;
    // maps and row blocks both compute from them in float32.
    at::manual_seed(8);
    MaskSpec causal;
    causal.causal = true;
    const auto trace = blockTrace(1, 2, 1, 300, {causal}, at::TensorOptions().dtype(at::kBFloat16));
    for (int head : {0, 1}) {
        const HeadMap map = trace->map(0, 0, head);
        double worst = 0;
        int rows = 0;
        forEachRowBlock(*trace, 0, 0, head, {}, 1, [&](int, const MapRowBlock& b) {
            rows += b.rows;
            for (int r = 0; r < b.rows; ++r)
                for (int j = b.colBegin; j < b.colEnd; ++j)
                    worst = std::max(
                            worst,
                            std::abs(double(b.values[std::size_t(r) * (b.colEnd - b.colBegin) + (j - b.colBegin)]) -
                                     map.at(b.rowBegin + r, j)));
        });
        CHECK(rows == 300);
        CHECK(worst < 1e-6);
    }
}

TEST_CASE("CUDA: streamed metrics of a GPU trace equal the CPU trace's", "[cuda]") {
    REQUIRE(at::hasCUDA());  // run by ctest's cuda_kernels entry only where a GPU is visible
    MaskSpec causal;
    causal.causal = true;
    at::manual_seed(14);
    const auto cpu = blockTrace(2, 4, 2, 900, {causal});
    at::manual_seed(14);
    const auto gpu = blockTrace(2, 4, 2, 900, {causal}, at::TensorOptions().device(at::kCUDA));
    REQUIRE(gpu->device().rfind("cuda", 0) == 0);
    const std::vector<HeadMetrics> a = headMetrics(*cpu, {}), b = headMetrics(*gpu, {});
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        // One head's Q and K come to the CPU, so the rows are the CPU trace's own.
        CHECK(b[i].entropy == a[i].entropy);
        CHECK(b[i].meanDistance == a[i].meanDistance);
        CHECK(b[i].klDotLinear == a[i].klDotLinear);
        CHECK(b[i].scores.diagonal == a[i].scores.diagonal);
    }
    std::printf("cuda-check streamed metrics of %zu heads from a GPU trace equal the CPU's\n", a.size());
}

TEST_CASE("forEachRowBlock's linear rows equal a double-precision linear map", "[analysis][streamed]") {
    // The linear rows mask only the bands where the causal limit and the window cut; every other
    // cell must still be exactly what elu(q)+1 · elu(k)+1, masked and row-normalised, gives.
    at::manual_seed(9);
    MaskSpec window;
    window.causal = true;
    window.window = 150;  // wider than a row block: the window's band starts inside the span
    MaskSpec causal;
    causal.causal = true;
    for (const MaskSpec& mask : {window, causal}) {
        const auto trace = blockTrace(1, 2, 1, 333, {mask});
        const LayerCapture& cap = trace->impl().blocks[0].layers[0];
        const auto phi = [](double x) { return x > 0 ? x + 1 : std::exp(x); };
        const at::Tensor q = cap.q[1].to(at::kDouble).contiguous(), k = cap.k[0].to(at::kDouble).contiguous();
        const double* qd = q.data_ptr<double>();
        const double* kd = k.data_ptr<double>();
        const int n = 333, d = 16;
        MapOptions linear;
        linear.variant = MapVariant::Linear;
        double worst = 0;
        int rowsSeen = 0;
        std::mutex lock;
        forEachRowBlock(
                *trace, 0, 0, 1, linear, 2,
                [&](int, const MapRowBlock& b) {
                    std::lock_guard<std::mutex> hold(lock);
                    for (int r = 0; r < b.rows; ++r, ++rowsSeen) {
                        const int i = b.rowBegin + r;
                        std::vector<double> ref(std::size_t(n), 0.0);
                        double sum = 0;
                        for (int j = 0; j < n; ++j) {
                            if (j > i || (mask.window > 0 && j <= i - mask.window)) continue;
                            double w = 0;
                            for (int c = 0; c < d; ++c) w += phi(qd[i * d + c]) * phi(kd[j * d + c]);
                            ref[std::size_t(j)] = w;
                            sum += w;
                        }
                        for (int j = 0; j < n; ++j) {
                            const bool stored = j >= b.colBegin && j < b.colEnd;
                            const double v =
                                    stored ? b.values[std::size_t(r) * (b.colEnd - b.colBegin) + (j - b.colBegin)]
                                           : 0.0;
                            if (ref[std::size_t(j)] == 0) CHECK(v == 0.0);  // masked cells exactly zero
                            worst = std::max(worst, std::abs(v - ref[std::size_t(j)] / sum) /
                                                            (ref[std::size_t(j)] / sum + 1e-3));
                        }
                    }
                },
                nullptr, 5, 333);  // rows 5..333: the first block starts off a block edge
        CHECK(rowsSeen == 328);
        CHECK(worst < 1e-5);
    }
}

TEST_CASE("rollout rows equal the rows of the full rollout", "[analysis][streamed][rollout]") {
    at::manual_seed(7);
    MaskSpec causal;
    causal.causal = true;
    MaskSpec open;
    std::vector<MaskSpec> masks{causal};
    SECTION("causal") {}
    SECTION("bidirectional") { masks = {open}; }
    const auto trace = blockTrace(3, 4, 2, 300, masks);  // 300 rows: blocks of 128, 128 and 44
    const HeadMap full = blockRollout(*trace, 0, {}, 0.4);
    const std::vector<int> rows{299, 0, 128, 200};
    long long layersDone = 0;
    const HeadMap part = blockRolloutRows(*trace, 0, rows, {}, 0.4, [&](long long done, long long total) {
        CHECK(total == 3);
        layersDone = done;
        return true;
    });
    CHECK(layersDone == 3);
    REQUIRE(part.rows == 4);
    REQUIRE(part.cols == 300);
    double worst = 0, rowSum = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        rowSum = 0;
        for (int j = 0; j < 300; ++j) {
            worst = std::max(worst, double(std::abs(part.at(int(i), j) - full.at(rows[i], j))));
            rowSum += part.at(int(i), j);
        }
        CHECK(rowSum == Approx(1.0).epsilon(1e-5));
    }
    CHECK(worst < 1e-6);
    // The top rows draw on more than one token (the product is not the identity).
    CHECK(part.at(0, 299) < 0.9);
    CHECK_THROWS_WITH(blockRolloutRows(*trace, 0, {300}), Catch::Contains("row 300 is out of range (0..299)"));
}

}  // namespace test_streamed_metrics
