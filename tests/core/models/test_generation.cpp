// Generation: greedy ids against the argmax chain of the independent double-precision forwards
// (GPT-2 and Llama references in tests/support), sampling reproducible by seed, the sampling
// distribution (temperature, top-k, top-p) on logits whose answers are worked out here, and the
// prefix traces a step shows against a forward over the prefix.
#include "attnscope/attention/trace.h"
#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "gpt2_fixture.h"
#include "reference_gpt2.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace test_generation {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::shared_ptr<const Model> loadGpt2(const Gpt2Checkpoint& c, const std::string& name) {
    const auto dir = freshDir(name);
    writeGpt2Folder(dir, c);
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    return Model::load(dir, options);
}

// The argmax of double logits, and the gap to the runner-up (so a test can say the choice is
// not decided by rounding).
std::pair<long long, double> argmaxWithGap(const std::vector<double>& logits) {
    long long best = 0;
    for (std::size_t i = 1; i < logits.size(); ++i)
        if (logits[i] > logits[best]) best = static_cast<long long>(i);
    double second = -INFINITY;
    for (std::size_t i = 0; i < logits.size(); ++i)
        if (static_cast<long long>(i) != best) second = std::max(second, logits[i]);
    return {best, logits[best] - second};
}

std::vector<float> logitsOfProbs(const std::vector<double>& p) {
    std::vector<float> l;
    for (double v : p) l.push_back(static_cast<float>(std::log(v)));
    return l;
}

SamplingOptions sampling(double temperature = 1.0, int topK = 0, double topP = 1.0, std::uint64_t seed = 0) {
    SamplingOptions o;
    o.sample = true;
    o.temperature = temperature;
    o.topK = topK;
    o.topP = topP;
    o.seed = seed;
    return o;
}

}  // namespace

TEST_CASE("sampling distribution: temperature, top-k and top-p on known logits", "[generation]") {
    const std::vector<float> logits = {1.f, 3.f, 0.f, 2.f};
    SECTION("greedy is a one-hot at the argmax, the lower id winning a tie") {
        SamplingOptions greedy;
        CHECK(samplingDistribution(logits, greedy) == std::vector<double>{0, 1, 0, 0});
        CHECK(chooseToken({2.f, 5.f, 5.f}, greedy, 0.99) == 1);
    }
    SECTION("temperature 1 is the softmax, temperature 2 the softmax of logits / 2") {
        for (double t : {1.0, 2.0, 0.5}) {
            double z = 0;
            for (float l : logits) z += std::exp(l / t);
            const auto p = samplingDistribution(logits, sampling(t));
            for (std::size_t i = 0; i < logits.size(); ++i)
                CHECK(p[i] == Approx(std::exp(logits[i] / t) / z).epsilon(1e-12));
        }
    }
    SECTION("top-k keeps the K most likely, renormalised") {
        const auto p = samplingDistribution(logits, sampling(1.0, 2));
        const double z = std::exp(3.0) + std::exp(2.0);
        CHECK(p[0] == 0);
        CHECK(p[2] == 0);
        CHECK(p[1] == Approx(std::exp(3.0) / z).epsilon(1e-12));
        CHECK(p[3] == Approx(std::exp(2.0) / z).epsilon(1e-12));
        CHECK(samplingDistribution(logits, sampling(1.0, 1)) == std::vector<double>{0, 1, 0, 0});
        // K beyond the vocabulary keeps everything.
        CHECK(samplingDistribution(logits, sampling(1.0, 10)) == samplingDistribution(logits, sampling(1.0, 0)));
    }
    SECTION("top-p keeps the smallest most likely set with mass >= p (Hugging Face's rule)") {
        // Probabilities 0.5, 0.3, 0.15, 0.05 in a shuffled order of ids.
        const auto l = logitsOfProbs({0.15, 0.5, 0.05, 0.3});
        auto p = samplingDistribution(l, sampling(1.0, 0, 0.75));  // 0.5 < 0.75, 0.5 + 0.3 >= 0.75
        CHECK(p[0] == 0);
        CHECK(p[2] == 0);
        CHECK(p[1] == Approx(0.5 / 0.8).epsilon(1e-6));
        CHECK(p[3] == Approx(0.3 / 0.8).epsilon(1e-6));
        p = samplingDistribution(l, sampling(1.0, 0, 0.81));  // needs the 0.15 too
        CHECK(p[2] == 0);
        CHECK(p[0] == Approx(0.15 / 0.95).epsilon(1e-6));
        p = samplingDistribution(l, sampling(1.0, 0, 0.2));  // the top token alone
        CHECK(p == std::vector<double>{0, 1, 0, 0});
        // top-k first, then top-p over the renormalised survivors: {0.5, 0.3} -> 0.625, 0.375;
        // p = 0.6 keeps the first alone (0.625 >= 0.6).
        p = samplingDistribution(l, sampling(1.0, 2, 0.6));
        CHECK(p == std::vector<double>{0, 1, 0, 0});
    }
    SECTION("chooseToken walks the cumulative distribution in id order") {
        const auto l = logitsOfProbs({0.15, 0.5, 0.05, 0.3});
        const auto o = sampling();
        CHECK(chooseToken(l, o, 0.0) == 0);
        CHECK(chooseToken(l, o, 0.149) == 0);
        CHECK(chooseToken(l, o, 0.151) == 1);
        CHECK(chooseToken(l, o, 0.66) == 2);
        CHECK(chooseToken(l, o, 0.71) == 3);
        CHECK(chooseToken(l, o, 0.999999) == 3);
        CHECK(chooseToken(l, sampling(1.0, 1), 0.0) == 1);  // top-1 whatever u
    }
    SECTION("out-of-range options are refused by name") {
        CHECK_THROWS_WITH(samplingDistribution(logits, sampling(0.0)), Catch::Contains("sampling temperature"));
        CHECK_THROWS_WITH(samplingDistribution(logits, sampling(NAN)), Catch::Contains("sampling temperature"));
        CHECK_THROWS_WITH(samplingDistribution(logits, sampling(1.0, -1)), Catch::Contains("top-k"));
        CHECK_THROWS_WITH(samplingDistribution(logits, sampling(1.0, 0, 0.0)), Catch::Contains("top-p"));
        CHECK_THROWS_WITH(samplingDistribution(logits, sampling(1.0, 0, 1.5)), Catch::Contains("top-p"));
    }
}

TEST_CASE("greedy generation equals the argmax chain of the reference GPT-2 forward", "[generation]") {
    Gpt2Spec spec;
    spec.layers = 2;
    spec.positions = 24;
    const auto c = makeGpt2(spec, 11);
    auto model = loadGpt2(c, "gen-gpt2");
    const std::vector<std::int64_t> prompt = {3, 17, 0, 39, 22};
    GenerateOptions o;
    o.tokens = 8;
    const Generation g = generate(*model, prompt, o);
    REQUIRE(g.generated.size() == 8);
    CHECK(g.prompt == prompt);

    std::vector<long long> ids(prompt.begin(), prompt.end());
    for (int s = 0; s < o.tokens; ++s) {
        const auto ref = referenceGpt2(c, ids);
        const auto [best, gap] = argmaxWithGap(ref.nextTokenLogits);
        INFO("step " << s << ": reference argmax " << best << " (gap " << gap << ")");
        REQUIRE(gap > 1e-3);  // the choice is not a rounding tie
        CHECK(g.generated[s] == best);
        // The step's output: the reference's softmax, its five most likely ids in order.
        std::vector<double> p(ref.nextTokenLogits.size());
        double sum = 0;
        for (std::size_t i = 0; i < p.size(); ++i)
            sum += p[i] = std::exp(ref.nextTokenLogits[i] - ref.nextTokenLogits[std::size_t(best)]);
        std::vector<std::size_t> order(p.size());
        std::iota(order.begin(), order.end(), std::size_t(0));
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
        const StepOutput& out = g.steps[std::size_t(s)];
        REQUIRE(out.top.size() == 5);
        for (std::size_t r = 0; r < 5; ++r) {
            CHECK(out.top[r].first == std::int64_t(order[r]));
            CHECK(out.top[r].second == Approx(p[order[r]] / sum).margin(2e-6));
        }
        CHECK(out.chosenProbability == out.top[0].second);
        CHECK(out.samplingProbability == 1.0);  // greedy: one-hot at the argmax
        ids.push_back(best);
    }
    CHECK(g.steps.size() == 8);
    // The trace covers the whole sequence and its maps are the reference's.
    REQUIRE(g.trace->ids() == std::vector<std::int64_t>(ids.begin(), ids.end()));
    const auto ref = referenceGpt2(c, ids);
    const int n = static_cast<int>(ids.size());
    const HeadMap m = g.trace->map(0, 1, 2);
    REQUIRE(m.rows == n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) REQUIRE(m.at(i, j) == Approx(ref.probs[1][2][i * n + j]).margin(2e-6));
}

TEST_CASE("greedy generation equals the argmax chain of the reference Llama forward", "[generation]") {
    LlamaSpec spec;
    Checkpoint c = makeLlama(spec, 5);
    auto model = writeAndLoad(c, "gen-llama");
    const std::vector<long long> prompt = {3, 17, 0, 47};
    GenerateOptions o;
    o.tokens = 6;
    const Generation g = generate(*model, ids64(prompt), o);
    std::vector<long long> ids = prompt;
    for (int s = 0; s < o.tokens; ++s) {
        const Reference ref = referenceLlama(c, spec, ids);
        const auto [best, gap] = argmaxWithGap(ref.logits);
        INFO("step " << s << ": reference argmax " << best << " (gap " << gap << ")");
        REQUIRE(gap > 1e-3);
        CHECK(g.generated[s] == best);
        ids.push_back(best);
    }
}

TEST_CASE("sampling is reproducible by seed and follows top-k", "[generation]") {
    Gpt2Spec spec;
    const auto c = makeGpt2(spec, 3);
    auto model = loadGpt2(c, "gen-sample");
    const std::vector<std::int64_t> prompt = {1, 2, 3};
    GenerateOptions o;
    o.tokens = 10;
    o.sampling = sampling(1.5, 0, 1.0, 42);
    const auto a = generate(*model, prompt, o).generated;
    const auto b = generate(*model, prompt, o).generated;
    CHECK(a == b);
    // Other seeds give other sequences (40-token vocabulary at temperature 1.5: ten equal draws
    // for three seeds in a row would be a broken generator).
    int differ = 0;
    for (std::uint64_t seed : {1, 2, 3}) {
        o.sampling.seed = seed;
        differ += generate(*model, prompt, o).generated != a;
    }
    CHECK(differ >= 2);
    // top-k 1 is greedy whatever the seed and temperature.
    GenerateOptions greedy;
    greedy.tokens = 10;
    o.sampling = sampling(3.0, 1, 1.0, 9);
    CHECK(generate(*model, prompt, o).generated == generate(*model, prompt, greedy).generated);
    // Each sampled token is one the step's top-k kept: replay the steps with the model's logits.
    o.sampling = sampling(1.0, 3, 1.0, 5);
    const auto g = generate(*model, prompt, o);
    std::vector<std::int64_t> ids = prompt;
    for (std::int64_t next : g.generated) {
        const auto p = samplingDistribution(model->forward(ids)->nextTokenLogits(), o.sampling);
        int kept = 0;
        for (double v : p) kept += v > 0;
        CHECK(kept == 3);
        CHECK(p[static_cast<std::size_t>(next)] > 0);
        ids.push_back(next);
    }
}

TEST_CASE("a saved generation replays to the same ids, maps and step outputs", "[generation]") {
    Gpt2Spec spec;
    const auto c = makeGpt2(spec, 3);
    auto model = loadGpt2(c, "gen-replay");
    const std::vector<std::int64_t> prompt = {4, 1, 7};
    GenerateOptions o;
    o.tokens = 6;
    o.sampling = sampling(1.3, 0, 0.9, 17);
    const Generation a = generate(*model, prompt, o);
    // Replayed under another seed and greedy: the forced ids win, the rest is recomputed.
    GenerateOptions r = o;
    r.sampling.seed = 99;
    r.forced = a.generated;
    const Generation b = generate(*model, prompt, r);
    CHECK(b.generated == a.generated);
    CHECK(b.trace->ids() == a.trace->ids());
    CHECK(b.trace->map(0, 0, 1).values == a.trace->map(0, 0, 1).values);
    REQUIRE(b.steps.size() == a.steps.size());
    for (std::size_t s = 0; s < a.steps.size(); ++s) {
        CHECK(b.steps[s].top == a.steps[s].top);
        CHECK(b.steps[s].chosenProbability == a.steps[s].chosenProbability);
        CHECK(b.steps[s].samplingProbability == a.steps[s].samplingProbability);
        CHECK(a.steps[s].samplingProbability > 0);  // a sampled id had mass under top-p
    }
    // Ids the model cannot take, or a count that does not match, are refused.
    r.forced = {1, 2};
    CHECK_THROWS_WITH(generate(*model, prompt, r), Catch::Contains("2 saved ids for 6 new tokens"));
    r.forced = {1, 2, 3, 4, 5, 4000};
    CHECK_THROWS_WITH(generate(*model, prompt, r),
                      Catch::Contains("saved id 4000 at step 5 is outside the vocabulary"));
}

TEST_CASE("a step's prefix trace has the maps of a forward over the prefix", "[generation]") {
    Gpt2Spec spec;
    spec.layers = 2;
    const auto c = makeGpt2(spec, 8);
    auto model = loadGpt2(c, "gen-prefix");
    GenerateOptions o;
    o.tokens = 5;
    const auto g = generate(*model, {4, 9, 2}, o);
    std::vector<std::int64_t> all = g.prompt;
    all.insert(all.end(), g.generated.begin(), g.generated.end());
    for (int len : {3, 5, 8}) {
        const auto prefix = prefixTrace(*g.trace, len);
        const auto direct = model->forward(std::vector<std::int64_t>(all.begin(), all.begin() + len));
        CHECK(prefix->ids() == direct->ids());
        CHECK(prefix->tokens() == direct->tokens());
        CHECK(prefix->blocks()[0].queryTokens.size() == std::size_t(len));
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < spec.heads; ++h) {
                const HeadMap a = prefix->map(0, l, h), b = direct->map(0, l, h);
                REQUIRE(a.rows == len);
                REQUIRE(a.cols == len);
                for (std::size_t k = 0; k < a.values.size(); ++k)
                    REQUIRE(a.values[k] == Approx(b.values[k]).margin(1e-6));
            }
        // The step's query row alone: 1 × len, the last row of the prefix's map.
        const auto row = prefixTrace(*g.trace, len, true);
        REQUIRE(row->blocks()[0].queryTokens.size() == 1);
        CHECK(row->blocks()[0].queryTokens[0] == direct->tokens()[std::size_t(len - 1)]);
        CHECK(row->blocks()[0].keyTokens.size() == std::size_t(len));
        for (int h = 0; h < spec.heads; ++h) {
            const HeadMap a = row->map(0, 1, h), b = direct->map(0, 1, h);
            REQUIRE(a.rows == 1);
            REQUIRE(a.cols == len);
            for (int j = 0; j < len; ++j) REQUIRE(a.at(0, j) == Approx(b.at(len - 1, j)).margin(1e-6));
        }
    }
    CHECK_THROWS_WITH(prefixTrace(*g.trace, 0), Catch::Contains("the trace has 8"));
    CHECK_THROWS_WITH(prefixTrace(*g.trace, 9), Catch::Contains("the trace has 8"));
}

TEST_CASE("generation refuses what it cannot do", "[generation]") {
    Gpt2Spec spec;
    spec.positions = 10;
    auto model = loadGpt2(makeGpt2(spec, 2), "gen-errors");
    GenerateOptions o;
    o.tokens = 8;
    CHECK_THROWS_WITH(generate(*model, {1, 2, 3}, o), Catch::Contains("exceed the model's 10 positions"));
    o.tokens = 0;
    CHECK_THROWS_WITH(generate(*model, {1, 2, 3}, o), Catch::Contains(">= 1"));
    o.tokens = 2;
    CHECK_THROWS_WITH(generate(*model, {}, o), Catch::Contains("prompt is empty"));
    o.sampling = sampling(-1.0);
    CHECK_THROWS_WITH(generate(*model, {1}, o), Catch::Contains("sampling temperature"));
    auto reverse = Model::load(resolveModelPath("builtin:reverse-dot"));
    CHECK_THROWS_WITH(generate(*reverse, {1, 2}, GenerateOptions{}), Catch::Contains("encoder-decoder"));
    // Cancelling through progress.
    GenerateOptions cancel;
    cancel.tokens = 3;
    cancel.progress = [](long long done, long long) { return done < 1; };
    CHECK_THROWS_AS(generate(*model, {1, 2}, cancel), Cancelled);
}

}  // namespace test_generation
