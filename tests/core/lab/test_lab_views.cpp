// The lab's variant over every head (lab_views.h), as the overview and the Model tab show it:
// each variant's pooled thumbnail equals an independent pooling (double precision, the bin rule
// of PoolRequest) of that variant's exact map, and its per-head metrics equal the HeadMap
// measures (metrics.h) of that exact map; heads without a map (no additive fit) are left out.
#include "attnscope/lab/lab_views.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace test_lab_views {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::shared_ptr<const Trace> gpt2Trace() {
    static const std::shared_ptr<const Trace> trace = [] {
        Gpt2Spec spec;
        spec.layers = 3;
        spec.embd = 32;  // 4 heads of 8
        const auto dir = freshDir("lab-views");
        writeGpt2Folder(dir, makeGpt2(spec, 23));
        const auto model = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});
        return model->forward(std::vector<std::int64_t>{3, 17, 0, 39, 22, 5, 5, 11, 30, 2, 8, 19, 4});
    }();
    return trace;
}

// Pools rows [r0, r1) x cols [c0, c1) of map into min(bins, extent) bins a side: bin of row i is
// floor((i - r0) · bins / (r1 - r0)); Max, Mean (over the bin's cells) or Sum, in doubles.
std::vector<double> poolReference(const HeadMap& map, int r0, int r1, int c0, int c1, int outRows, int outCols,
                                  Pooling pooling) {
    const int R = std::min(outRows, r1 - r0), C = std::min(outCols, c1 - c0);
    std::vector<double> acc(std::size_t(R) * C, 0.0), count(std::size_t(R) * C, 0.0);
    for (int i = r0; i < r1; ++i)
        for (int j = c0; j < c1; ++j) {
            const std::size_t bin = std::size_t((long long)(i - r0) * R / (r1 - r0)) * C +
                                    std::size_t((long long)(j - c0) * C / (c1 - c0));
            const double v = map.at(i, j);
            acc[bin] = pooling == Pooling::Max ? std::max(acc[bin], v) : acc[bin] + v;
            count[bin] += 1;
        }
    if (pooling == Pooling::Mean)
        for (std::size_t b = 0; b < acc.size(); ++b) acc[b] /= count[b];
    return acc;
}

void requirePooled(const HeadMap& pooled, const std::vector<double>& expected, int rows, int cols) {
    REQUIRE(pooled.rows == rows);
    REQUIRE(pooled.cols == cols);
    REQUIRE(pooled.values.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("bin " << i);
        REQUIRE(pooled.values[i] == Approx(expected[i]).margin(1e-6));
    }
}

// headMetrics' fields of one head, from the HeadMap measures of its exact map.
void requireMetricsOf(const HeadMetrics& m, const HeadMap& map, const std::vector<int>& separators) {
    CHECK(m.entropy == Approx(meanRowEntropy(map)).epsilon(1e-6).margin(1e-9));
    CHECK(m.meanDistance == Approx(meanAttentionDistance(map)).epsilon(1e-6).margin(1e-9));
    CHECK(m.firstToken == Approx(attentionToKeys(map, {0})).epsilon(1e-6).margin(1e-9));
    CHECK(m.separator ==
          Approx(separators.empty() ? 0.0 : attentionToKeys(map, separators)).epsilon(1e-6).margin(1e-9));
    const PatternScores s = patternScores(map);
    CHECK(m.scores.diagonal == Approx(s.diagonal).epsilon(1e-6).margin(1e-9));
    CHECK(m.scores.previous == Approx(s.previous).epsilon(1e-6).margin(1e-9));
    CHECK(m.scores.global == Approx(s.global).epsilon(1e-6).margin(1e-9));
    CHECK(m.scores.local == Approx(s.local).epsilon(1e-6).margin(1e-9));
    CHECK(m.scores.sparse == Approx(s.sparse).epsilon(1e-6).margin(1e-9));
    CHECK(m.pattern == classifyPattern(map));
}

AdditiveFit fitOfHead(const Trace& trace, int layer, int head, double temperature) {
    AdditiveFitOptions o;
    o.width = 8;
    o.steps = 30;
    o.seed = 3;
    o.temperature = temperature;
    return fitAdditive(trace, 0, layer, head, o);
}

}  // namespace

TEST_CASE("the lab's pooled thumbnails equal pooling of the variant's exact map", "[lab][views]") {
    const auto trace = gpt2Trace();
    const int n = 13;
    auto fit = std::make_shared<const AdditiveFit>(fitOfHead(*trace, 1, 2, 0.7));

    VariantSpec spec;
    spec.map.temperature = 0.7;
    spec.gate = 0.3;
    PoolRequest whole;
    whole.outRows = whole.outCols = 5;  // 13 rows into bins of 3 or 2
    PoolRequest rect;
    rect.rowBegin = 2, rect.rowEnd = 11, rect.colBegin = 1, rect.colEnd = 9, rect.outRows = 4, rect.outCols = 3;
    rect.pooling = Pooling::Mean;

    for (const LabVariant v :
         {LabVariant::Native, LabVariant::Dot, LabVariant::Linear, LabVariant::Additive, LabVariant::Hybrid}) {
        for (const FeatureMap fm : {FeatureMap::Elu, FeatureMap::Relu}) {
            if (fm == FeatureMap::Relu && v != LabVariant::Linear) continue;
            spec.variant = v;
            spec.map.featureMap = fm;
            INFO("variant " << int(v) << " feature map " << int(fm));
            for (int l = 0; l < 3; ++l)
                for (int h = 0; h < 4; ++h) {
                    const bool fitted = l == 1 && h == 2;
                    const AdditiveFit* f = fitted ? fit.get() : nullptr;
                    INFO("layer " << l << " head " << h);
                    if (!labMapAvailable(trace->blocks()[0], v, f)) {
                        CHECK((v == LabVariant::Additive || v == LabVariant::Hybrid));
                        CHECK_THROWS_WITH(labPooledMap(*trace, 0, l, h, whole, spec, f),
                                          Catch::Contains("no additive fit"));
                        continue;
                    }
                    const HeadMap exact = labMap(*trace, 0, l, h, spec, f).map;
                    REQUIRE(exact.rows == n);
                    requirePooled(labPooledMap(*trace, 0, l, h, whole, spec, f),
                                  poolReference(exact, 0, n, 0, n, 5, 5, Pooling::Max), 5, 5);
                    requirePooled(labPooledMap(*trace, 0, l, h, rect, spec, f),
                                  poolReference(exact, 2, 11, 1, 9, 4, 3, Pooling::Mean), 4, 3);
                    rect.pooling = Pooling::Sum;
                    requirePooled(labPooledMap(*trace, 0, l, h, rect, spec, f),
                                  poolReference(exact, 2, 11, 1, 9, 4, 3, Pooling::Sum), 4, 3);
                    rect.pooling = Pooling::Mean;
                }
        }
    }

    // The variants' thumbnails differ from the model's own (the comparison above can fail).
    spec.variant = LabVariant::Native;
    const HeadMap own = labPooledMap(*trace, 0, 1, 2, whole, spec, fit.get());
    for (const LabVariant v : {LabVariant::Linear, LabVariant::Additive, LabVariant::Hybrid}) {
        spec.variant = v;
        const HeadMap shown = labPooledMap(*trace, 0, 1, 2, whole, spec, fit.get());
        double diff = 0;
        for (std::size_t i = 0; i < own.values.size(); ++i)
            diff = std::max(diff, double(std::abs(own.values[i] - shown.values[i])));
        INFO("variant " << int(v));
        CHECK(diff > 1e-3);
    }

    // Errors name the problem.
    spec.variant = LabVariant::Hybrid;
    PoolRequest outside = whole;
    outside.rowEnd = n + 1;
    CHECK_THROWS_WITH(labPooledMap(*trace, 0, 1, 2, outside, spec, fit.get()),
                      Catch::Contains("is not inside the 13 x 13 map"));
    CHECK_THROWS_WITH(labPooledMap(*trace, 3, 0, 0, whole, spec, fit.get()),
                      Catch::Contains("block 3 is out of range"));
    std::vector<HeadFit> fits{{0, 1, 2, fit}};
    CHECK(fitOf(fits, 0, 1, 2) == fit.get());
    CHECK(fitOf(fits, 0, 2, 1) == nullptr);
}

TEST_CASE("the lab's per-head metrics equal the metrics of the variant's exact map", "[lab][views][metrics]") {
    const auto trace = gpt2Trace();
    auto fit = std::make_shared<const AdditiveFit>(fitOfHead(*trace, 2, 1, 1.5));
    const std::vector<HeadFit> fits{{0, 2, 1, fit}};
    MetricsOptions options;
    options.separatorLabels = {"t5"};  // positions 5 and 6
    const std::vector<int> separators{5, 6};
    MapOptions dot, linear;
    dot.temperature = linear.temperature = 1.5;
    dot.variant = MapVariant::Dot;
    linear.variant = MapVariant::Linear;

    VariantSpec spec;
    spec.map.temperature = 1.5;
    spec.gate = 0.6;
    for (const LabVariant v :
         {LabVariant::Native, LabVariant::Dot, LabVariant::Linear, LabVariant::Additive, LabVariant::Hybrid}) {
        spec.variant = v;
        INFO("variant " << int(v));
        long long lastDone = 0, lastTotal = 0, heads = 0;
        options.progress = [&](long long done, long long total) {
            lastDone = done, lastTotal = total;
            return true;
        };
        options.onHead = [&](const HeadMetrics&) { ++heads; };
        const auto metrics = labHeadMetrics(*trace, spec, fits, options);
        CHECK(lastDone == 12);
        CHECK(lastTotal == 12);
        CHECK(heads == long(metrics.size()));
        const bool onlyFitted = v == LabVariant::Additive || v == LabVariant::Hybrid;
        REQUIRE(metrics.size() == (onlyFitted ? 1u : 12u));
        for (const HeadMetrics& m : metrics) {
            INFO("layer " << m.layer << " head " << m.head);
            CHECK(m.block == "self");
            const HeadMap exact = labMap(*trace, 0, m.layer, m.head, spec, fitOf(fits, 0, m.layer, m.head)).map;
            requireMetricsOf(m, exact, separators);
            CHECK(m.klDotLinear ==
                  Approx(variantKl(*trace, 0, m.layer, m.head, dot, linear)).epsilon(1e-6).margin(1e-9));
        }
        if (onlyFitted) {
            CHECK(metrics[0].layer == 2);
            CHECK(metrics[0].head == 1);
        }
    }

    // Linear's entropies are not the dot map's (so the equality above is the variant's).
    spec.variant = LabVariant::Dot;
    const auto ofDot = labHeadMetrics(*trace, spec, {}, {});
    spec.variant = LabVariant::Linear;
    const auto ofLinear = labHeadMetrics(*trace, spec, {}, {});
    REQUIRE(ofDot.size() == ofLinear.size());
    int differ = 0;
    for (std::size_t i = 0; i < ofDot.size(); ++i) differ += std::abs(ofDot[i].entropy - ofLinear[i].entropy) > 1e-3;
    CHECK(differ == 12);

    // A cancelled run stops.
    options.progress = [](long long done, long long) { return done < 1; };
    spec.variant = LabVariant::Hybrid;
    CHECK_THROWS_AS(labHeadMetrics(*trace, spec, fits, options), Cancelled);
}

TEST_CASE("on a built-in additive model the Additive variant is the layers' own map", "[lab][views][builtin]") {
    LoadOptions lo;
    lo.device = DeviceChoice::Cpu;
    const auto model = Model::load("builtin:sentiment-additive", lo);
    const auto trace = model->forward(model->encodeText("the plot was not very good but the acting was great"));
    const BlockInfo& b = trace->blocks()[0];
    REQUIRE(b.kind == AttentionKind::Additive);
    VariantSpec spec;
    spec.variant = LabVariant::Additive;
    spec.map.temperature = 0.8;
    const auto metrics = labHeadMetrics(*trace, spec, {});
    REQUIRE(int(metrics.size()) == b.layers * b.heads);
    MapOptions own;
    own.temperature = 0.8;
    PoolRequest pool;
    pool.outRows = pool.outCols = 3;
    for (const HeadMetrics& m : metrics) {
        const HeadMap exact = trace->map(0, m.layer, m.head, own);
        requireMetricsOf(m, exact, separatorColumns(b, MetricsOptions{}.separatorLabels));
        const int n = exact.rows;
        requirePooled(labPooledMap(*trace, 0, m.layer, m.head, pool, spec),
                      poolReference(exact, 0, n, 0, n, 3, 3, Pooling::Max), std::min(3, n), std::min(3, n));
    }
    // Hybrid mixes in a dot map, which an additive layer cannot give: the error says so.
    spec.variant = LabVariant::Hybrid;
    CHECK_THROWS_WITH(labHeadMetrics(*trace, spec, {}), Catch::Contains("additive attention"));
}

}  // namespace test_lab_views
