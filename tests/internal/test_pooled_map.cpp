// Trace::pooledMap (blocked, never holding a head's map) against pooling of the exact map that
// Trace::map returns, for max, mean and sum, on a long sparse head, on rectangles (zoomed views)
// whose edges cross row blocks and bins, and with windows and grouped-query heads; the pooler's
// device mode (what a GPU trace folds with) against its CPU loops.
#include "attention/blocked_attention.h"
#include "attention/pooled_map.h"
#include "attention/trace_impl.h"

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace test_pooled_map {

using namespace attnscope;

namespace {

// One self-attention layer of H query heads over G key groups, captured as a family would.
std::shared_ptr<const Trace> oneLayerTrace(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask,
                                           double scale) {
    auto impl = std::make_unique<Trace::Impl>();
    const auto n = q.size(1);
    for (std::int64_t i = 0; i < n; ++i) {
        impl->ids.push_back(i);
        impl->tokens.push_back("t" + std::to_string(i));
    }
    BlockInfo info;
    info.name = "self";
    info.layers = 1;
    info.heads = static_cast<int>(q.size(0));
    info.kvHeads = static_cast<int>(k.size(0));
    info.causal = mask.causal;
    impl->infos.push_back(info);
    BlockCapture block;
    ScoreSpec score;
    score.scale = scale;
    block.layers.push_back(dotCapture(q, k, score, mask));
    impl->blocks.push_back(std::move(block));
    return std::make_shared<const Trace>(std::move(impl));
}

// The definition of the pooling, on the exact map: bin r holds rows i with
// floor((i - r0) · bins / rows) = r.
HeadMap poolExact(const HeadMap& map, const PoolRequest& p) {
    const int r1 = p.rowEnd ? p.rowEnd : map.rows, c1 = p.colEnd ? p.colEnd : map.cols;
    const int R = std::min(p.outRows, r1 - p.rowBegin), C = std::min(p.outCols, c1 - p.colBegin);
    HeadMap out;
    out.rows = R;
    out.cols = C;
    std::vector<double> acc(std::size_t(R) * C, 0.0), cells(std::size_t(R) * C, 0.0);
    for (int i = p.rowBegin; i < r1; ++i)
        for (int j = p.colBegin; j < c1; ++j) {
            const auto bin = std::size_t((std::int64_t(i - p.rowBegin) * R / (r1 - p.rowBegin)) * C +
                                         std::int64_t(j - p.colBegin) * C / (c1 - p.colBegin));
            acc[bin] = p.pooling == Pooling::Max ? std::max(acc[bin], double(map.at(i, j))) : acc[bin] + map.at(i, j);
            cells[bin] += 1;
        }
    for (std::size_t b = 0; b < acc.size(); ++b)
        out.values.push_back(float(p.pooling == Pooling::Mean ? acc[b] / cells[b] : acc[b]));
    return out;
}

double maxDiff(const HeadMap& a, const HeadMap& b) {
    REQUIRE(a.rows == b.rows);
    REQUIRE(a.cols == b.cols);
    double worst = 0;
    for (std::size_t i = 0; i < a.values.size(); ++i)
        worst = std::max(worst, double(std::abs(a.values[i] - b.values[i])));
    return worst;
}

}  // namespace

TEST_CASE("pooled maps equal max, mean and sum pooling of the exact map", "[attention][pooled]") {
    at::manual_seed(3);
    const std::int64_t H = 4, G = 2, n = 1000, d = 16;
    const at::Tensor q = at::randn({H, n, d}) * 2, k = at::randn({G, n, d}) * 2;
    MaskSpec mask;
    mask.causal = true;
    SECTION("causal") {}
    SECTION("causal with a window of 90") { mask.window = 90; }
    const auto trace = oneLayerTrace(q, k, mask, 0.25);
    MapOptions options;
    options.temperature = 0.7;
    const std::vector<PoolRequest> requests = {
            {0, 0, 0, 0, 64, 64, Pooling::Max},
            {0, 0, 0, 0, 64, 64, Pooling::Mean},
            {0, 0, 0, 0, 37, 53, Pooling::Sum},
            {100, 611, 250, 999, 97, 41, Pooling::Max},     // a zoomed rectangle
            {300, 340, 290, 345, 200, 200, Pooling::Mean},  // fewer cells than bins: the cells themselves
            {999, 1000, 0, 1000, 5, 5, Pooling::Sum},
    };
    for (int h : {0, 3}) {
        const HeadMap exact = trace->map(0, 0, h, options);
        for (const PoolRequest& p : requests) {
            INFO("head " << h << ", rows " << p.rowBegin << ".." << p.rowEnd << ", pooling " << int(p.pooling));
            CHECK(maxDiff(trace->pooledMap(0, 0, h, p, options), poolExact(exact, p)) < 1e-5);
        }
        // The cells themselves when the rectangle is small, and mass kept by Sum.
        const HeadMap cells = trace->pooledMap(0, 0, h, {300, 340, 290, 345, 200, 200, Pooling::Max}, options);
        CHECK(cells.rows == 40);
        CHECK(cells.cols == 55);
        CHECK(cells.at(12, 20) == Approx(exact.at(312, 310)).margin(1e-6));
        const HeadMap mass = trace->pooledMap(0, 0, h, {0, 0, 0, 0, 10, 10, Pooling::Sum}, options);
        double total = 0;
        for (float v : mass.values) total += v;
        CHECK(total == Approx(double(n)).epsilon(1e-5));
    }
    CHECK_THROWS_WITH(trace->pooledMap(0, 0, 0, {0, 1200, 0, 0, 8, 8, Pooling::Max}, options),
                      Catch::Contains("not inside the 1000 x 1000 map"));
}

TEST_CASE("a max-pooled thumbnail of a long sparse head is not blank where mean pooling washes it out",
          "[attention][pooled]") {
    // 4,096 tokens; the head sends nearly all of every row's mass to key 0 (an attention sink):
    // q·k is 40 for key 0 and about 0 elsewhere.
    const std::int64_t n = 4096, d = 8;
    at::manual_seed(9);
    at::Tensor q = at::zeros({1, n, d}), k = at::randn({1, n, d}) * 0.01;
    q.select(2, 0).fill_(40.0);
    k[0][0][0] = 1.0;
    MaskSpec mask;
    mask.causal = true;
    const auto trace = oneLayerTrace(q, k, mask, 1.0);
    const HeadMap maxed = trace->pooledMap(0, 0, 0, {0, 0, 0, 0, 64, 64, Pooling::Max});
    const HeadMap mean = trace->pooledMap(0, 0, 0, {0, 0, 0, 0, 64, 64, Pooling::Mean});
    const float brightestMax = *std::max_element(maxed.values.begin(), maxed.values.end());
    const float brightestMean = *std::max_element(mean.values.begin(), mean.values.end());
    CHECK(brightestMax > 0.5f);    // a single strong cell stays visible
    CHECK(brightestMean < 0.05f);  // 64 × 64 cells averaged into one pixel: nearly black
}

TEST_CASE("the pooler's device mode folds blocks into the same bins as its CPU loops", "[attention][pooled]") {
    // A GPU trace's blocks are folded with ATen's operations on the device; here on CPU tensors,
    // fed the same blocks of rows (over each block's key span) as the CPU pooler.
    at::manual_seed(12);
    const std::int64_t n = 700, rows = 96;
    at::Tensor map = at::rand({n, n}).pow_(8).tril_();  // a causal, peaky map
    map.div_(map.sum(-1, /*keepdim=*/true));
    HeadMap exact;
    exact.rows = exact.cols = static_cast<int>(n);
    exact.values.assign(map.data_ptr<float>(), map.data_ptr<float>() + map.numel());
    const std::vector<PoolRequest> requests = {
            {0, 0, 0, 0, 64, 64, Pooling::Max},
            {0, 0, 0, 0, 50, 33, Pooling::Mean},
            {0, 0, 0, 0, 7, 7, Pooling::Sum},
            {90, 411, 30, 650, 41, 97, Pooling::Max},
            {100, 130, 95, 140, 200, 200, Pooling::Mean},
    };
    for (const PoolRequest& p : requests) {
        INFO("rows " << p.rowBegin << ".." << p.rowEnd << ", keys " << p.colBegin << ".." << p.colEnd << ", pooling "
                     << int(p.pooling));
        const PoolRect r = resolvePoolRect(p, n, n);
        MapPooler cpu(r.rowBegin, r.rowEnd, r.colBegin, r.colEnd, p.outRows, p.outCols, p.pooling);
        MapPooler device(r.rowBegin, r.rowEnd, r.colBegin, r.colEnd, p.outRows, p.outCols, p.pooling,
                         /*onDevice=*/true);
        for (std::int64_t start = 0; start < n; start += rows) {
            const std::int64_t len = std::min(rows, n - start), keys = start + len;  // the causal span 0..keys
            const at::Tensor block = map.narrow(0, start, len).narrow(1, 0, keys);
            cpu.add(block.contiguous(), start, 0);
            device.add(block, start, 0);
        }
        const HeadMap a = cpu.result(), b = device.result();
        if (p.pooling == Pooling::Max)
            CHECK(a.values == b.values);  // the same float cells, no arithmetic
        else
            CHECK(maxDiff(a, b) < 1e-7);
        CHECK(maxDiff(b, poolExact(exact, p)) < 1e-6);
    }
    MapPooler device(0, n, 0, n, 8, 8, Pooling::Max, /*onDevice=*/true);
    MapPooler other(0, n, 0, n, 8, 8, Pooling::Max, /*onDevice=*/true);
    CHECK_THROWS_WITH(device.merge(other), Catch::Contains("not merged"));
}

TEST_CASE("CUDA: pooled maps of a GPU trace equal the CPU trace's", "[cuda]") {
    REQUIRE(at::hasCUDA());  // run by ctest's cuda_kernels entry only where a GPU is visible
    at::manual_seed(13);
    const std::int64_t H = 4, G = 2, n = 1200, d = 32;
    const at::Tensor q = at::randn({H, n, d}) * 2, k = at::randn({G, n, d}) * 2;
    MaskSpec mask;
    mask.causal = true;
    mask.window = 500;
    const auto cpu = oneLayerTrace(q, k, mask, 0.25);
    const auto gpu = oneLayerTrace(q.cuda(), k.cuda(), mask, 0.25);
    MapOptions options;
    options.temperature = 0.7;
    const std::vector<PoolRequest> requests = {
            {0, 0, 0, 0, 48, 48, Pooling::Max},
            {0, 0, 0, 0, 64, 40, Pooling::Mean},
            {0, 0, 0, 0, 9, 9, Pooling::Sum},
            {100, 911, 250, 1100, 97, 41, Pooling::Max},
            {300, 340, 290, 345, 200, 200, Pooling::Mean},
    };
    for (int h : {0, 3})
        for (const PoolRequest& p : requests) {
            INFO("head " << h << ", rows " << p.rowBegin << ".." << p.rowEnd << ", pooling " << int(p.pooling));
            const HeadMap want = cpu->pooledMap(0, 0, h, p, options);
            const double diff = maxDiff(gpu->pooledMap(0, 0, h, p, options), want);
            // Sums of many cells carry each cell's float difference: relative to the largest bin.
            const double scale = std::max(1.0, double(*std::max_element(want.values.begin(), want.values.end())));
            std::printf("cuda-check pooled head %d pooling %d max |gpu - cpu| = %.3g (largest bin %.3g)\n", h,
                        int(p.pooling), diff, scale);
            CHECK(diff < 1e-5 * scale);
        }
}

}  // namespace test_pooled_map
