// BLOOM against the independent double-precision reference in tests/support (reference_alibi.cpp).
#include "alibi_checks.h"

#include <cmath>

namespace test_bloom {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1, 9, 40, 2};

void requireMatches(const BloomSpec& spec, unsigned seed, const std::string& name, const WriteOptions& o = {},
                    const AlibiFamilyRun& run = {}) {
    const Checkpoint c = rounded(makeBloom(spec, seed), o.dtype);
    auto model = writeAndLoad(c, name, o);
    requireAgreement(agreement(*model, referenceBloom(c, spec, kIds, run), kIds, run), name);
}

std::string loadError(const BloomSpec& spec, const std::function<void(Checkpoint&)>& edit) {
    Checkpoint c = makeBloom(spec, 1);
    edit(c);
    return writeAndLoadError(c, "bloom-bad");
}

}  // namespace

TEST_CASE("ALiBi slopes of the reference are Hugging Face's, for every head count", "[bloom][falcon]") {
    // build_alibi_tensor: 2^(-8k/p) for the largest power of two p, then odd powers of 2^(-4/p).
    CHECK(referenceAlibiSlopes(8) ==
          std::vector<double>{0.5, 0.25, 0.125, 0.0625, 1.0 / 32, 1.0 / 64, 1.0 / 128, 1.0 / 256});
    CHECK(referenceAlibiSlopes(6) == std::vector<double>{0.25, 1.0 / 16, 1.0 / 64, 1.0 / 256, 0.5, 0.125});
    const std::vector<double> twelve = referenceAlibiSlopes(12);
    REQUIRE(twelve.size() == 12);
    CHECK(twelve[7] == 1.0 / 256);
    CHECK(twelve[8] == Approx(std::pow(2.0, -0.5)).epsilon(1e-15));
    CHECK(twelve[11] == Approx(std::pow(2.0, -3.5)).epsilon(1e-15));
    CHECK(referenceAlibiSlopes(1) == std::vector<double>{1.0 / 256});
}

TEST_CASE("BLOOM: ALiBi with 6 heads, fused per-head query_key_value, embedding LayerNorm", "[bloom]") {
    BloomSpec spec;
    requireMatches(spec, 31, "bloom-6");
    auto model = writeAndLoad(makeBloom(spec, 31), "bloom-info");
    const ModelInfo& info = model->info();
    CHECK(info.family == "bloom");
    CHECK(info.heads == 6);
    CHECK(info.kvHeads == 6);
    CHECK(info.headDim == 6);
    CHECK(info.maxPositions == 0);  // ALiBi has no position table
    CHECK(info.notes == std::vector<std::string>{"ALiBi", "LayerNorm on the word embeddings"});
    // Causal: no query sees a later key, whatever ALiBi adds.
    auto trace = model->forward(ids64(kIds));
    const HeadMap m = trace->map(0, 0, 4);
    for (int i = 0; i < m.rows; ++i)
        for (int j = i + 1; j < m.cols; ++j) REQUIRE(m.at(i, j) == 0.0f);
}

TEST_CASE("BLOOM: power-of-two heads, residual after the norm, untied head, no prefix", "[bloom]") {
    BloomSpec spec;
    spec.heads = 4;
    spec.hidden = 32;
    spec.residualAfterNorm = true;
    spec.tied = false;
    spec.prefix = false;
    requireMatches(spec, 32, "bloom-4");
    BloomSpec twelve;  // 12 heads: 8 powers of 2^-1 and 4 odd powers of 2^-0.5
    twelve.heads = 12;
    twelve.hidden = 48;
    requireMatches(twelve, 33, "bloom-12");
}

TEST_CASE("BLOOM: F16 and BF16 checkpoints, sharded and single", "[bloom]") {
    BloomSpec spec;
    requireMatches(spec, 34, "bloom-f16", WriteOptions{"F16", 3});
    spec.prefix = false;
    requireMatches(spec, 35, "bloom-bf16", WriteOptions{"BF16", 1});
}

TEST_CASE("BLOOM: temperature divides the logits ALiBi included; head masking", "[bloom]") {
    BloomSpec spec;
    AlibiFamilyRun hot;
    hot.temperature = 3.0;
    requireMatches(spec, 36, "bloom-hot", {}, hot);
    AlibiFamilyRun some;
    some.temperature = 0.5;
    some.temperatureLayers = {0};
    some.maskHeads = {{0, 4}, {1, 1}};
    requireMatches(spec, 36, "bloom-masked", {}, some);
    // The display temperature of a Trace divides the same logits: T = 3 from the plain trace is
    // the propagated map of layer 0 (the first layer's inputs do not change).
    auto model = writeAndLoad(makeBloom(spec, 36), "bloom-display");
    auto base = model->forward(ids64(kIds));
    RunOptions inside;
    inside.temperature = 3.0;
    inside.temperatureLayers = {0};
    CHECK(model->forward(ids64(kIds), inside)->map(0, 0, 5).values == base->map(0, 0, 5, MapOptions{3.0}).values);
}

TEST_CASE("BLOOM: linear attention has no place for ALiBi", "[bloom]") {
    auto model = writeAndLoad(makeBloom(BloomSpec{}, 37), "bloom-linear");
    auto trace = model->forward(ids64(kIds));
    MapOptions linear;
    linear.variant = MapVariant::Linear;
    CHECK_THROWS_WITH(trace->map(0, 1, 0, linear),
                      Catch::Contains("linear attention has no place for ALiBi (layer 1 of block 'self' uses it)"));
}

TEST_CASE("BLOOM: bad configs and checkpoints name the file and the field", "[bloom]") {
    BloomSpec spec;
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.config["n_head"] = 5; }),
               Catch::Contains("config.json: 'hidden_size' (36) must be divisible by the number of heads (5)"));
    CHECK_THAT(
            loadError(spec,
                      [](Checkpoint& c) { c.tensors.erase("transformer.h.1.self_attention.query_key_value.weight"); }),
            Catch::Contains(
                    "tensor 'transformer.h.1.self_attention.query_key_value.weight' (or 'h.1.self_attention.query_key_value.weight') is missing"));
    CHECK_THAT(loadError(spec,
                         [](Checkpoint& c) {
                             c.config["n_head"] = 4;
                             c.config["hidden_size"] = 32;
                         }),
               Catch::Contains("'transformer.word_embeddings.weight' has shape [48, 36], the config needs [48, 32]"));
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.tensors.erase("transformer.word_embeddings_layernorm.bias"); }),
               Catch::Contains("word_embeddings_layernorm.bias"));
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.config["apply_residual_connection_post_layernorm"] = 1; }),
               Catch::Contains("'apply_residual_connection_post_layernorm' must be true or false"));
    // num_hidden_layers is BloomConfig's alias of n_layer: 3 layers need h.2.
    CHECK_THAT(loadError(spec, [](Checkpoint& c) { c.config["num_hidden_layers"] = 3; }),
               Catch::Contains("h.2.input_layernorm.weight"));
}

}  // namespace test_bloom
