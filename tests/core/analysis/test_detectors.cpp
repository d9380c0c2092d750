// Head detectors (TransformerLens's definitions): patterns and scores on hand-made maps whose
// answers are worked out here, the probe the detector builds, and a hand-weighted two-layer
// attention-only GPT-2 whose heads are a previous-token head, a sink head, an induction head
// (reading the previous-token head's output) and a uniform head.
#include "attnscope/analysis/detectors.h"
#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

namespace test_detectors {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

HeadMap square(int n, const std::vector<double>& values) {
    HeadMap m{n, n, {}};
    for (double v : values) m.values.push_back(static_cast<float>(v));
    return m;
}

// Causal map with all of each row on key f(i).
HeadMap oneHot(int n, int (*f)(int i, const std::vector<std::int64_t>& ids), const std::vector<std::int64_t>& ids) {
    HeadMap m{n, n, std::vector<float>(static_cast<std::size_t>(n) * n, 0.f)};
    for (int i = 0; i < n; ++i) m.values[static_cast<std::size_t>(i) * n + f(i, ids)] = 1.f;
    return m;
}

HeadMap uniformCausal(int n) {
    HeadMap m{n, n, std::vector<float>(static_cast<std::size_t>(n) * n, 0.f)};
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) m.values[static_cast<std::size_t>(i) * n + j] = 1.f / float(i + 1);
    return m;
}

}  // namespace

TEST_CASE("detection patterns are TransformerLens's", "[detectors]") {
    const std::vector<std::int64_t> ids = {5, 7, 5, 7, 9, 5};
    const int n = 6;
    const auto at = [&](const std::vector<std::uint8_t>& d, int i, int j) { return int(d[std::size_t(i) * n + j]); };
    const auto prev = previousTokenPattern(n), dup = duplicateTokenPattern(ids), ind = inductionPattern(ids),
               first = firstTokenPattern(n);
    int prevOnes = 0, dupOnes = 0, indOnes = 0, firstOnes = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            prevOnes += at(prev, i, j), dupOnes += at(dup, i, j), indOnes += at(ind, i, j),
                    firstOnes += at(first, i, j);
            CHECK(at(prev, i, j) == (j == i - 1));
            CHECK(at(first, i, j) == (j == 0 && i >= 1));
        }
    CHECK(prevOnes == 5);
    CHECK(firstOnes == 5);
    // Duplicates: 2->0, 3->1, 5->0, 5->2 (never the token itself, never a later one).
    CHECK(dupOnes == 4);
    CHECK(at(dup, 2, 0) == 1);
    CHECK(at(dup, 3, 1) == 1);
    CHECK(at(dup, 5, 0) == 1);
    CHECK(at(dup, 5, 2) == 1);
    // Induction = duplicates shifted one key right, kept causal: 2->1, 3->2, 5->1, 5->3.
    CHECK(indOnes == 4);
    CHECK(at(ind, 2, 1) == 1);
    CHECK(at(ind, 3, 2) == 1);
    CHECK(at(ind, 5, 1) == 1);
    CHECK(at(ind, 5, 3) == 1);
    // A key j = i is allowed when the previous token repeats the current one.
    const auto twice = inductionPattern({4, 4});
    CHECK(int(twice[3]) == 1);
}

TEST_CASE("detection scores on maps with known answers", "[detectors]") {
    SECTION("worked 3x3 example, both normalisations") {
        // Rows: [1,0,0], [0.25,0.75,0], [0.2,0.3,0.5]; previous-token cells (1,0), (2,1).
        const HeadMap m = square(3, {1, 0, 0, 0.25, 0.75, 0, 0.2, 0.3, 0.5});
        const auto d = previousTokenPattern(3);
        CHECK(detectionScore(m, d) == Approx((0.25 + 0.3) / 2.0));                          // rows 1, 2 only
        CHECK(detectionScore(m, d, DetectionNorm::AllRows) == Approx((0.25 + 0.3) / 3.0));  // TransformerLens
    }
    SECTION("perfect heads score 1; TransformerLens's measure counts the rows without a target") {
        const int L = 7;
        std::vector<std::int64_t> ids{0};
        for (int k = 0; k < L; ++k) ids.push_back(10 + k);
        for (int k = 0; k < L; ++k) ids.push_back(10 + k);
        const int n = static_cast<int>(ids.size());
        const HeadMap prev = oneHot(
                n, [](int i, const auto&) { return std::max(0, i - 1); }, ids);
        CHECK(detectionScore(prev, previousTokenPattern(n)) == 1.0);
        CHECK(detectionScore(prev, previousTokenPattern(n), DetectionNorm::AllRows) == Approx(double(n - 1) / n));
        // Induction: second-half row 1 + L + k looks at 2 + k; first-half rows at themselves.
        const HeadMap ind = oneHot(
                n,
                [](int i, const auto& v) {
                    const int L = (int(v.size()) - 1) / 2;
                    return i > L ? i - L + 1 : i;
                },
                ids);
        CHECK(detectionScore(ind, inductionPattern(ids)) == 1.0);
        CHECK(detectionScore(ind, inductionPattern(ids), DetectionNorm::AllRows) == Approx(double(L) / (2 * L + 1)));
        CHECK(detectionScore(ind, duplicateTokenPattern(ids)) == 0.0);
        const HeadMap dup = oneHot(
                n,
                [](int i, const auto& v) {
                    const int L = (int(v.size()) - 1) / 2;
                    return i > L ? i - L : i;
                },
                ids);
        CHECK(detectionScore(dup, duplicateTokenPattern(ids)) == 1.0);
        CHECK(detectionScore(dup, inductionPattern(ids)) == 0.0);
        const HeadMap sink = oneHot(
                n, [](int, const auto&) { return 0; }, ids);
        CHECK(detectionScore(sink, firstTokenPattern(n)) == 1.0);
        CHECK(detectionScore(sink, previousTokenPattern(n)) ==
              Approx(1.0 / (n - 1)));  // only row 1's key 0 is previous
    }
    SECTION("a uniform causal head: previous = mean over rows i >= 1 of 1/(i+1)") {
        const int n = 9;
        double expected = 0;
        for (int i = 1; i < n; ++i) expected += 1.0 / (i + 1);
        CHECK(detectionScore(uniformCausal(n), previousTokenPattern(n)) == Approx(expected / (n - 1)).epsilon(1e-6));
        CHECK(detectionScore(uniformCausal(n), firstTokenPattern(n)) == Approx(expected / (n - 1)).epsilon(1e-6));
    }
    SECTION("no target anywhere gives 0; shapes are checked") {
        CHECK(detectionScore(uniformCausal(4), duplicateTokenPattern({1, 2, 3, 4})) == 0.0);
        CHECK_THROWS_WITH(detectionScore(HeadMap{2, 3, std::vector<float>(6, 0.f)}, previousTokenPattern(2)),
                          Catch::Contains("square"));
        CHECK_THROWS_WITH(detectionScore(uniformCausal(3), previousTokenPattern(4)), Catch::Contains("16 cells"));
    }
}

TEST_CASE("the detector's probe: first id, then L distinct random ids twice", "[detectors]") {
    DetectorOptions o;
    o.seed = 3;
    const auto p = detectorProbe(1000, 64, o);
    REQUIRE(p.size() == 63);  // L = min(50, (64 - 1) / 2) = 31
    const int L = 31;
    for (int k = 0; k < L; ++k) CHECK(p[1 + k] == p[1 + L + k]);
    std::set<std::int64_t> distinct(p.begin(), p.begin() + 1 + L);
    CHECK(distinct.size() == std::size_t(L + 1));
    for (auto id : p) CHECK((id >= 0 && id < 1000));
    CHECK(detectorProbe(1000, 64, o) == p);  // reproducible
    o.seed = 4;
    CHECK(detectorProbe(1000, 64, o) != p);
    o.firstId = 7;
    o.repeatLength = 5;
    const auto q = detectorProbe(1000, 64, o);
    CHECK(q.size() == 11);
    CHECK(q[0] == 7);
    o.repeatLength = 40;
    CHECK_THROWS_WITH(detectorProbe(1000, 64, o), Catch::Contains("exceeds the model's 64 positions"));
    o.repeatLength = 5;
    o.firstId = 1000;
    CHECK_THROWS_WITH(detectorProbe(1000, 64, o), Catch::Contains("outside the vocabulary"));
}

namespace {

// A GPT-2 whose residual stream is [token one-hot (V) | position one-hot (P) | previous token (V)]
// (E = 96, 2 heads of 48 per layer), MLPs zero, LayerNorms plain (weight 1, bias 0):
//   layer 0 head 0  previous token: q from position i on dim i-1, k from position j on dim j;
//                   its value copies the token dims, written into the previous-token dims
//   layer 0 head 1  sink: a constant query (bias) against a key only position 0 has
//   layer 1 head 0  induction: q = current token, k = the previous-token dims, so query i
//                   attends to the key whose previous token is its own token
//   layer 1 head 1  zero query: uniform over the keys it sees
Gpt2Checkpoint inductionModel() {
    Gpt2Spec spec;
    spec.vocab = 32;
    spec.positions = 32;
    spec.embd = 96;
    spec.heads = 2;
    spec.layers = 2;
    spec.vocabJson = true;
    Gpt2Checkpoint c = makeGpt2(spec, 1);
    for (auto& [name, t] : c.tensors) std::fill(t.values.begin(), t.values.end(), 0.f);
    const int V = 32, P = 32, E = 96, d = 48;
    const int tok = 0, pos = V, prev = V + P;
    auto set = [&](const std::string& name, int row, int col, float v) {
        Tensor& t = c.tensors.at(name);
        t.values[static_cast<std::size_t>(row) * t.shape[1] + col] = v;
    };
    for (int v = 0; v < V; ++v) set("wte.weight", v, tok + v, 1.f);
    for (int p = 0; p < P; ++p) set("wpe.weight", p, pos + p, 1.f);
    for (int l = 0; l < 2; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        for (const char* ln : {"ln_1.weight", "ln_2.weight"})
            std::fill(c.tensors.at(p + ln).values.begin(), c.tensors.at(p + ln).values.end(), 1.f);
    }
    std::fill(c.tensors.at("ln_f.weight").values.begin(), c.tensors.at("ln_f.weight").values.end(), 1.f);
    const std::string a0 = "h.0.attn.", a1 = "h.1.attn.";
    // Layer 0 head 0: q_i on dim i-1 (positions 1..31), k_j on dim j.
    for (int cdim = 0; cdim < P - 1; ++cdim) {
        set(a0 + "c_attn.weight", pos + cdim + 1, cdim, 1.5f);
        set(a0 + "c_attn.weight", pos + cdim, E + cdim, 1.5f);
    }
    // Its value: the token dims; c_proj writes them (scaled back from LayerNorm's ≈ 6.9) into prev.
    for (int v = 0; v < V; ++v) {
        set(a0 + "c_attn.weight", tok + v, 2 * E + v, 1.f);
        set(a0 + "c_proj.weight", v, prev + v, 0.15f);
    }
    // Layer 0 head 1: constant query on its dim 0, key dim 0 from position 0.
    c.tensors.at(a0 + "c_attn.bias").values[d + 0] = 4.f;
    set(a0 + "c_attn.weight", pos + 0, E + d + 0, 4.f);
    // Layer 1 head 0: q = current token, k = previous token.
    for (int v = 0; v < V; ++v) {
        set(a1 + "c_attn.weight", tok + v, v, 2.f);
        set(a1 + "c_attn.weight", prev + v, E + v, 2.f);
    }
    return c;
}

}  // namespace

TEST_CASE("detectors find the heads of a hand-weighted induction circuit", "[detectors]") {
    const auto dir = freshDir("detectors-induction");
    writeGpt2Folder(dir, inductionModel());
    LoadOptions lo;
    lo.device = DeviceChoice::Cpu;
    auto model = Model::load(dir, lo);
    DetectorOptions o;
    o.seed = 11;
    const DetectorReport r = headDetectors(*model, o, {});
    REQUIRE(r.repeatLength == 15);  // (32 - 1) / 2
    REQUIRE(r.probe.size() == 31);
    REQUIRE(r.heads.size() == 4);
    const auto score = [&](int l, int h) { return r.heads[std::size_t(l * 2 + h)].scores; };
    INFO("prev " << score(0, 0).previousToken << " sink " << score(0, 1).firstToken << " induction "
                 << score(1, 0).induction);
    CHECK(score(0, 0).previousToken > 0.99);
    CHECK(score(0, 1).firstToken > 0.99);
    CHECK(score(1, 0).induction > 0.95);
    // Each head scores low on the other detectors.
    CHECK(score(0, 0).induction < 0.1);
    CHECK(score(0, 1).previousToken < 0.1);
    CHECK(score(1, 0).previousToken < 0.1);
    CHECK(score(1, 0).duplicateToken < 0.1);
    // The uniform head's scores are worked out exactly: previous and first token are both the
    // mean over rows i >= 1 of 1/(i+1); duplicate and induction over the second half's rows
    // i = 16..30, each with one target among i + 1 keys.
    double prevExpected = 0, halfExpected = 0;
    for (int i = 1; i < 31; ++i) prevExpected += 1.0 / (i + 1);
    for (int i = 16; i < 31; ++i) halfExpected += 1.0 / (i + 1);
    CHECK(score(1, 1).previousToken == Approx(prevExpected / 30).epsilon(1e-5));
    CHECK(score(1, 1).firstToken == Approx(prevExpected / 30).epsilon(1e-5));
    CHECK(score(1, 1).duplicateToken == Approx(halfExpected / 15).epsilon(1e-5));
    CHECK(score(1, 1).induction == Approx(halfExpected / 15).epsilon(1e-5));

    // TransformerLens's own normalisation: the induction head loses the first half's rows.
    o.norm = DetectionNorm::AllRows;
    const DetectorReport tl = headDetectors(*model, o, {});
    CHECK(tl.heads[2].scores.induction == Approx(r.heads[2].scores.induction * 15.0 / 31.0).epsilon(1e-6));
}

TEST_CASE("detectors join the metric list", "[detectors]") {
    std::vector<HeadMetrics> metrics(2);
    metrics[0].block = metrics[1].block = "self";
    metrics[1].head = 1;
    HeadDetectors d{"self", 0, 1, {}};
    d.scores.induction = 0.75;
    d.scores.previousToken = 0.25;
    attachDetectors(metrics, {d});
    CHECK(!metrics[0].detectors.computed());
    CHECK(metrics[1].detectors.computed());
    int detectors = 0;
    for (const HeadMetricInfo& info : headMetricList()) {
        if (!info.detector) continue;
        ++detectors;
        CHECK(std::isnan(info.value(metrics[0])));
        if (std::string(info.key) == "det_induction") CHECK(info.value(metrics[1]) == 0.75);
        if (std::string(info.key) == "det_previous_token") CHECK(info.value(metrics[1]) == 0.25);
    }
    CHECK(detectors == 4);
}

}  // namespace test_detectors
