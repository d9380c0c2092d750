// Llama family (llama, mistral, qwen2) against the independent reference in tests/support.
#include "attnscope/runtime/error.h"
#include "family_checks.h"

#include <cmath>

namespace test_llama {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1, 9};

void requireMatches(const LlamaSpec& spec, unsigned seed, const std::string& name, const WriteOptions& o = {}) {
    Checkpoint c = makeLlama(spec, seed);
    roundTensors(c, o.dtype);
    auto model = writeAndLoad(c, name, o);
    auto trace = model->forward(ids64(kIds));
    const Reference ref = referenceLlama(c, spec, kIds);
    const double mapDiff = maxMapDiff(*trace, ref);
    const double logitDiff = maxLogitDiff(trace->nextTokenLogits(), ref.logits);
    INFO(name << ": max |map - reference| " << mapDiff << ", max |logit - reference| " << logitDiff);
    CHECK(mapDiff < 2e-6);
    CHECK(logitDiff < 1e-4);
}

std::string loadError(const LlamaSpec& spec, const std::function<void(nlohmann::json&)>& edit) {
    Checkpoint c = makeLlama(spec, 1);
    edit(c.config);
    return writeAndLoadError(c, "llama-bad");
}

}  // namespace

TEST_CASE("Llama: grouped-query attention, RoPE and SwiGLU equal an independent computation", "[llama]") {
    LlamaSpec spec;
    requireMatches(spec, 7, "llama-gqa");
    auto model = writeAndLoad(makeLlama(spec, 7), "llama-info");
    const ModelInfo& info = model->info();
    CHECK(info.family == "llama");
    CHECK(info.heads == 4);
    CHECK(info.kvHeads == 2);
    CHECK(info.headDim == 8);
    auto trace = model->forward(ids64(kIds));
    const BlockInfo& b = trace->blocks()[0];
    CHECK(b.name == "self");
    CHECK(b.causal);
    CHECK(b.heads == 4);
    CHECK(b.kvHeads == 2);
    CHECK(b.kvGroup(0) == 0);
    CHECK(b.kvGroup(1) == 0);
    CHECK(b.kvGroup(2) == 1);
    CHECK(b.kvGroup(3) == 1);
}

TEST_CASE("Llama: multi-query, explicit head_dim, tied head", "[llama]") {
    LlamaSpec spec;
    spec.kvHeads = 1;
    spec.headDim = 12;
    spec.tied = true;
    requireMatches(spec, 8, "llama-mqa");
}

TEST_CASE("Llama: rope scaling llama3, linear, theta, and the rope_parameters layout", "[llama]") {
    LlamaSpec spec;
    spec.theta = 500000.0;
    spec.ropeScaling = {{"rope_type", "llama3"},
                        {"factor", 8.0},
                        {"low_freq_factor", 1.0},
                        {"high_freq_factor", 4.0},
                        {"original_max_position_embeddings", 8}};
    requireMatches(spec, 9, "llama-rope3");
    spec.ropeParameters = true;
    requireMatches(spec, 9, "llama-ropeparams");
    LlamaSpec linear;
    linear.ropeScaling = {{"type", "linear"}, {"factor", 4.0}};
    requireMatches(linear, 10, "llama-ropelinear");
}

TEST_CASE("Qwen2: q/k/v biases", "[llama]") {
    LlamaSpec spec;
    spec.type = "qwen2";
    spec.tied = true;
    requireMatches(spec, 11, "qwen2");
    LlamaSpec biased;  // llama with attention_bias: q/k/v/o biases
    biased.qkvBias = true;
    requireMatches(biased, 12, "llama-bias");
}

TEST_CASE("Mistral: the sliding window masks keys older than the window", "[llama]") {
    LlamaSpec spec;
    spec.type = "mistral";
    spec.window = 3;
    requireMatches(spec, 13, "mistral");
    auto model = writeAndLoad(makeLlama(spec, 13), "mistral-window");
    auto trace = model->forward(ids64(kIds));
    const HeadMap m = trace->map(0, 1, 2);
    for (int i = 0; i < m.rows; ++i) {
        double sum = 0;
        for (int j = 0; j < m.cols; ++j) {
            if (j > i || i - j >= 3) REQUIRE(m.at(i, j) == 0.0f);
            sum += m.at(i, j);
        }
        REQUIRE(sum == Approx(1.0).margin(1e-6));
    }
    // The block and the model say so (the overview marks the layers, the model line the window).
    CHECK(trace->blocks()[0].layerWindows == std::vector<std::int64_t>(2, 3));
    CHECK(model->info().notes == std::vector<std::string>{"sliding window 3 on every layer", "2 kv groups"});
    spec.window = 0;  // sliding_window: null is plain causal attention
    requireMatches(spec, 13, "mistral-nowindow");
}

TEST_CASE("Llama: BF16 and F16 checkpoints, sharded, on the CPU", "[llama]") {
    LlamaSpec spec;
    requireMatches(spec, 14, "llama-bf16", WriteOptions{"BF16", 3});
    requireMatches(spec, 15, "llama-f16", WriteOptions{"F16", 1});
    Checkpoint c = makeLlama(spec, 14);
    roundTensors(c, "BF16");
    auto model = writeAndLoad(c, "llama-bf16-info", WriteOptions{"BF16", 3});
    CHECK(model->info().dtype == "BF16");
}

TEST_CASE("Llama: propagated temperature and head masking change later layers only", "[llama]") {
    LlamaSpec spec;
    auto model = writeAndLoad(makeLlama(spec, 16), "llama-options");
    auto base = model->forward(ids64(kIds));
    RunOptions options;
    options.temperature = 3.0;
    options.temperatureLayers = {1};
    auto hot = model->forward(ids64(kIds), options);
    // Layer 1's own Q/K are unchanged; its map (the one the model used) is the base map at T = 3.
    CHECK(hot->map(0, 1, 0).values == base->map(0, 1, 0, MapOptions{3.0}).values);
    CHECK(hot->nextTokenLogits() != base->nextTokenLogits());
    RunOptions masked;
    masked.maskHeads = {HeadRef{"self", 0, 1}};
    auto cut = model->forward(ids64(kIds), masked);
    CHECK(cut->map(0, 0, 0).values == base->map(0, 0, 0).values);
    CHECK(cut->map(0, 1, 0).values != base->map(0, 1, 0).values);
}

TEST_CASE("Llama: malformed configs and checkpoints are rejected with a message", "[llama]") {
    LlamaSpec spec;
    CHECK_THAT(loadError(spec, [](auto& c) { c["num_key_value_heads"] = 3; }),
               Catch::Contains("'num_key_value_heads' (3) must divide num_attention_heads (4)"));
    CHECK_THAT(loadError(spec,
                         [](auto& c) {
                             c["rope_scaling"] = {{"rope_type", "su"}, {"factor", 2.0}};
                         }),
               Catch::Contains(
                       "'rope_scaling' type 'su' is not supported (default, linear, dynamic, yarn, longrope, llama3)"));
    CHECK_THAT(loadError(spec,
                         [](auto& c) {
                             c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 2.0}};
                         }),
               Catch::Contains("'rope_scaling' needs 'low_freq_factor'"));
    CHECK_THAT(loadError(spec, [](auto& c) { c["hidden_act"] = "gelu"; }),
               Catch::Contains("'hidden_act' 'gelu' is not supported"));
    CHECK_THAT(loadError(spec, [](auto& c) { c["hidden_size"] = 30; }),
               Catch::Contains("'hidden_size' (30) must be divisible by num_attention_heads (4)"));
    CHECK_THAT(loadError(spec,
                         [](auto& c) {
                             c["tie_word_embeddings"] = true;
                             c["intermediate_size"] = 41;
                         }),
               Catch::Contains("'model.layers.0.mlp.gate_proj.weight' has shape [40, 32], the config needs [41, 32]"));
    LlamaSpec tied;
    tied.tied = true;
    CHECK_THAT(loadError(tied, [](auto& c) { c["tie_word_embeddings"] = false; }),
               Catch::Contains("tensor 'model.lm_head.weight' (or 'lm_head.weight') is missing"));
    LlamaSpec qwen;
    qwen.type = "qwen2";
    CHECK_THAT(loadError(qwen, [](auto& c) { c["use_sliding_window"] = true; }),
               Catch::Contains("'use_sliding_window' is true"));
    auto model = writeAndLoad(makeLlama(spec, 1), "llama-input");
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)),
                      Catch::Contains("65 tokens but the model has only 64 positions"));
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {0, 1}, {}}),
                      Catch::Contains("llama models have no token types"));
    CHECK_THROWS_WITH(model->forwardImage(RgbImage{}), Catch::Contains("takes token ids, not an image"));
}

}  // namespace test_llama
