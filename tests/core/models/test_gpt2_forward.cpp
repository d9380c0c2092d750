// GPT-2 forward with capture, against the independent reference in tests/support.
#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "reference_gpt2.h"

#include <catch2/catch.hpp>

#include <cmath>

namespace test_gpt2_forward {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::shared_ptr<const Model> loadFixture(const Gpt2Checkpoint& c, const std::string& name) {
    const auto dir = freshDir(name);
    writeGpt2Folder(dir, c);
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    return Model::load(dir, options);
}

void requireMapsMatch(const Trace& trace, const Gpt2Reference& ref, int layers, int heads, int n) {
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) {
            const HeadMap map = trace.map(0, l, h);
            REQUIRE(map.rows == n);
            REQUIRE(map.cols == n);
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j) {
                    INFO("layer " << l << " head " << h << " query " << i << " key " << j);
                    REQUIRE(map.at(i, j) == Approx(ref.probs[l][h][i * n + j]).margin(2e-6));
                }
        }
}

std::int64_t countParameters(const Gpt2Checkpoint& c) {
    std::int64_t total = 0;
    for (const auto& [name, t] : c.tensors) total += static_cast<std::int64_t>(t.values.size());
    return total;
}

}  // namespace

TEST_CASE("GPT-2 attention maps equal an independent computation", "[gpt2]") {
    Gpt2Spec spec;
    spec.layers = 3;
    const auto c = makeGpt2(spec, 7);
    auto model = loadFixture(c, "gpt2-maps");
    const std::vector<long long> ids = {3, 17, 0, 39, 22, 5, 5, 11, 30};
    auto trace = model->forward(std::vector<std::int64_t>(ids.begin(), ids.end()));
    const auto ref = referenceGpt2(c, ids);
    const int n = static_cast<int>(ids.size());

    REQUIRE(trace->blocks().size() == 1);
    const BlockInfo& block = trace->blocks()[0];
    CHECK(block.name == "self");
    CHECK(block.causal);
    CHECK(block.layers == 3);
    CHECK(block.heads == 4);
    requireMapsMatch(*trace, ref, 3, 4, n);

    SECTION("causal: no weight on future keys, rows sum to one") {
        const HeadMap map = trace->map(0, 2, 1);
        for (int i = 0; i < n; ++i) {
            double sum = 0;
            for (int j = 0; j < n; ++j) {
                if (j > i) REQUIRE(map.at(i, j) == 0.0f);
                sum += map.at(i, j);
            }
            REQUIRE(sum == Approx(1.0).margin(1e-6));
        }
    }
    SECTION("next-token logits equal the tied output embedding's") {
        REQUIRE(trace->nextTokenLogits().size() == static_cast<std::size_t>(spec.vocab));
        for (int v = 0; v < spec.vocab; ++v)
            REQUIRE(trace->nextTokenLogits()[v] == Approx(ref.nextTokenLogits[v]).margin(1e-4));
    }
    SECTION("tokens are the vocabulary's labels") {
        REQUIRE(trace->tokens() == std::vector<std::string>{"t3", "t17", "t0", "t39", "t22", "t5", "t5", "t11", "t30"});
    }
    SECTION("display temperature divides the logits before the softmax") {
        for (double T : {0.25, 0.7, 3.0}) {
            const HeadMap map = trace->map(0, 1, 3, MapOptions{T});
            const auto expected = causalSoftmax(ref.scores[1][3], n, T);
            for (int i = 0; i < n * n; ++i) REQUIRE(map.values[i] == Approx(expected[i]).margin(2e-6));
        }
    }
    SECTION("bad indices and temperatures are errors that say so") {
        REQUIRE_THROWS_WITH(trace->map(0, 3, 0), Catch::Contains("layer 3 is out of range (0..2)"));
        REQUIRE_THROWS_WITH(trace->map(0, 0, 4), Catch::Contains("head 4 is out of range (0..3)"));
        REQUIRE_THROWS_WITH(trace->map(1, 0, 0), Catch::Contains("block 1 is out of range"));
        REQUIRE_THROWS_WITH(trace->map(0, 0, 0, MapOptions{0.0}), Catch::Contains("temperature must be"));
        REQUIRE_THROWS_WITH(trace->map(0, 0, 0, MapOptions{NAN}), Catch::Contains("temperature must be"));
        REQUIRE_THROWS_WITH(trace->blockIndex("cross"),
                            Catch::Contains("has no 'cross' attention block (it has: self)"));
    }
}

TEST_CASE("GPT-2 without the transformer. prefix and with an untied head", "[gpt2]") {
    Gpt2Spec spec;
    spec.prefix = false;
    spec.untiedHead = true;
    spec.legacyBuffers = false;
    spec.activation = "relu";
    const auto c = makeGpt2(spec, 11);
    auto model = loadFixture(c, "gpt2-untied");
    const std::vector<long long> ids = {1, 2, 3, 4, 5, 6};
    auto trace = model->forward({1, 2, 3, 4, 5, 6});
    const auto ref = referenceGpt2(c, ids);
    requireMapsMatch(*trace, ref, spec.layers, spec.heads, 6);
    for (int v = 0; v < spec.vocab; ++v)
        REQUIRE(trace->nextTokenLogits()[v] == Approx(ref.nextTokenLogits[v]).margin(1e-4));
    CHECK(model->info().parameters == countParameters(c));
}

TEST_CASE("GPT-2 info reports the config and counts a tied embedding once", "[gpt2]") {
    Gpt2Spec spec;
    const auto c = makeGpt2(spec, 3);
    auto model = loadFixture(c, "gpt2-info");
    const ModelInfo& info = model->info();
    CHECK(info.family == "gpt2");
    CHECK(info.layers == 2);
    CHECK(info.heads == 4);
    CHECK(info.kvHeads == 4);
    CHECK(info.headDim == 4);
    CHECK(info.hidden == 16);
    CHECK(info.vocabSize == 40);
    CHECK(info.maxPositions == 24);
    CHECK(info.dtype == "F32");
    CHECK(info.device == "cpu");
    // Legacy attn.bias / attn.masked_bias buffers are not parameters.
    CHECK(info.parameters == countParameters(c));
}

TEST_CASE("GPT-2 forward rejects bad input with a message", "[gpt2]") {
    const auto c = makeGpt2(Gpt2Spec{}, 5);
    auto model = loadFixture(c, "gpt2-input");
    REQUIRE_THROWS_WITH(model->forward({}), Catch::Contains("input is empty"));
    REQUIRE_THROWS_WITH(model->forward({1, 40}),
                        Catch::Contains("token id 40 at position 1 is outside the vocabulary [0, 40)"));
    REQUIRE_THROWS_WITH(model->forward({-1}), Catch::Contains("token id -1"));
    REQUIRE_THROWS_WITH(model->forward(std::vector<std::int64_t>(25, 1)),
                        Catch::Contains("25 tokens but the model has only 24 positions"));
    CHECK(model->forward(std::vector<std::int64_t>(24, 1))->tokens().size() == 24);

    SECTION("a progress callback that returns false cancels the forward") {
        RunOptions options;
        int calls = 0;
        options.progress = [&](long long done, long long total) {
            ++calls;
            CHECK(total == 2);
            return done < 1;
        };
        REQUIRE_THROWS_AS(model->forward({1, 2, 3}, options), Cancelled);
        CHECK(calls == 1);
    }
}

TEST_CASE("F16 and BF16 checkpoints load and run exactly on their stored values", "[gpt2]") {
    CHECK(fromHalf(toHalf(1.0f)) == 1.0f);
    CHECK(fromHalf(toHalf(-0.333251953125f)) == -0.333251953125f);  // exactly representable
    CHECK(toHalf(65504.f) == 0x7bff);
    CHECK(toBFloat16(1.0f) == 0x3f80);
    CHECK(fromBFloat16(toBFloat16(3.140625f)) == 3.140625f);
    for (const std::string dtype : {"F16", "BF16"}) {
        Gpt2Spec spec;
        spec.dtype = dtype;
        const auto c = makeGpt2(spec, 9);
        auto model = loadFixture(c, "gpt2-" + dtype);
        CHECK(model->info().dtype == dtype);
        const std::vector<long long> ids = {4, 8, 15, 16, 23};
        auto trace = model->forward({4, 8, 15, 16, 23});
        requireMapsMatch(*trace, referenceGpt2(c, ids), spec.layers, spec.heads, 5);
    }
}

}  // namespace test_gpt2_forward
