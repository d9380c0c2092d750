// Per-head Hedgehog distillation (lab/hedgehog.h) on a random GPT-2: the learned linear map and
// the forward with replaced heads against the double-precision references, the reported KL against
// the reference maps, a fit that lowers the KL with a fixed seed, the files, and the refusals.
#include "attnscope/analysis/metrics.h"
#include "attnscope/lab/hedgehog.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"
#include "reference_gpt2.h"
#include "reference_kinds.h"
#include "reference_math.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <random>

namespace test_hedgehog {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

struct HedgehogFixture {
    Gpt2Checkpoint checkpoint;
    std::shared_ptr<const Model> model;
    std::filesystem::path dir;
};

const HedgehogFixture& hedgehogFixture() {
    static const HedgehogFixture f = [] {
        HedgehogFixture x;
        Gpt2Spec spec;  // 2 layers, 4 heads of width 4
        x.checkpoint = makeGpt2(spec, 23);
        x.dir = freshDir("hedgehog");
        writeGpt2Folder(x.dir, x.checkpoint);
        x.model = Model::load(x.dir, LoadOptions{DeviceChoice::Cpu, {}});
        return x;
    }();
    return f;
}

LinearHead randomHead(int layer, int head, int d, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.f, 0.7f);
    LinearHead h;
    h.head = {"self", layer, head};
    for (LearnedFeatureMap* side : {&h.query, &h.key}) {
        side->features = side->dim = d;
        for (int i = 0; i < d * d; ++i) side->weight.push_back(normal(rng));
        for (int i = 0; i < d; ++i) side->bias.push_back(normal(rng));
    }
    return h;
}

std::vector<double> toDouble(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

KeepMask causalMask(int n) {
    KeepMask m(static_cast<std::size_t>(n) * n, 0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) m[static_cast<std::size_t>(i) * n + j] = 1;
    return m;
}

std::vector<double> referenceMap(const Gpt2Reference& ref, int layer, int head, const LinearHead& h, int n, int d) {
    return hedgehogMapRef(ref.q[layer][head], ref.k[layer][head], n, n, d, toDouble(h.query.weight),
                          toDouble(h.query.bias), toDouble(h.key.weight), toDouble(h.key.bias), d, causalMask(n));
}

const std::vector<long long> kIds = {3, 17, 0, 39, 22, 5, 5, 11, 30, 2};

}  // namespace

TEST_CASE("hedgehog: the learned linear map equals the double-precision reference", "[hedgehog]") {
    const auto& f = hedgehogFixture();
    const std::vector<std::int64_t> ids(kIds.begin(), kIds.end());
    const auto trace = f.model->forward(ids);
    const Gpt2Reference ref = referenceGpt2(f.checkpoint, kIds);
    const int n = static_cast<int>(ids.size()), d = 4;
    for (int layer = 0; layer < 2; ++layer)
        for (int head = 0; head < 4; ++head) {
            const LinearHead h = randomHead(layer, head, d, 100 + layer * 4 + head);
            const HeadMap map = hedgehogMap(*trace, 0, layer, head, h);
            const std::vector<double> expected = referenceMap(ref, layer, head, h, n, d);
            REQUIRE(map.values.size() == expected.size());
            for (std::size_t i = 0; i < expected.size(); ++i) {
                INFO("layer " << layer << " head " << head << " entry " << i);
                REQUIRE(map.values[i] == Approx(expected[i]).margin(2e-5));
            }
        }
    // The untrained map: W = I, b = 0.
    const LinearHead identity = identityLinearHead({"self", 1, 2}, d);
    const HeadMap map = hedgehogMap(*trace, 0, 1, 2, identity);
    const std::vector<double> expected = referenceMap(ref, 1, 2, identity, n, d);
    for (std::size_t i = 0; i < expected.size(); ++i) REQUIRE(map.values[i] == Approx(expected[i]).margin(2e-5));
}

TEST_CASE("hedgehog: replaced heads change the forward as the reference with the linear map in place", "[hedgehog]") {
    const auto& f = hedgehogFixture();
    const std::vector<std::int64_t> ids(kIds.begin(), kIds.end());
    const int n = static_cast<int>(ids.size()), d = 4, last = 1;
    const Gpt2Reference plain = referenceGpt2(f.checkpoint, kIds);
    RunOptions options;
    options.linearHeads = {randomHead(last, 0, d, 7), randomHead(last, 3, d, 8)};
    std::vector<std::vector<double>> maps;  // the last layer's q and k do not depend on its own output
    for (const LinearHead& h : options.linearHeads) maps.push_back(referenceMap(plain, last, h.head.head, h, n, d));
    Gpt2Reference replaced;
    {
        ScopedProbsHook hook([&](int layer, int head, std::vector<double>& probs) {
            if (layer != last) return;
            if (head == 0) probs = maps[0];
            if (head == 3) probs = maps[1];
        });
        replaced = referenceGpt2(f.checkpoint, kIds);
    }
    const auto trace = f.model->forward(ids, options);
    const auto& logits = trace->nextTokenLogits();
    REQUIRE(logits.size() == replaced.nextTokenLogits.size());
    double moved = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        INFO("logit " << i);
        REQUIRE(logits[i] == Approx(replaced.nextTokenLogits[i]).margin(1e-4));
        moved = std::max(moved, std::abs(replaced.nextTokenLogits[i] - plain.nextTokenLogits[i]));
    }
    REQUIRE(moved > 1e-3);  // the replacement changed the output

    // A map whose width is not the head's is refused, naming the head.
    RunOptions bad;
    bad.linearHeads = {randomHead(0, 1, 3, 9)};
    REQUIRE_THROWS_WITH(f.model->forward(ids, bad), Catch::Contains("linear head 0:1") && Catch::Contains("width 3"));
}

TEST_CASE("hedgehog: the fit lowers the KL, reports it as the reference maps give it, and is deterministic",
          "[hedgehog]") {
    const auto& f = hedgehogFixture();
    std::vector<std::vector<std::int64_t>> inputs;
    std::mt19937 rng(5);
    for (int t = 0; t < 5; ++t) {
        std::vector<std::int64_t> ids;
        for (int i = 0; i < 8 + t; ++i) ids.push_back(static_cast<std::int64_t>(rng() % 40));
        inputs.push_back(ids);
    }
    HedgehogOptions o;
    o.steps = 40;
    o.learningRate = 0.05;
    o.batch = 2;
    o.seed = 3;
    o.layers = {1};
    const HedgehogResult r = distilHeads(*f.model, inputs, o);
    REQUIRE(r.block == "self");
    REQUIRE(r.layers == std::vector<int>{1});
    REQUIRE(r.heads == 4);
    REQUIRE(r.dim == 4);
    REQUIRE(r.heldOut);
    REQUIRE(r.trainInputs == 4);
    REQUIRE(r.evalInputs == 1);
    REQUIRE(r.lossHistory.size() == 40);
    REQUIRE(r.fitted.size() == 4);

    // The reported KL of the held-out input (the fifth) from the reference maps, in double precision.
    const std::vector<long long> held(inputs[4].begin(), inputs[4].end());
    const Gpt2Reference ref = referenceGpt2(f.checkpoint, held);
    const int n = static_cast<int>(held.size());
    double fittedSum = 0, initialSum = 0;
    for (int h = 0; h < 4; ++h) {
        const std::vector<double>& p = ref.probs[1][h];
        const auto kl = [&](const std::vector<double>& a) {
            double total = 0;
            for (int i = 0; i < n; ++i)
                for (int j = 0; j <= i; ++j) {
                    const double pij = p[static_cast<std::size_t>(i) * n + j];
                    if (pij > 0) total += pij * std::log(pij / a[static_cast<std::size_t>(i) * n + j]);
                }
            return total / n;
        };
        const LinearHead identity = identityLinearHead({"self", 1, h}, 4);
        INFO("head " << h);
        REQUIRE(r.klInitial[h] == Approx(kl(referenceMap(ref, 1, h, identity, n, 4))).epsilon(1e-3).margin(1e-6));
        REQUIRE(r.klFitted[h] == Approx(kl(referenceMap(ref, 1, h, r.fitted[h], n, 4))).epsilon(1e-3).margin(1e-6));
        fittedSum += r.klFitted[h];
        initialSum += r.klInitial[h];
        REQUIRE(r.klElu[h] > 0);
    }
    // Strictly lower after the fit: the training loss, and the held-out input's mean KL.
    // The first and the last four steps each see every training input twice (batches of 2).
    const auto window = [&](std::size_t from) {
        return r.lossHistory[from] + r.lossHistory[from + 1] + r.lossHistory[from + 2] + r.lossHistory[from + 3];
    };
    REQUIRE(window(36) < 0.9 * window(0));
    REQUIRE(fittedSum < initialSum);
    REQUIRE(r.changeFitted.kind == "next-token");
    REQUIRE(r.changeFitted.inputs == 1);
    REQUIRE(r.changeFitted.meanKl >= 0);

    const HedgehogResult again = distilHeads(*f.model, inputs, o);
    REQUIRE(again.lossHistory == r.lossHistory);
    REQUIRE(again.fitted[2].query.weight == r.fitted[2].query.weight);

    // The files give the same heads back.
    const auto dir = freshDir("hedgehog-files");
    writeFeatureMaps(dir, r);
    const std::vector<LinearHead> read = readFeatureMaps(dir);
    REQUIRE(read.size() == r.fitted.size());
    for (std::size_t i = 0; i < read.size(); ++i) {
        REQUIRE(read[i].head.block == "self");
        REQUIRE(read[i].head.layer == 1);
        REQUIRE(read[i].head.head == static_cast<int>(i));
        REQUIRE(read[i].query.weight == r.fitted[i].query.weight);
        REQUIRE(read[i].key.bias == r.fitted[i].key.bias);
    }
}

TEST_CASE("hedgehog: bad options and files are refused with a message naming them", "[hedgehog]") {
    const auto& f = hedgehogFixture();
    const std::vector<std::vector<std::int64_t>> inputs = {{1, 2, 3, 4}};
    HedgehogOptions o;
    o.steps = 1;
    REQUIRE_THROWS_WITH(distilHeads(*f.model, {}, o), Catch::Contains("at least one input"));
    HedgehogOptions bad = o;
    bad.layers = {2};
    REQUIRE_THROWS_WITH(distilHeads(*f.model, inputs, bad), Catch::Contains("layer 2 is out of range"));
    bad = o;
    bad.block = "cross";
    REQUIRE_THROWS_WITH(distilHeads(*f.model, inputs, bad), Catch::Contains("cross"));
    bad = o;
    bad.learningRate = 0;
    REQUIRE_THROWS_WITH(distilHeads(*f.model, inputs, bad), Catch::Contains("learning rate"));
    bad = o;
    bad.steps = 0;
    REQUIRE_THROWS_WITH(distilHeads(*f.model, inputs, bad), Catch::Contains("steps"));

    const auto dir = freshDir("hedgehog-bad-files");
    REQUIRE_THROWS_WITH(readFeatureMaps(dir), Catch::Contains("feature_maps.json"));
    writeText(dir / "feature_maps.json", R"({"block": "self", "layers": [0], "heads": 4, "dim": 4})");
    REQUIRE_THROWS_WITH(readFeatureMaps(dir), Catch::Contains("feature_maps.npy"));
    writeText(dir / "feature_maps.json", R"({"block": "self", "layers": "0"})");
    REQUIRE_THROWS_WITH(readFeatureMaps(dir), Catch::Contains("\"layers\""));
}

}  // namespace test_hedgehog
