// The RMSNorm decoder families (gemma, gemma2, gemma3_text, qwen3, olmo2, phi3) against the
// independent double-precision reference in tests/support/reference_gemma.cpp.
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_gemma.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace test_gemma_qwen3_olmo2_phi3 {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1, 9};

// Loads `spec` written as `o` says and checks every map and the next-token logits.
std::shared_ptr<const Model> requireMatches(const RmsFamilySpec& spec, unsigned seed, const std::string& name,
                                            const WriteOptions& o = {}, const std::vector<long long>& ids = kIds) {
    Checkpoint c = makeRmsFamily(spec, seed);
    roundTensors(c, o.dtype);
    auto model = writeAndLoad(c, name, o);
    auto trace = model->forward(ids64(ids));
    const Reference ref = referenceRmsFamily(c, spec, ids);
    const double mapDiff = maxMapDiff(*trace, ref);
    const double logitDiff = maxLogitDiff(trace->nextTokenLogits(), ref.logits);
    INFO(name << ": max |map - reference| " << mapDiff << ", max |logit - reference| " << logitDiff);
    CHECK(mapDiff < 1e-5);
    CHECK(logitDiff < 1e-4);
    return model;
}

// Temperature inside the model (every layer) and a masked head, against the reference.
void requireOptionsMatch(const RmsFamilySpec& spec, unsigned seed, const std::string& name) {
    const Checkpoint c = makeRmsFamily(spec, seed);
    auto model = writeAndLoad(c, name);
    RunOptions hot;
    hot.temperature = 2.5;
    auto trace = model->forward(ids64(kIds), hot);
    const Reference refHot = referenceRmsFamily(c, spec, kIds, 2.5);
    CHECK(maxMapDiff(*trace, refHot) < 1e-5);
    CHECK(maxLogitDiff(trace->nextTokenLogits(), refHot.logits) < 1e-4);
    RunOptions masked;
    masked.maskHeads = {HeadRef{"self", 0, 1}, HeadRef{"self", 1, 3}};
    auto cut = model->forward(ids64(kIds), masked);
    const Reference refCut = referenceRmsFamily(c, spec, kIds, 1.0, {{0, 1}, {1, 3}});
    CHECK(maxMapDiff(*cut, refCut) < 1e-5);
    CHECK(maxLogitDiff(cut->nextTokenLogits(), refCut.logits) < 1e-4);
    CHECK(maxLogitDiff(cut->nextTokenLogits(), referenceRmsFamily(c, spec, kIds).logits) > 1e-3);
}

std::string loadError(const RmsFamilySpec& spec, const std::function<void(Checkpoint&)>& edit) {
    Checkpoint c = makeRmsFamily(spec, 1);
    edit(c);
    return writeAndLoadError(c, "rms-bad");
}

bool hasNote(const ModelInfo& info, const std::string& text) {
    return std::any_of(info.notes.begin(), info.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// Largest difference between two references' maps: a variant the tests rely on must change them.
double maxRefDiff(const Reference& a, const Reference& b) {
    double worst = 0;
    for (std::size_t l = 0; l < a.probs.size(); ++l)
        for (std::size_t h = 0; h < a.probs[l].size(); ++h)
            for (std::size_t i = 0; i < a.probs[l][h].size(); ++i)
                worst = std::max(worst, std::abs(a.probs[l][h][i] - b.probs[l][h][i]));
    return worst;
}

// `spec` and `edited` must give different maps on the same weights (so matching one is a test).
void requireDiffers(const RmsFamilySpec& spec, const RmsFamilySpec& edited, unsigned seed) {
    const Checkpoint c = makeRmsFamily(spec, seed);
    CHECK(maxRefDiff(referenceRmsFamily(c, spec, kIds), referenceRmsFamily(c, edited, kIds)) > 1e-3);
}

RmsFamilySpec family(const std::string& type) {
    RmsFamilySpec s;
    s.type = type;
    if (type == "olmo2" || type == "phi3") s.tied = false;
    return s;
}

}  // namespace

TEST_CASE("Gemma: (1 + w) norms, scaled embeddings, head_dim apart from hidden/heads, GQA, tied head", "[gemma]") {
    RmsFamilySpec spec = family("gemma");
    auto model = requireMatches(spec, 21, "gemma-f32");
    CHECK(model->info().family == "gemma");
    CHECK(model->info().headDim == 12);
    CHECK(model->info().kvHeads == 2);
    CHECK(hasNote(model->info(), "2 kv groups"));
    CHECK(model->forward(ids64(kIds))->blocks()[0].layerWindows.empty());
    spec.prefix = false;
    requireMatches(spec, 22, "gemma-bf16-noprefix", WriteOptions{"BF16", 3});
    spec.attentionBias = true;
    spec.tied = false;
    requireMatches(spec, 23, "gemma-bias-untied");
    requireOptionsMatch(family("gemma"), 24, "gemma-options");
}

TEST_CASE("Gemma-2: soft-caps, query_pre_attn_scalar, sliding window on alternate layers, sandwich norms", "[gemma]") {
    RmsFamilySpec spec = family("gemma2");
    spec.attnSoftcap = 1.5;  // small enough to bite on these scores
    spec.finalSoftcap = 2.0;
    spec.window = 3;
    auto model = requireMatches(spec, 31, "gemma2-f32");
    RmsFamilySpec uncappedSpec = spec;
    uncappedSpec.attnSoftcap = 0;
    requireDiffers(spec, uncappedSpec, 31);
    const ModelInfo& info = model->info();
    CHECK(hasNote(info, "sliding window 3 on layers 0, 2"));
    CHECK(hasNote(info, "soft-cap 1.5"));
    CHECK(hasNote(info, "output soft-cap 2"));
    auto trace = model->forward(ids64(kIds));
    CHECK(trace->blocks()[0].layerWindows == std::vector<std::int64_t>{3, 0, 3});
    // Layer 0 is local: keys 3 or more behind are exactly 0. Layer 1 is global.
    const HeadMap local = trace->map(0, 0, 1), global = trace->map(0, 1, 1);
    CHECK(local.at(8, 5) == 0.0f);
    CHECK(local.at(8, 6) > 0.0f);
    CHECK(global.at(8, 0) > 0.0f);
    // Linear attention has no place for the cap.
    MapOptions linear;
    linear.variant = MapVariant::Linear;
    CHECK_THROWS_WITH(trace->map(0, 1, 0, linear),
                      Catch::Contains("linear attention has no place for a tanh soft-cap"));
    // layer_types overrides the default order; no caps when the config says null.
    spec.layerTypes = {"full_attention", "sliding_attention", "sliding_attention"};
    auto listed = requireMatches(spec, 32, "gemma2-layertypes");
    CHECK(listed->forward(ids64(kIds))->blocks()[0].layerWindows == std::vector<std::int64_t>{0, 3, 3});
    spec.attnSoftcap = spec.finalSoftcap = 0;
    spec.prefix = false;
    auto uncapped = requireMatches(spec, 33, "gemma2-f16-uncapped", WriteOptions{"F16", 2});
    CHECK_FALSE(hasNote(uncapped->info(), "soft-cap"));
    CHECK_NOTHROW(uncapped->forward(ids64(kIds))->map(0, 0, 0, linear));

    RmsFamilySpec capped = family("gemma2");
    capped.attnSoftcap = 1.5;
    capped.window = 4;
    requireOptionsMatch(capped, 34, "gemma2-options");
}

TEST_CASE("Gemma-3: q/k norms, local layers with their own theta, rope scaling on global layers", "[gemma]") {
    RmsFamilySpec spec = family("gemma3_text");
    spec.window = 4;
    spec.slidingPattern = 2;  // local, global, local
    spec.theta = 1e6;
    spec.localTheta = 100.0;
    spec.ropeScaling = {{"rope_type", "linear"}, {"factor", 8.0}};
    auto model = requireMatches(spec, 41, "gemma3-f32");
    RmsFamilySpec sameTheta = spec;  // the local theta must matter
    sameTheta.localTheta = spec.theta;
    requireDiffers(spec, sameTheta, 41);
    CHECK(model->forward(ids64(kIds))->blocks()[0].layerWindows == std::vector<std::int64_t>{4, 0, 4});
    CHECK(hasNote(model->info(), "q/k RMSNorm"));
    spec.slidingPattern = 0;  // Hugging Face's default of 6: layers 0-4 of every 6 are local
    requireMatches(spec, 42, "gemma3-default-pattern");
    spec.layerTypes = {"sliding_attention", "full_attention", "full_attention"};
    spec.prefix = false;
    spec.attnSoftcap = 2.0;
    requireMatches(spec, 43, "gemma3-bf16", WriteOptions{"BF16", 2});
    // The newer per-layer-type rope_parameters layout.
    RmsFamilySpec newer = family("gemma3_text");
    newer.window = 4;
    newer.slidingPattern = 2;
    newer.localTheta = 100.0;
    newer.theta = 1e6;
    Checkpoint c = makeRmsFamily(newer, 44);
    c.config.erase("rope_theta");
    c.config.erase("rope_scaling");
    c.config.erase("rope_local_base_freq");
    c.config["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 1e6}}},
                                   {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 100.0}}}};
    auto m = writeAndLoad(c, "gemma3-rope-parameters");
    CHECK(maxMapDiff(*m->forward(ids64(kIds)), referenceRmsFamily(c, newer, kIds)) < 1e-5);
    requireOptionsMatch(spec, 45, "gemma3-options");
}

TEST_CASE("Qwen3: q/k norms over head_dim, explicit head_dim, sliding window from max_window_layers",
          "[gemma][qwen3]") {
    RmsFamilySpec spec = family("qwen3");
    spec.tied = false;
    auto model = requireMatches(spec, 51, "qwen3-f32");
    CHECK(model->info().headDim == 12);
    spec.useSlidingWindow = true;
    spec.window = 3;
    spec.maxWindowLayers = 1;
    auto windowed = requireMatches(spec, 52, "qwen3-window");
    CHECK(windowed->forward(ids64(kIds))->blocks()[0].layerWindows == std::vector<std::int64_t>{0, 3, 3});
    spec.useSlidingWindow = false;  // layer_types without use_sliding_window: every layer global
    spec.layerTypes = {"sliding_attention", "full_attention", "sliding_attention"};
    requireMatches(spec, 53, "qwen3-nowindow");
    spec.useSlidingWindow = true;
    spec.attentionBias = true;
    spec.prefix = false;
    spec.ropeScaling = {{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 16}};
    requireMatches(spec, 54, "qwen3-f16-yarn", WriteOptions{"F16", 3});
    RmsFamilySpec unscaled = spec;
    unscaled.ropeScaling = nullptr;
    requireDiffers(spec, unscaled, 54);
    requireOptionsMatch(family("qwen3"), 55, "qwen3-options");
}

TEST_CASE("OLMo-2: q/k norms over the flattened projection, post-norm blocks", "[gemma][olmo2]") {
    RmsFamilySpec spec = family("olmo2");
    auto model = requireMatches(spec, 61, "olmo2-f32");
    CHECK(model->info().headDim == 8);
    CHECK(hasNote(model->info(), "post-norm"));
    spec.prefix = false;
    spec.kvHeads = 4;
    spec.ropeScaling = {{"rope_type", "dynamic"}, {"factor", 2.0}};  // no change up to max_position_embeddings
    requireMatches(spec, 62, "olmo2-bf16", WriteOptions{"BF16", 2});
    requireOptionsMatch(family("olmo2"), 63, "olmo2-options");
}

TEST_CASE("Phi-3: fused qkv and gate_up, partial rotary, longrope short and long factors, sliding window",
          "[gemma][phi3]") {
    RmsFamilySpec spec = family("phi3");
    auto model = requireMatches(spec, 71, "phi3-f32");
    spec.partialRotary = 0.5;
    spec.window = 4;
    spec.originalPositions = 8;
    nlohmann::json shortF = {1.0, 1.5}, longF = {2.0, 7.0};
    spec.ropeScaling = {{"type", "longrope"}, {"short_factor", shortF}, {"long_factor", longF}};
    // 11 tokens are beyond the 8 original positions: the long factors; 6 tokens: the short ones.
    auto longrope = requireMatches(spec, 72, "phi3-longrope");
    RmsFamilySpec shortOnly = spec;  // the long factors must matter at 11 tokens
    shortOnly.ropeScaling["long_factor"] = shortF;
    requireDiffers(spec, shortOnly, 72);
    CHECK(hasNote(longrope->info(), "rotary on 50% of dims"));
    CHECK(hasNote(longrope->info(), "rope scaling longrope"));
    requireMatches(spec, 72, "phi3-longrope-short", {}, {3, 17, 0, 47, 22, 5});
    spec.prefix = false;
    requireMatches(spec, 73, "phi3-bf16", WriteOptions{"BF16", 3});
    requireOptionsMatch(family("phi3"), 74, "phi3-options");
}

TEST_CASE("RMSNorm decoder families: bad configs name the file and the field", "[gemma]") {
    RmsFamilySpec g2 = family("gemma2");
    g2.window = 3;
    CHECK_THAT(loadError(g2,
                         [](Checkpoint& c) {
                             c.config["layer_types"] = {"full_attention", "local", "full_attention"};
                         }),
               Catch::Contains(
                       "config.json: 'layer_types' entry 1 is \"local\" (known: full_attention, sliding_attention)"));
    CHECK_THAT(loadError(g2, [](Checkpoint& c) { c.config["layer_types"] = {"full_attention"}; }),
               Catch::Contains("'layer_types' has 1 entries for 3 layers"));
    CHECK_THAT(loadError(g2, [](Checkpoint& c) { c.config["sliding_window"] = 65; }),
               Catch::Contains("config.json: 'sliding_window' (65) is larger than max_position_embeddings (64)"));
    // Gemma2Config's default window (4096) does not fit 64 positions either.
    CHECK_THAT(loadError(g2, [](Checkpoint& c) { c.config.erase("sliding_window"); }),
               Catch::Contains("'sliding_window' (4096) is larger than max_position_embeddings (64)"));
    CHECK_THAT(loadError(g2, [](Checkpoint& c) { c.config["num_key_value_heads"] = 3; }),
               Catch::Contains("'num_key_value_heads' (3) must divide num_attention_heads (4)"));
    CHECK_THAT(loadError(family("gemma"), [](Checkpoint& c) { c.config["hidden_activation"] = "swiglu"; }),
               Catch::Contains("'hidden_activation' 'swiglu' is not supported"));
    CHECK_THAT(loadError(family("olmo2"), [](Checkpoint& c) { c.config["hidden_size"] = 30; }),
               Catch::Contains("'hidden_size' (30) must be divisible by num_attention_heads (4)"));
    CHECK_THAT(
            loadError(family("phi3"),
                      [](Checkpoint& c) { c.tensors.erase("model.layers.1.self_attn.qkv_proj.weight"); }),
            Catch::Contains(
                    "tensor 'model.layers.1.self_attn.qkv_proj.weight' (or 'layers.1.self_attn.qkv_proj.weight') is missing"));
    CHECK_THAT(
            loadError(family("phi3"), [](Checkpoint& c) { c.tensors.erase("model.layers.0.mlp.gate_up_proj.weight"); }),
            Catch::Contains("'model.layers.0.mlp.gate_up_proj.weight'"));
    CHECK_THAT(loadError(family("phi3"), [](Checkpoint& c) { c.config["partial_rotary_factor"] = 0.2; }),
               Catch::Contains("'partial_rotary_factor' gives 1 rotary dimensions of head_dim 8"));
    CHECK_THAT(loadError(family("phi3"),
                         [](Checkpoint& c) {
                             c.config["rope_scaling"] = {{"type", "longrope"},
                                                         {"short_factor", {1.0}},
                                                         {"long_factor", {1.0, 2.0, 3.0, 4.0}}};
                         }),
               Catch::Contains("'rope_scaling' 'short_factor' must be a list of 4 numbers"));
    CHECK_THAT(
            loadError(family("qwen3"),
                      [](Checkpoint& c) {
                          c.config["rope_scaling"] = {{"rope_type", "su"}, {"factor", 2.0}};
                      }),
            Catch::Contains(
                    "config.json: 'rope_scaling' type 'su' is not supported (default, linear, dynamic, yarn, longrope, llama3)"));
    CHECK_THAT(loadError(family("qwen3"),
                         [](Checkpoint& c) {
                             c.config["rope_scaling"] = {{"rope_type", "yarn"}};
                         }),
               Catch::Contains("'rope_scaling' needs 'factor'"));
    CHECK_THAT(loadError(family("gemma3_text"),
                         [](Checkpoint& c) { c.tensors.erase("model.layers.2.self_attn.k_norm.weight"); }),
               Catch::Contains("'model.layers.2.self_attn.k_norm.weight'"));

    auto model = writeAndLoad(makeRmsFamily(family("gemma"), 1), "gemma-input");
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)),
                      Catch::Contains("65 tokens but the model has only 64 positions"));
    CHECK_THROWS_WITH(model->forward({48}), Catch::Contains("48"));
}

}  // namespace test_gemma_qwen3_olmo2_phi3
