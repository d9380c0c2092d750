// Lab variants on GPT-2 fixtures, each against an independent computation from the double
// precision reference: propagated temperature, head masking, output change, elu/relu/FAVOR+
// linear maps, the additive fit and the hybrid.
#include "attnscope/runtime/error.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/lab/lab.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "reference_gpt2.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace test_lab_variants {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

struct Fixture {
    Gpt2Checkpoint checkpoint;
    std::shared_ptr<const Model> model;
    std::vector<long long> ids;
    std::vector<std::int64_t> ids64;
};

const Fixture& fixture() {
    static const Fixture f = [] {
        Fixture x;
        Gpt2Spec spec;
        spec.layers = 3;
        spec.embd = 32;
        x.checkpoint = makeGpt2(spec, 11);
        const auto dir = freshDir("lab-variants");
        writeGpt2Folder(dir, x.checkpoint);
        x.model = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});
        x.ids = {3, 17, 0, 39, 22, 5, 5, 11, 30, 2, 8, 19};
        x.ids64.assign(x.ids.begin(), x.ids.end());
        return x;
    }();
    return f;
}

void requireMapEquals(const HeadMap& map, const std::vector<double>& expected, double margin) {
    REQUIRE(map.values.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("entry " << i);
        REQUIRE(map.values[i] == Approx(expected[i]).margin(margin));
    }
}

std::vector<double> softmaxOf(const std::vector<double>& logits) {
    std::vector<double> p(logits.size());
    const double mx = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (std::size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(logits[i] - mx);
    for (double& v : p) v /= sum;
    return p;
}

double klOf(const std::vector<double>& p, const std::vector<double>& q) {
    double s = 0;
    for (std::size_t i = 0; i < p.size(); ++i) s += p[i] * std::log(p[i] / q[i]);
    return s;
}

// φ(q_i)·φ(k_j) normalised over j <= i, from the reference's q and k.
std::vector<double> linearReference(const std::vector<double>& q, const std::vector<double>& k, int n, int d,
                                    bool elu) {
    auto phi = [&](double x) { return elu ? (x > 0 ? x + 1 : std::exp(x)) : std::max(0.0, x); };
    std::vector<double> a(static_cast<std::size_t>(n) * n, 0.0);
    for (int i = 0; i < n; ++i) {
        double sum = 0;
        for (int j = 0; j <= i; ++j) {
            double s = 0;
            for (int c = 0; c < d; ++c) s += phi(q[i * d + c]) * phi(k[j * d + c]);
            sum += a[i * n + j] = s;
        }
        for (int j = 0; j <= i && sum > 0; ++j) a[i * n + j] /= sum;
    }
    return a;
}

}  // namespace

TEST_CASE("propagated temperature equals a reference forward with T inside the softmax", "[lab][propagate]") {
    const Fixture& f = fixture();
    RunOptions run;
    run.temperature = 2.5;
    run.temperatureLayers = {0, 2};
    auto trace = f.model->forward(f.ids64, run);
    ReferenceRun refRun;
    refRun.temperature = 2.5;
    refRun.temperatureLayers = {0, 2};
    const auto ref = referenceGpt2(f.checkpoint, f.ids, refRun);
    const auto plain = referenceGpt2(f.checkpoint, f.ids);
    for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 4; ++h) {
            INFO("layer " << l << " head " << h);
            requireMapEquals(trace->map(0, l, h), ref.probs[l][h], 2e-6);  // the maps the model used
        }
    for (std::size_t v = 0; v < ref.nextTokenLogits.size(); ++v)
        REQUIRE(trace->nextTokenLogits()[v] == Approx(ref.nextTokenLogits[v]).margin(1e-4));
    // Layer 1 ran at T = 1 but sees changed inputs; its map differs from the plain run's.
    double diff = 0;
    for (std::size_t i = 0; i < ref.probs[1][0].size(); ++i)
        diff += std::abs(ref.probs[1][0][i] - plain.probs[1][0][i]);
    CHECK(diff > 1e-3);

    SECTION("output change: next-token KL and top-k against the reference logits") {
        auto original = f.model->forward(f.ids64);
        const Rerun r = rerun(*f.model, *original, run, 3);
        CHECK(r.change.kind == "next-token");
        const auto p = softmaxOf(plain.nextTokenLogits), q = softmaxOf(ref.nextTokenLogits);
        CHECK(r.change.kl == Approx(klOf(p, q)).epsilon(1e-3));
        REQUIRE(r.change.originalTop.size() == 3);
        const auto best = std::max_element(q.begin(), q.end()) - q.begin();
        CHECK(r.change.changedTop[0].id == best);
        CHECK(r.change.changedTop[0].label == "t" + std::to_string(best));
        CHECK(r.change.changedTop[0].probability == Approx(q[best]).epsilon(1e-4));
        CHECK(r.change.originalTop[0].probability >= r.change.originalTop[1].probability);
        RunOptions bad = run;
        bad.temperatureLayers = {3};
        CHECK_THROWS_WITH(rerun(*f.model, *original, bad), Catch::Contains("layer 3 is out of range (0..2)"));
        bad.temperatureLayers = {};
        bad.temperature = 0;
        CHECK_THROWS_WITH(rerun(*f.model, *original, bad), Catch::Contains("temperature must be"));
    }
    SECTION("display temperature applies on top of the propagated one") {
        MapOptions o;
        o.temperature = 0.5;
        const auto expected = causalSoftmax(ref.scores[0][1], 12, 2.5 * 0.5);
        requireMapEquals(trace->map(0, 0, 1, o), expected, 2e-6);
    }
}

TEST_CASE("head masking equals a reference forward with those heads zeroed", "[lab][mask]") {
    const Fixture& f = fixture();
    const auto heads = parseHeadList("0:1, 2:3,self:1:0");
    REQUIRE(heads.size() == 3);
    CHECK(heads[2].block == "self");
    RunOptions run;
    run.maskHeads = heads;
    auto trace = f.model->forward(f.ids64, run);
    ReferenceRun refRun;
    refRun.maskedHeads = {{0, 1}, {2, 3}, {1, 0}};
    const auto ref = referenceGpt2(f.checkpoint, f.ids, refRun);
    for (std::size_t v = 0; v < ref.nextTokenLogits.size(); ++v)
        REQUIRE(trace->nextTokenLogits()[v] == Approx(ref.nextTokenLogits[v]).margin(1e-4));
    requireMapEquals(trace->map(0, 2, 0), ref.probs[2][0], 2e-6);

    SECTION("bad head lists") {
        CHECK_THROWS_WITH(parseHeadList("0-1"), Catch::Contains("head '0-1' is not LAYER:HEAD"));
        CHECK_THROWS_WITH(parseHeadList("0:x"), Catch::Contains("'x' is not a non-negative integer"));
        CHECK_THROWS_WITH(parseHeadList(""), Catch::Contains("no heads given"));
        auto original = f.model->forward(f.ids64);
        CHECK_THROWS_WITH(validateHeads(*original, parseHeadList("0:4")),
                          Catch::Contains("head 0:4: head 4 is out of range"));
        CHECK_THROWS_WITH(validateHeads(*original, parseHeadList("5:0")), Catch::Contains("layer 5 is out of range"));
        CHECK_THROWS_WITH(validateHeads(*original, parseHeadList("cross:0:0")),
                          Catch::Contains("no 'cross' attention block"));
        CHECK_THROWS_WITH(parseLayerList("0,,2"), Catch::Contains("'' is not a non-negative integer"));
    }
}

TEST_CASE("pruning by importance masks the ranked heads", "[lab][mask]") {
    const Fixture& f = fixture();
    auto original = f.model->forward(f.ids64);
    const auto byEntropy = rankHeads(*f.model, *original, Importance::Entropy);
    REQUIRE(byEntropy.size() == 12);
    for (std::size_t i = 0; i + 1 < byEntropy.size(); ++i) CHECK(byEntropy[i].score >= byEntropy[i + 1].score);
    const HeadRef& first = byEntropy[0].head;
    CHECK(byEntropy[0].score == Approx(-meanRowEntropy(original->map(0, first.layer, first.head))));

    const auto byOutput = rankHeads(*f.model, *original, Importance::OutputChange);
    const HeadRef& top = byOutput[0].head;
    RunOptions alone;
    alone.maskHeads = {top};
    CHECK(byOutput[0].score == Approx(rerun(*f.model, *original, alone).change.kl));

    const PruneResult p = pruneByImportance(*f.model, *original, Importance::OutputChange, 2, /*leastImportant=*/true);
    REQUIRE(p.masked.size() == 2);
    CHECK(p.masked[0].layer == p.ranking.back().head.layer);
    CHECK(p.masked[0].head == p.ranking.back().head.head);
    ReferenceRun refRun;
    for (const HeadRef& h : p.masked) refRun.maskedHeads.push_back({h.layer, h.head});
    const auto ref = referenceGpt2(f.checkpoint, f.ids, refRun);
    for (std::size_t v = 0; v < ref.nextTokenLogits.size(); ++v)
        REQUIRE(p.trace->nextTokenLogits()[v] == Approx(ref.nextTokenLogits[v]).margin(1e-4));
    CHECK_THROWS_WITH(pruneByImportance(*f.model, *original, Importance::Entropy, 13),
                      Catch::Contains("the model has 12"));
}

TEST_CASE("linear maps with elu+1 and relu equal an independent computation", "[lab][linear]") {
    const Fixture& f = fixture();
    auto trace = f.model->forward(f.ids64);
    const auto ref = referenceGpt2(f.checkpoint, f.ids);
    const int n = 12, d = 8;
    for (FeatureMap fm : {FeatureMap::Elu, FeatureMap::Relu}) {
        MapOptions o;
        o.variant = MapVariant::Linear;
        o.featureMap = fm;
        for (int l = 0; l < 3; ++l)
            for (int h = 0; h < 4; ++h) {
                INFO("feature map " << (fm == FeatureMap::Elu ? "elu" : "relu") << " layer " << l << " head " << h);
                requireMapEquals(trace->map(0, l, h, o),
                                 linearReference(ref.q[l][h], ref.k[l][h], n, d, fm == FeatureMap::Elu), 2e-6);
            }
    }
}

TEST_CASE("FAVOR+ approaches the softmax map as the number of features grows", "[lab][favor]") {
    const Fixture& f = fixture();
    auto trace = f.model->forward(f.ids64);
    // The estimator's variance grows like exp(‖q‖²·scale/T + ‖k‖²·scale/T); this fixture's heads
    // have ‖q‖²·scale ≈ 10, so the comparison runs at T = 6, against the exact map at T = 6.
    MapOptions o;
    o.temperature = 6;
    const HeadMap exact = trace->map(0, 1, 2, o);
    o.variant = MapVariant::Linear;
    o.featureMap = FeatureMap::Favor;
    auto meanError = [&](int features) {
        double total = 0;
        for (std::uint64_t seed = 0; seed < 4; ++seed) {
            o.features = features;
            o.seed = seed;
            const HeadMap m = trace->map(0, 1, 2, o);
            for (std::size_t i = 0; i < m.values.size(); ++i) total += std::abs(m.values[i] - exact.values[i]);
        }
        return total / (4.0 * exact.values.size());
    };
    const double e8 = meanError(8), e64 = meanError(64), e512 = meanError(512), e4096 = meanError(4096);
    INFO("mean |error|: M=8 " << e8 << ", 64 " << e64 << ", 512 " << e512 << ", 4096 " << e4096);
    CHECK(e64 < e8);
    CHECK(e512 < e64);
    CHECK(e4096 < e512);
    CHECK(e4096 < 0.01);
    // Causal mask and rows: no weight on future keys, rows sum to one.
    o.features = 64;
    o.seed = 3;
    const HeadMap m = trace->map(0, 1, 2, o);
    for (int i = 0; i < 12; ++i) {
        double s = 0;
        for (int j = 0; j < 12; ++j) {
            if (j > i) REQUIRE(m.at(i, j) == 0.0f);
            s += m.at(i, j);
        }
        REQUIRE(s == Approx(1.0).margin(1e-5));
    }
    CHECK(trace->map(0, 1, 2, o).values == m.values);  // fixed seed: the same features
    o.seed = 4;
    CHECK(trace->map(0, 1, 2, o).values != m.values);
    o.features = 0;
    CHECK_THROWS_WITH(trace->map(0, 1, 2, o), Catch::Contains("at least 1 random feature"));
}

TEST_CASE("additive fit lowers the KL to the head's dot-product map", "[lab][additive]") {
    const Fixture& f = fixture();
    auto trace = f.model->forward(f.ids64);
    const auto ref = referenceGpt2(f.checkpoint, f.ids);
    AdditiveFitOptions o;
    o.width = 16;
    o.steps = 200;
    o.seed = 7;
    long long calls = 0;
    o.progress = [&](long long done, long long total) {
        ++calls;
        return done <= total;
    };
    const AdditiveFit fit = fitAdditive(*trace, 0, 1, 2, o);
    INFO("KL before " << fit.initialKl << " after " << fit.finalKl);
    CHECK(calls == 200);
    CHECK(fit.finalKl < 0.25 * fit.initialKl);
    REQUIRE(fit.klHistory.size() == 200);
    CHECK(fit.klHistory.back() < fit.klHistory.front());
    CHECK(fit.klHistory.front() == Approx(fit.initialKl).epsilon(1e-4));  // every query is fitted here

    // The returned map is softmax(vᵀ tanh(W_q q_i + W_k k_j)) over j <= i with the returned
    // parameters, and its KL to the reference map is finalKl.
    const int n = 12, d = 8, w = 16;
    std::vector<double> expected(n * n, 0.0), target = ref.probs[1][2];
    double kl = 0;
    for (int i = 0; i < n; ++i) {
        std::vector<double> logits(i + 1);
        for (int j = 0; j <= i; ++j) {
            double s = 0;
            for (int c = 0; c < w; ++c) {
                double a = 0, b = 0;
                for (int e = 0; e < d; ++e)
                    a += fit.wq[c * d + e] * ref.q[1][2][i * d + e], b += fit.wk[c * d + e] * ref.k[1][2][j * d + e];
                s += fit.v[c] * std::tanh(a + b);
            }
            logits[j] = s;
        }
        const auto p = softmaxOf(logits);
        for (int j = 0; j <= i; ++j) {
            expected[i * n + j] = p[j];
            kl += target[i * n + j] * std::log(target[i * n + j] / p[j]) / n;
        }
    }
    requireMapEquals(fit.map, expected, 1e-5);
    CHECK(fit.finalKl == Approx(kl).epsilon(1e-3));

    SECTION("deterministic for a seed; cancellable; hybrid mixes the two maps") {
        o.progress = {};
        CHECK(fitAdditive(*trace, 0, 1, 2, o).map.values == fit.map.values);
        o.progress = [](long long done, long long) { return done < 5; };
        CHECK_THROWS_AS(fitAdditive(*trace, 0, 1, 2, o), Cancelled);
        const HeadMap dot = trace->map(0, 1, 2);
        const HeadMap hybrid = mixMaps(fit.map, dot, 0.3);
        for (int i = 0; i < n; ++i) {
            double s = 0;
            for (int j = 0; j < n; ++j) {
                REQUIRE(hybrid.at(i, j) ==
                        Approx(0.3 * expected[i * n + j] + 0.7 * ref.probs[1][2][i * n + j]).margin(1e-5));
                s += hybrid.at(i, j);
            }
            REQUIRE(s == Approx(1.0).margin(1e-5));
        }
        CHECK_THROWS_WITH(mixMaps(fit.map, dot, 1.5), Catch::Contains("gate must be in [0, 1]"));
        o.width = 0;
        CHECK_THROWS_WITH(fitAdditive(*trace, 0, 1, 2, o), Catch::Contains("width, steps"));
        o.width = 4;
        CHECK_THROWS_WITH(fitAdditive(*trace, 0, 1, 9, o), Catch::Contains("head 9 is out of range"));
    }
    SECTION("the lab's map of the head (labMap) is the variant the spec names, with its KL from the dot map") {
        const BlockInfo& block = trace->blocks()[0];
        CHECK_FALSE(variantNeedsFit(block, LabVariant::Linear));
        CHECK(variantNeedsFit(block, LabVariant::Additive));
        CHECK(variantNeedsFit(block, LabVariant::Hybrid));
        VariantSpec spec;
        for (LabVariant v : {LabVariant::Native, LabVariant::Dot}) {
            spec.variant = v;
            const LabMap m = labMap(*trace, 0, 1, 2, spec, nullptr, /*withKlFromDot=*/true);
            requireMapEquals(m.map, ref.probs[1][2], 1e-5);
            CHECK(m.klFromDot < 0);  // the dot map itself
        }
        spec.variant = LabVariant::Additive;
        CHECK_THROWS_WITH(labMap(*trace, 0, 1, 2, spec), Catch::Contains("no additive fit yet"));
        requireMapEquals(labMap(*trace, 0, 1, 2, spec, &fit).map, expected, 1e-5);
        spec.variant = LabVariant::Hybrid;
        spec.gate = 0.3;
        const LabMap hybrid = labMap(*trace, 0, 1, 2, spec, &fit, /*withKlFromDot=*/true);
        std::vector<double> mixed(n * n);
        double klMixed = 0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j <= i; ++j) {
                const double pd = ref.probs[1][2][i * n + j];
                mixed[i * n + j] = 0.3 * expected[i * n + j] + 0.7 * pd;
                klMixed += pd * std::log(pd / mixed[i * n + j]) / n;
            }
        requireMapEquals(hybrid.map, mixed, 1e-5);
        CHECK(hybrid.klFromDot == Approx(klMixed).epsilon(1e-3));
        spec.variant = LabVariant::Linear;
        spec.map.featureMap = FeatureMap::Relu;
        MapOptions relu;
        relu.variant = MapVariant::Linear;
        relu.featureMap = FeatureMap::Relu;
        CHECK(labMap(*trace, 0, 1, 2, spec).map.values == trace->map(0, 1, 2, relu).values);
    }
    SECTION("a subset of queries for long inputs") {
        o.maxQueries = 5;
        o.steps = 50;
        o.progress = {};
        const AdditiveFit part = fitAdditive(*trace, 0, 1, 2, o);
        CHECK(part.map.rows == 12);
        CHECK(part.finalKl < part.initialKl);
    }
}

TEST_CASE("per-head metrics of a Trace use the documented definitions", "[lab][metrics]") {
    const Fixture& f = fixture();
    auto trace = f.model->forward(f.ids64);
    MetricsOptions o;
    o.separatorLabels = {"t5"};  // positions 5 and 6
    const auto metrics = headMetrics(*trace, o);
    REQUIRE(metrics.size() == 12);
    const HeadMetrics& m = metrics[6];  // layer 1, head 2
    CHECK(m.layer == 1);
    CHECK(m.head == 2);
    const HeadMap map = trace->map(0, 1, 2);
    CHECK(m.entropy == Approx(meanRowEntropy(map)));
    CHECK(m.meanDistance == Approx(meanAttentionDistance(map)));
    CHECK(m.firstToken == Approx(attentionToKeys(map, {0})));
    CHECK(m.separator == Approx(attentionToKeys(map, {5, 6})));
    CHECK(m.separator > 0);
    CHECK(m.pattern == classifyPattern(map));
    MapOptions lin;
    lin.variant = MapVariant::Linear;
    CHECK(m.klDotLinear == Approx(variantKl(*trace, 0, 1, 2, MapOptions{}, lin)));

    const HeadMap rollout = blockRollout(*trace, 0);
    std::vector<HeadMap> layers;
    for (int l = 0; l < 3; ++l) layers.push_back(averageHeads(layerMaps(*trace, 0, l)));
    CHECK(rollout.values == attentionRollout(layers).values);
    const auto sim = blockSimilarity(*trace, 0);
    REQUIRE(sim.size() == 144);
    CHECK(sim[6 * 12 + 6] == Approx(1.0));
    CHECK(sim[6 * 12 + 1] == Approx(mapCosine(map, trace->map(0, 0, 1))));
    FlowOptions fo;
    fo.rows = {11};
    const HeadMap flow = blockFlow(*trace, 0, {}, fo);
    CHECK(flow.at(11, 0) > 0);
}

}  // namespace test_lab_variants
