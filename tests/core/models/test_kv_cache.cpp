// Generation with the key/value cache against one full forward per step (GenerateOptions::cache
// false) on every kind of decoder family: grouped-query attention (Llama, Qwen3), sliding windows
// (Mistral, Gemma-2), soft-caps and sandwich norms (Gemma-2), ALiBi (BLOOM), parallel residual
// and partial rotary (GPT-NeoX, Falcon), interleaved rotary (GPT-J), learned positions (GPT-2,
// OPT's offset and post-norm): the same greedy tokens, every map of the whole sequence within
// 1e-5, the same step outputs and final logits; and the RunOptions the cache honours.
#include "attnscope/attention/trace.h"
#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"
#include "family_checks.h"
#include "fixtures_alibi.h"
#include "fixtures_gemma.h"
#include "fixtures_neox.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace test_kv_cache {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kPrompt = {3, 17, 0, 27, 22, 5, 5, 11, 30};

double maxDiff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
    return worst;
}

// Every map of every layer and head of two traces of the same ids.
double maxTraceDiff(const Trace& a, const Trace& b) {
    REQUIRE(a.ids() == b.ids());
    const BlockInfo& info = a.blocks().at(0);
    double worst = 0;
    for (int l = 0; l < info.layers; ++l)
        for (int h = 0; h < info.heads; ++h)
            worst = std::max(worst, maxDiff(a.map(0, l, h).values, b.map(0, l, h).values));
    return worst;
}

// Cached and uncached generation of `tokens` after kPrompt agree.
void requireCacheMatches(const Model& model, int tokens, const RunOptions& run = {}) {
    GenerateOptions o;
    o.tokens = tokens;
    o.run = run;
    o.cache = false;
    const Generation full = generate(model, ids64(kPrompt), o);
    o.cache = true;
    const Generation cached = generate(model, ids64(kPrompt), o);
    REQUIRE(cached.cached);
    REQUIRE_FALSE(full.cached);
    CHECK(cached.generated == full.generated);
    const double maps = maxTraceDiff(*cached.trace, *full.trace);
    const double logits = maxDiff(cached.trace->nextTokenLogits(), full.trace->nextTokenLogits());
    INFO(model.info().family << ": max |map difference| " << maps << ", max |logit difference| " << logits);
    CHECK(maps < 1e-5);
    CHECK(logits < 1e-4);
    REQUIRE(cached.steps.size() == full.steps.size());
    for (std::size_t s = 0; s < full.steps.size(); ++s) {
        CHECK(cached.steps[s].chosenProbability == Approx(full.steps[s].chosenProbability).margin(1e-5));
        REQUIRE(cached.steps[s].top.size() == full.steps[s].top.size());
        for (std::size_t k = 0; k < full.steps[s].top.size(); ++k)
            CHECK(cached.steps[s].top[k].second == Approx(full.steps[s].top[k].second).margin(1e-5));
    }
    // The cached trace has the shape of one forward over the sequence, and its capture options.
    const auto forward = model.forward(cached.trace->ids(), run);
    CHECK(maxTraceDiff(*cached.trace, *forward) < 1e-5);
    CHECK(cached.trace->blocks().at(0).layerWindows == forward->blocks().at(0).layerWindows);
}

RmsFamilySpec rmsFamily(const std::string& type) {
    RmsFamilySpec s;
    s.type = type;
    return s;
}

}  // namespace

TEST_CASE("KV cache: Llama (grouped-query attention) and Mistral's sliding window", "[kv_cache]") {
    LlamaSpec spec;  // 4 query heads over 2 kv groups
    requireCacheMatches(*writeAndLoad(makeLlama(spec, 7), "kv-llama"), 8);
    spec.type = "mistral";
    spec.window = 3;  // 9 + 8 positions: the window bites on every generated row
    requireCacheMatches(*writeAndLoad(makeLlama(spec, 13), "kv-mistral"), 8);
}

TEST_CASE("KV cache: Gemma-2 soft-caps, alternating windows and sandwich norms; Qwen3 q/k norms", "[kv_cache]") {
    RmsFamilySpec spec = rmsFamily("gemma2");
    spec.attnSoftcap = 1.5;
    spec.finalSoftcap = 2.0;
    spec.window = 3;
    requireCacheMatches(*writeAndLoad(makeRmsFamily(spec, 31), "kv-gemma2"), 8);
    requireCacheMatches(*writeAndLoad(makeRmsFamily(rmsFamily("qwen3"), 33), "kv-qwen3"), 6);
}

TEST_CASE("KV cache: BLOOM's ALiBi and Falcon's parallel multi-query blocks", "[kv_cache]") {
    requireCacheMatches(*writeAndLoad(makeBloom(BloomSpec{}, 41), "kv-bloom"), 8);
    FalconSpec falcon;
    falcon.alibi = true;
    requireCacheMatches(*writeAndLoad(makeFalcon(falcon, 43), "kv-falcon-alibi"), 6);
    requireCacheMatches(*writeAndLoad(makeFalcon(FalconSpec{}, 44), "kv-falcon-rotary"), 6);
}

TEST_CASE("KV cache: GPT-NeoX's parallel residual and partial rotary, GPT-J's interleaved rotary", "[kv_cache]") {
    requireCacheMatches(*writeAndLoad(makeNeox(NeoxSpec{}, 51), "kv-neox"), 8);
    requireCacheMatches(*writeAndLoad(makeGptj(GptjSpec{}, 52), "kv-gptj"), 6);
}

TEST_CASE("KV cache: learned positions (GPT-2, OPT with its offset and post-norm)", "[kv_cache]") {
    const auto dir = freshDir("kv-gpt2");
    writeGpt2Folder(dir, makeGpt2(Gpt2Spec{}, 3));
    requireCacheMatches(*loadCpu(dir), 8);
    OptSpec opt;
    opt.preNorm = false;
    requireCacheMatches(*writeAndLoad(makeOpt(opt, 61), "kv-opt"), 6);
}

TEST_CASE("KV cache: inside temperature, masked heads and a narrower capture", "[kv_cache]") {
    auto model = writeAndLoad(makeLlama(LlamaSpec{}, 9), "kv-llama-options");
    RunOptions run;
    run.temperature = 1.7;
    run.temperatureLayers = {1};
    run.maskHeads = {HeadRef{"self", 0, 1}, HeadRef{"self", 1, 2}};
    requireCacheMatches(*model, 6, run);  // (its maps at display temperature 1 show the layer's 1.7)
    RunOptions narrow;
    narrow.captureDtype = CaptureDtype::BFloat16;
    requireCacheMatches(*model, 4, narrow);
}

TEST_CASE("KV cache: options it cannot honour fall back to full forwards", "[kv_cache]") {
    auto model = writeAndLoad(makeLlama(LlamaSpec{}, 9), "kv-llama-fallback");
    GenerateOptions o;
    o.tokens = 3;
    o.run.recordResiduals = true;
    const Generation g = generate(*model, ids64(kPrompt), o);
    CHECK_FALSE(g.cached);
    CHECK(g.generated.size() == 3);
    // The value sources' inputs (values, ALTI's residuals and norms) are recorded per forward.
    GenerateOptions v;
    v.tokens = 3;
    v.run.captureValues = true;
    const Generation withValues = generate(*model, ids64(kPrompt), v);
    CHECK_FALSE(withValues.cached);
    GenerateOptions plain;
    plain.tokens = 3;
    CHECK(withValues.generated == generate(*model, ids64(kPrompt), plain).generated);
}

}  // namespace test_kv_cache
