// Attention sinks (HeadMetrics::sink, sinkRate) against hand computations; per-head metrics on
// soft-capped models (KL dot‖linear not defined, everything else as without it); the blocked
// products (blockProducts: Gram matrix and layer means, attentionRollout's BLAS products)
// against plain double-precision loops on maps longer than one row block and one product block.
#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/rollout.h"
#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/attention/attention_file.h"
#include "attnscope/attention/map_rows.h"
#include "attnscope/io/npy.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_gemma.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

namespace test_sinks_products {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// A maps-only Trace of the given maps [layers][heads][n·n] (row-major, rows summing to 1).
std::shared_ptr<const Trace> mapsTrace(const std::string& name,
                                       const std::vector<std::vector<std::vector<float>>>& maps, int n) {
    const auto dir = freshDir(name);
    std::vector<float> all;
    for (const auto& layer : maps)
        for (const auto& head : layer) all.insert(all.end(), head.begin(), head.end());
    writeNpy(dir / "maps.npy",
             {static_cast<std::int64_t>(maps.size()), static_cast<std::int64_t>(maps[0].size()), n, n}, all);
    return openAttentionFile(dir / "maps.npy");
}

// Random rows summing to 1 (in double, then rounded; the file check allows float rounding),
// keys j <= i only when causal, a few zero cells and a heavy first key in some rows.
std::vector<float> randomMap(int n, bool causal, std::mt19937& rng) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<float> m(static_cast<std::size_t>(n) * n, 0.0f);
    for (int i = 0; i < n; ++i) {
        const int end = causal ? i + 1 : n;
        std::vector<double> row(static_cast<std::size_t>(end));
        for (int j = 0; j < end; ++j) {
            const double x = u(rng);
            row[static_cast<std::size_t>(j)] = x < 0.1 ? 0.0 : x * x * x;
        }
        double sum = 0;
        row[0] += u(rng) * end * 0.2;  // some mass on the first key
        for (double v : row) sum += v;
        for (int j = 0; j < end; ++j) m[static_cast<std::size_t>(i) * n + j] = static_cast<float>(row[j] / sum);
    }
    return m;
}

// Σ a·b over every cell, in double.
double dotOf(const HeadMap& a, const HeadMap& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.values.size(); ++i) s += double(a.values[i]) * b.values[i];
    return s;
}

// Rollout in double with plain loops: Â = r·I + (1 − r)·A, rows renormalised, R = Â_{L-1}…Â_0.
std::vector<double> referenceRollout(const std::vector<HeadMap>& layers, double residual) {
    const int n = layers[0].rows;
    const auto hat = [&](const HeadMap& a) {
        std::vector<double> m(static_cast<std::size_t>(n) * n);
        for (int i = 0; i < n; ++i) {
            double sum = 0;
            for (int j = 0; j < n; ++j)
                sum += m[std::size_t(i) * n + j] = (1 - residual) * a.at(i, j) + (i == j) * residual;
            for (int j = 0; j < n; ++j) m[std::size_t(i) * n + j] /= sum;
        }
        return m;
    };
    std::vector<double> r = hat(layers[0]);
    for (std::size_t l = 1; l < layers.size(); ++l) {
        const std::vector<double> a = hat(layers[l]);
        std::vector<double> next(r.size(), 0.0);
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < n; ++k) {
                const double w = a[std::size_t(i) * n + k];
                for (int j = 0; j < n; ++j) next[std::size_t(i) * n + j] += w * r[std::size_t(k) * n + j];
            }
        r.swap(next);
    }
    return r;
}

}  // namespace

TEST_CASE("The sink score is the mean of α_i0 over the queries after the first; the sink rate counts heads above ε",
          "[analysis][sinks]") {
    // Two causal 4 × 4 heads written by hand.
    const std::vector<float> sink = {1,     0,     0,    0, 0.5f,   0.5f,   0,      0,
                                     0.25f, 0.25f, 0.5f, 0, 0.625f, 0.125f, 0.125f, 0.125f};
    const std::vector<float> other = {1, 0, 0, 0, 0.25f, 0.75f, 0, 0, 0, 0.5f, 0.5f, 0, 0.125f, 0.125f, 0.25f, 0.5f};
    const auto trace = mapsTrace("sinks-hand", {{sink, other}}, 4);
    const std::vector<HeadMetrics> m = headMetrics(*trace);
    REQUIRE(m.size() == 2);
    // (0.5 + 0.25 + 0.625) / 3 and (0.25 + 0 + 0.125) / 3; first_token keeps row 0.
    CHECK(m[0].sink == Approx(1.375 / 3).epsilon(1e-12));
    CHECK(m[1].sink == Approx(0.125).epsilon(1e-12));
    CHECK(m[0].firstToken == Approx((1 + 0.5 + 0.25 + 0.625) / 4).epsilon(1e-12));
    CHECK(m[1].firstToken == Approx((1 + 0.25 + 0 + 0.125) / 4).epsilon(1e-12));
    CHECK(headMetric("sink").value(m[0]) == m[0].sink);
    CHECK(sinkRate(m) == 0.5);  // ε = 0.3: head 0 only
    CHECK(sinkRate(m, 0.5) == 0.0);
    CHECK(sinkRate(m, 0.125) == 0.5);  // strictly above ε
    CHECK(sinkRate(m, 0.0) == 1.0);
    CHECK(sinkRate({}) == 0.0);
    // A one-token map has no query after the first: no row counts, the score is 0.
    const auto one = mapsTrace("sinks-one", {{{1.0f}}}, 1);
    CHECK(headMetrics(*one)[0].sink == 0.0);
}

TEST_CASE("Per-head metrics run on a soft-capped model: KL dot‖linear is NaN, the rest as without it",
          "[analysis][sinks][gemma]") {
    RmsFamilySpec spec;
    spec.type = "gemma2";
    spec.attnSoftcap = 1.5;
    spec.finalSoftcap = 2.0;
    spec.window = 3;
    spec.prefix = false;
    const auto dir = freshDir("sinks-gemma2");
    writeCheckpoint(dir, makeRmsFamily(spec, 5));
    const auto model = Model::load(dir.string(), LoadOptions{DeviceChoice::Cpu, {}});
    const auto trace = model->forward(ids64({3, 17, 0, 47, 22, 5, 5, 11, 30}));
    REQUIRE(linearMapRefusal(*trace, 0, 0) == "a tanh soft-cap");
    const std::vector<HeadMetrics> with = headMetrics(*trace);
    MetricsOptions off;
    off.compareLinear = false;
    const std::vector<HeadMetrics> without = headMetrics(*trace, off);
    REQUIRE(with.size() == 12);
    for (std::size_t i = 0; i < with.size(); ++i) {
        INFO("head " << i);
        CHECK(std::isnan(with[i].klDotLinear));
        CHECK(without[i].klDotLinear == 0.0);
        for (const HeadMetricInfo& info : headMetricList())
            if (!info.detector && std::string(info.key) != "kl_dot_linear")
                CHECK(info.value(with[i]) == info.value(without[i]));
        CHECK(with[i].pattern == without[i].pattern);
        // The sink score from the map itself.
        const HeadMap map = trace->map(0, with[i].layer, with[i].head);
        double s = 0;
        for (int r = 1; r < map.rows; ++r) s += map.at(r, 0);
        CHECK(with[i].sink == Approx(s / (map.rows - 1)).epsilon(1e-6));
    }
    // A Gemma (no cap) of the same shape keeps its KL.
    RmsFamilySpec plain;
    const auto plainDir = freshDir("sinks-gemma");
    writeCheckpoint(plainDir, makeRmsFamily(plain, 5));
    const auto plainTrace = Model::load(plainDir.string(), LoadOptions{DeviceChoice::Cpu, {}})
                                    ->forward(ids64({3, 17, 0, 47, 22, 5, 5, 11, 30}));
    CHECK(linearMapRefusal(*plainTrace, 0, 0).empty());
    for (const HeadMetrics& h : headMetrics(*plainTrace)) CHECK(std::isfinite(h.klDotLinear));

    // One pass for the metrics, the Gram matrix and the layer means gives the separate calls' values.
    for (const auto& t : {trace, plainTrace}) {
        const std::vector<HeadMetrics> separate = headMetrics(*t);
        ProductsAsked asked;
        asked.layerMeans = true;
        const MetricsAndProducts together = headMetricsAndProducts(*t, {}, asked);
        REQUIRE(together.heads.size() == separate.size());
        for (std::size_t i = 0; i < separate.size(); ++i)
            for (const HeadMetricInfo& info : headMetricList()) {
                if (info.detector) continue;
                const double a = info.value(together.heads[i]), b = info.value(separate[i]);
                CHECK((a == b || (std::isnan(a) && std::isnan(b))));
            }
        const BlockProducts alone = blockProducts(*t, 0, {}, true, true);
        REQUIRE(together.blocks.size() == 1);
        CHECK(together.blocks[0].gram == alone.gram);
        REQUIRE(together.blocks[0].layerMeans.size() == 3);
        for (int l = 0; l < 3; ++l)
            CHECK(together.blocks[0].layerMeans[std::size_t(l)].values == alone.layerMeans[std::size_t(l)].values);
    }
}

TEST_CASE("Blocked similarity and rollout equal plain double-precision sums on maps longer than one block",
          "[analysis][products]") {
    std::mt19937 rng(11);
    // Row blocks of 64 (the last 24 rows); Gram products over two column chunks in most row blocks
    // (64 · 600 cells, chunks of 32,768); the rollout's triangles halved to 300, then 150.
    const int n = 600;
    for (const bool causal : {true, false}) {
        INFO((causal ? "causal" : "bidirectional"));
        const int L = causal ? 3 : 2, H = 2;
        std::vector<std::vector<std::vector<float>>> maps(static_cast<std::size_t>(L));
        for (auto& layer : maps)
            for (int h = 0; h < H; ++h) layer.push_back(randomMap(n, causal, rng));
        const auto trace = mapsTrace(causal ? "products-causal" : "products-open", maps, n);
        std::vector<HeadMap> heads;
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) heads.push_back(trace->map(0, l, h));

        const BlockProducts p = blockProducts(*trace, 0, {}, true, true);
        const int k = L * H;
        REQUIRE(p.gram.size() == std::size_t(k * k));
        double worstGram = 0;
        for (int a = 0; a < k; ++a)
            for (int b = 0; b < k; ++b) {
                const double ref = dotOf(heads[std::size_t(a)], heads[std::size_t(b)]);
                worstGram = std::max(worstGram, std::abs(p.gram[std::size_t(a * k + b)] - ref) / ref);
                CHECK(p.gram[std::size_t(a * k + b)] == p.gram[std::size_t(b * k + a)]);
            }
        CHECK(worstGram < 1e-6);
        const std::vector<double> sim = blockSimilarity(*trace, 0);
        const std::vector<double> pairwise = similarityMatrix(heads);
        for (std::size_t i = 0; i < sim.size(); ++i) CHECK(sim[i] == Approx(pairwise[i]).epsilon(1e-6));

        // The layer means are averageHeads's, bit for bit; the rollout is within float rounding.
        REQUIRE(p.layerMeans.size() == std::size_t(L));
        std::vector<HeadMap> means;
        for (int l = 0; l < L; ++l) means.push_back(averageHeads(layerMaps(*trace, 0, l)));
        for (int l = 0; l < L; ++l) CHECK(p.layerMeans[std::size_t(l)].values == means[std::size_t(l)].values);
        const HeadMap rollout = blockRollout(*trace, 0, {}, 0.4);
        const std::vector<double> ref = referenceRollout(means, 0.4);
        double worst = 0;
        for (std::size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(rollout.values[i] - ref[i]));
        CHECK(worst < 1e-6);
        if (causal) {  // the blocked product keeps the upper triangle 0
            int nonzero = 0;
            for (int i = 0; i < n; ++i)
                for (int j = i + 1; j < n; ++j) nonzero += rollout.at(i, j) != 0.0f;
            CHECK(nonzero == 0);
        }
    }
}

// blockRollout and headMetricsAndProducts keep a causal block's layer means as lower bands of
// 256 rows and multiply those (lower_bands.h); here over two bands (300 tokens) of a Gemma-2
// whose sliding layers leave zeros before each row's window, which the bands write themselves.
TEST_CASE("The rollout over lower bands equals attentionRollout of the dense layer means on a sliding-window model",
          "[analysis][products]") {
    RmsFamilySpec spec;
    spec.type = "gemma2";
    spec.window = 40;
    spec.positions = 320;
    const auto dir = freshDir("bands-gemma2");
    writeCheckpoint(dir, makeRmsFamily(spec, 9));
    std::vector<long long> ids;
    for (int i = 0; i < 300; ++i) ids.push_back((i * 7 + 3) % spec.vocab);
    const auto trace = Model::load(dir.string(), LoadOptions{DeviceChoice::Cpu, {}})->forward(ids64(ids));
    std::vector<HeadMap> means;
    for (int l = 0; l < spec.layers; ++l) means.push_back(averageHeads(layerMaps(*trace, 0, l)));
    int windowed = 0;  // layers whose last row sees no first key
    for (const HeadMap& m : means) windowed += m.at(299, 0) == 0.0f && m.at(299, 299 - 39) != 0.0f;
    REQUIRE(windowed > 0);

    const HeadMap rollout = blockRollout(*trace, 0, {}, 0.3);
    CHECK(rollout.values == attentionRollout(means, 0.3).values);
    const std::vector<double> ref = referenceRollout(means, 0.3);
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(rollout.values[i] - ref[i]));
    CHECK(worst < 1e-6);
    int above = 0;
    for (int i = 0; i < 300; ++i)
        for (int j = i + 1; j < 300; ++j) above += rollout.at(i, j) != 0.0f;
    CHECK(above == 0);

    ProductsAsked asked;
    asked.rollout = true;
    asked.residual = 0.3;
    const MetricsAndProducts all = headMetricsAndProducts(*trace, {}, asked);
    REQUIRE(all.blocks.size() == 1);
    CHECK(all.blocks[0].rollout.values == rollout.values);
    CHECK(all.blocks[0].layerMeans.empty());
    CHECK_THROWS_WITH(blockRollout(*trace, 0, {}, 1.5), Catch::Contains("residual must be in [0, 1]"));
}

}  // namespace test_sinks_products
