// The sparse and cosine kinds of issue 36 on GPT-2 heads (causal, scale 1/√d), each against the
// double-precision references of support/reference_kinds: local windows at their edges, top-k
// with its tie rule, Reformer LSH with fixed random rotations and its causal and self rules,
// cosFormer's re-weighted linear map.
#include "attnscope/lab/lab.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "reference_gpt2.h"
#include "reference_kinds.h"

#include <catch2/catch.hpp>

#include <cmath>

namespace test_attention_kinds {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

struct Fixture {
    Gpt2Checkpoint checkpoint;
    std::shared_ptr<const Model> model;
    std::vector<long long> ids;
    std::shared_ptr<const Trace> trace;
    Gpt2Reference ref;
};

// noPositions: wpe = 0, so equal tokens have equal layer-0 keys (exact ties in top-k).
Fixture makeFixture(bool noPositions, std::vector<long long> ids) {
    Fixture x;
    Gpt2Spec spec;
    spec.layers = 2;
    spec.embd = 32;
    x.checkpoint = makeGpt2(spec, 17);
    if (noPositions)
        for (float& v : x.checkpoint.tensors.at("wpe.weight").values) v = 0.f;
    const auto dir = freshDir("attention-kinds");
    writeGpt2Folder(dir, x.checkpoint);
    x.model = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});
    x.ids = std::move(ids);
    x.trace = x.model->forward(std::vector<std::int64_t>(x.ids.begin(), x.ids.end()));
    x.ref = referenceGpt2(x.checkpoint, x.ids);
    return x;
}

const Fixture& fixture() {
    static const Fixture f = makeFixture(false, {3, 17, 0, 39, 22, 5, 5, 11, 30, 2, 8, 19, 7, 1});
    return f;
}

KeepMask causalAllowed(int n) {
    KeepMask a(static_cast<std::size_t>(n) * n, 0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) a[i * n + j] = 1;
    return a;
}

KeepMask both(const KeepMask& a, const KeepMask& b) {
    KeepMask out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] && b[i];
    return out;
}

std::vector<double> scaled(const std::vector<double>& v, double factor) {
    std::vector<double> out(v);
    for (double& x : out) x *= factor;
    return out;
}

void requireMap(const HeadMap& map, const std::vector<double>& expected) {
    REQUIRE(map.values.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("row " << i / map.cols << " key " << i % map.cols);
        if (expected[i] == 0)
            REQUIRE(map.values[i] == 0.f);  // kept-out and masked keys are exactly 0
        else
            REQUIRE(map.values[i] == Approx(expected[i]).margin(2e-6));
    }
}

MapOptions variant(MapVariant v) {
    MapOptions o;
    o.variant = v;
    return o;
}

}  // namespace

TEST_CASE("local attention keeps the causal or two-sided window and renormalises the head's logits", "[kinds]") {
    const Fixture& f = fixture();
    const int n = static_cast<int>(f.ids.size());
    const KeepMask allowed = causalAllowed(n);
    for (int window : {1, 3, 5, 20})
        for (bool twoSided : {false, true})
            for (int layer = 0; layer < 2; ++layer)
                for (int head = 0; head < 4; ++head) {
                    INFO("window " << window << (twoSided ? " two-sided" : " causal") << " layer " << layer << " head "
                                   << head);
                    MapOptions o = variant(MapVariant::Local);
                    o.sparse.window = window;
                    o.sparse.twoSided = twoSided;
                    const HeadMap map = f.trace->map(0, layer, head, o);
                    const KeepMask keep = both(allowed, localKeepRef(n, n, window, twoSided));
                    requireMap(map, softmaxKeptRef(f.ref.scores[layer][head], keep, n, n));
                }
    // The window's edge: with W = 3 row 9 keeps keys 7, 8, 9 and nothing before.
    MapOptions o = variant(MapVariant::Local);
    o.sparse.window = 3;
    const HeadMap map = f.trace->map(0, 1, 2, o);
    CHECK(map.at(9, 6) == 0.f);
    CHECK(map.at(9, 7) > 0.f);
    CHECK(map.at(9, 9) > 0.f);
    CHECK(map.at(9, 10) == 0.f);
    // At a display temperature the kept logits are divided by T before the softmax.
    o.temperature = 2.5;
    requireMap(f.trace->map(0, 1, 2, o),
               softmaxKeptRef(scaled(f.ref.scores[1][2], 1 / 2.5), both(allowed, localKeepRef(n, n, 3, false)), n, n));
}

TEST_CASE("top-k attention keeps the k largest logits per row, ties to the lower key index", "[kinds]") {
    const Fixture& f = fixture();
    const int n = static_cast<int>(f.ids.size());
    const KeepMask allowed = causalAllowed(n);
    for (int k : {1, 2, 4, 30})
        for (int head = 0; head < 4; ++head) {
            INFO("k " << k << " head " << head);
            MapOptions o = variant(MapVariant::TopK);
            o.sparse.keep = k;
            const HeadMap map = f.trace->map(0, 1, head, o);
            requireMap(map, softmaxKeptRef(f.ref.scores[1][head], topkKeepRef(f.ref.scores[1][head], allowed, n, n, k),
                                           n, n));
            for (int i = 0; i < n; ++i) {
                int kept = 0;
                for (int j = 0; j < n; ++j) kept += map.at(i, j) > 0;
                CHECK(kept == std::min(k, i + 1));
            }
        }

    // Without position embeddings the repeated token 5 has identical layer-0 keys: exact ties.
    const Fixture tied = makeFixture(true, {5, 9, 5, 5, 12, 9, 5, 2});
    const int m = static_cast<int>(tied.ids.size());
    int splitTies = 0;
    for (int k = 1; k <= m; ++k)
        for (int head = 0; head < 4; ++head) {
            INFO("tied, k " << k << " head " << head);
            MapOptions o = variant(MapVariant::TopK);
            o.sparse.keep = k;
            const HeadMap map = tied.trace->map(0, 0, head, o);
            const std::vector<double>& s = tied.ref.scores[0][head];
            requireMap(map, softmaxKeptRef(s, topkKeepRef(s, causalAllowed(m), m, m, k), m, m));
            // A tie group cut by the k-th place keeps its lower keys: count the rows where it happens.
            for (int i = k; i < m; ++i)
                for (int j = 0; j <= i; ++j)
                    for (int o2 = j + 1; o2 <= i; ++o2)
                        if (tied.ids[j] == tied.ids[o2] && map.at(i, j) > 0 && map.at(i, o2) == 0) {
                            ++splitTies;
                            CHECK(s[i * m + j] == s[i * m + o2]);  // a real tie in the reference
                        }
        }
    CHECK(splitTies > 0);  // the case really has ties at the cut
}

TEST_CASE("LSH attention follows Reformer's hashing, chunks, rounds, causal and self rules", "[kinds]") {
    const Fixture& f = fixture();
    const int n = static_cast<int>(f.ids.size()), d = 8;
    for (int buckets : {2, 4, 6})
        for (int rounds : {1, 3})
            for (std::uint64_t seed : {0ull, 7ull})
                for (int head = 0; head < 4; ++head) {
                    INFO("buckets " << buckets << " rounds " << rounds << " seed " << seed << " head " << head);
                    MapOptions o = variant(MapVariant::Lsh);
                    o.sparse.buckets = buckets;
                    o.sparse.rounds = rounds;
                    o.sparse.seed = seed;
                    const HeadMap map = f.trace->map(0, 1, head, o);
                    const KeepMask keep = lshKeepRef(f.ref.q[1][head], n, d, buckets, rounds, 0, seed, true);
                    requireMap(map, softmaxKeptRef(f.ref.scores[1][head], keep, n, n));
                    CHECK(map.at(0, 0) == 1.f);  // the first query has no other key: it keeps itself
                    for (int i = 1; i < n; ++i) {
                        double others = 0;
                        for (int j = 0; j < i; ++j) others += map.at(i, j);
                        if (others > 0) CHECK(map.at(i, i) == 0.f);  // self excluded when others exist
                        for (int j = i + 1; j < n; ++j) CHECK(map.at(i, j) == 0.f);
                    }
                }
    // The rotations are fixed by the seed: another seed hashes differently somewhere.
    MapOptions a = variant(MapVariant::Lsh), b = a;
    a.sparse.buckets = b.sparse.buckets = 8;
    b.sparse.seed = 1;
    bool differs = false;
    for (int head = 0; head < 4; ++head)
        differs = differs || f.trace->map(0, 1, head, a).values != f.trace->map(0, 1, head, b).values;
    CHECK(differs);
    CHECK(f.trace->map(0, 1, 0, a).values == f.trace->map(0, 1, 0, a).values);
}

TEST_CASE("cosFormer's linear map re-weights relu features by cos(π/2·(i-j)/M)", "[kinds]") {
    const Fixture& f = fixture();
    const int n = static_cast<int>(f.ids.size()), d = 8;
    for (int head = 0; head < 4; ++head) {
        MapOptions o = variant(MapVariant::Linear);
        o.featureMap = FeatureMap::Cos;
        const HeadMap map = f.trace->map(0, 1, head, o);
        const std::vector<double> expected = cosMapRef(f.ref.q[1][head], f.ref.k[1][head], n, n, d, causalAllowed(n));
        REQUIRE(map.values.size() == expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i) CHECK(map.values[i] == Approx(expected[i]).margin(2e-6));
    }
}

TEST_CASE("sparse kinds refuse options out of range with the option's name", "[kinds]") {
    const Fixture& f = fixture();
    MapOptions o = variant(MapVariant::Local);
    o.sparse.window = 0;
    CHECK_THROWS_WITH(f.trace->map(0, 0, 0, o), Catch::Contains("window >= 1"));
    o = variant(MapVariant::TopK);
    o.sparse.keep = 0;
    CHECK_THROWS_WITH(f.trace->map(0, 0, 0, o), Catch::Contains("k >= 1"));
    o = variant(MapVariant::Lsh);
    o.sparse.buckets = 3;
    CHECK_THROWS_WITH(f.trace->map(0, 0, 0, o), Catch::Contains("even number of buckets"));
    o.sparse.buckets = 4;
    o.sparse.rounds = 0;
    CHECK_THROWS_WITH(f.trace->map(0, 0, 0, o), Catch::Contains("rounds >= 1"));
    // The lab's variants are the trace's.
    VariantSpec spec;
    spec.variant = LabVariant::TopK;
    spec.map.sparse.keep = 2;
    MapOptions t = variant(MapVariant::TopK);
    t.sparse.keep = 2;
    CHECK(labMap(*f.trace, 0, 1, 1, spec).map.values == f.trace->map(0, 1, 1, t).values);
}

}  // namespace test_attention_kinds
