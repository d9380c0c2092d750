// ALTI and its rollout (analysis/alti.h) against a double-precision reference written here from
// the definition (issue 31) with plain loops, over the independent forwards in tests/support:
// α, the head outputs f_h(x̃_j) (value_refs.h), the residual entering each block, b_O and the
// post-attention LayerNorm's γ, β from the checkpoint.
#include "attnscope/analysis/alti.h"
#include "attnscope/analysis/map_source.h"
#include "attnscope/runtime/error.h"
#include "fixtures_alibi.h"
#include "fixtures_gemma.h"
#include "fixtures_seq2seq.h"
#include "seq2seq_checks.h"
#include "alti_ref.h"

#include <cmath>

namespace test_alti {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// C is in [0, 1]; the float32 forward and the float32 sums of |y − T| over the width separate it
// from the reference.
constexpr double kTolerance = 2e-5;

// R = C_l · … · C_0 in double from the maps altiMap gives.
Vec product(const Trace& trace, int layer) {
    const int n = trace.blocks()[0].layers > 0 ? static_cast<int>(trace.blocks()[0].queryTokens.size()) : 0;
    Vec r;
    for (int l = 0; l <= layer; ++l) {
        const HeadMap c = altiMap(trace, 0, l);
        if (l == 0) {
            r.assign(c.values.begin(), c.values.end());
            continue;
        }
        Vec next(static_cast<std::size_t>(n) * n, 0.0);
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < n; ++k)
                for (int j = 0; j < n; ++j) next[i * n + j] += c.values[i * n + k] * r[k * n + j];
        r = next;
    }
    return r;
}

void requireAlti(const Trace& trace, const std::vector<AltiRef>& refs, int n) {
    REQUIRE(hasAltiInputs(trace, 0));
    for (int l = 0; l < static_cast<int>(refs.size()); ++l) {
        const HeadMap got = altiMap(trace, 0, l);
        const auto [worst, biggest] = diff(got, refAlti(refs[l], n));
        INFO("alti layer " << l << ": max |got - reference| " << worst << " of " << biggest);
        CHECK(worst <= kTolerance);
        CHECK(biggest > 0.1);
        for (int i = 0; i < n; ++i) {  // rows sum to 1
            double sum = 0;
            for (int j = 0; j < n; ++j) sum += got.values[i * n + j];
            CHECK(std::abs(sum - 1.0) < 1e-5);
        }
        CHECK(sourceMap(trace, MapSource::Alti, 0, l, 0).values == got.values);
    }
    // Rollout: the product of the layers' C, the same whether asked per layer or for all.
    const int L = static_cast<int>(refs.size());
    std::vector<HeadMap> all;
    altiRollout(trace, 0, [&](int l, const HeadMap& r) {
        CHECK(l == static_cast<int>(all.size()));
        all.push_back(r);
    });
    REQUIRE(static_cast<int>(all.size()) == L);
    for (int l = 0; l < L; ++l) {
        const auto [worst, biggest] = diff(all[l], product(trace, l));
        INFO("alti-rollout layer " << l << ": max |got - product| " << worst);
        CHECK(worst <= 1e-5);
        CHECK(biggest > 0.1);
        CHECK(altiRolloutMap(trace, 0, l).values == all[l].values);
    }
    if (L > 1) CHECK(all[1].values != altiMap(trace, 0, 1).values);  // the product is not the last C
}

Vec tensorValues(const Checkpoint& c, const std::string& name) {
    const Tensor& t = c.get(name);
    return Vec(t.values.begin(), t.values.end());
}

// Pre-norm references for an nn.Linear output projection with optional bias (name(l) + ".weight").
std::vector<AltiRef> preNormRefs(const Reference& ref, const Checkpoint& c, const std::function<std::string(int)>& wo,
                                 bool bias, int layers, int n, int E, int H, int G, int d) {
    const std::vector<LayerRef> heads = linearRefs(
            ref, [&](int l) { return wo(l) + ".weight"; }, c, layers, n, E, H, G, d);
    std::vector<AltiRef> out;
    for (int l = 0; l < layers; ++l) {
        AltiRef r;
        r.heads = heads[l];
        r.x = ref.residuals[l];
        if (bias) r.bias = tensorValues(c, wo(l) + ".bias");
        out.push_back(std::move(r));
    }
    return out;
}

const std::vector<long long> kIds = {3, 17, 0, 37, 22, 5, 5, 11, 30, 1, 9};

}  // namespace

TEST_CASE("ALTI of GPT-2 (pre-norm, biases) equals a double-precision reference; rollout is the product", "[alti]") {
    Gpt2Spec spec;
    const Gpt2Checkpoint c = makeGpt2(spec, 5);
    const auto dir = freshDir("alti-gpt2");
    writeGpt2Folder(dir, c);
    auto model = loadCpu(dir);
    const int n = static_cast<int>(kIds.size());
    const auto refsOf = [&](const Gpt2Reference& ref) {
        const std::vector<LayerRef> heads = gpt2Refs(c, ref, n);
        std::vector<AltiRef> out;
        for (int l = 0; l < spec.layers; ++l) {
            AltiRef r;
            r.heads = heads[l];
            r.x = ref.residuals[l];
            r.bias = ref.attnBias[l];
            out.push_back(std::move(r));
        }
        return out;
    };
    requireAlti(*runWithValues(*model, kIds), refsOf(referenceGpt2(c, kIds)), n);

    SECTION("a masked head contributes nothing") {
        ReferenceRun run;
        run.maskedHeads = {{1, 2}};
        std::vector<AltiRef> refs = refsOf(referenceGpt2(c, kIds, run));
        for (Vec& f : refs[1].heads.f[2]) std::fill(f.begin(), f.end(), 0.0);  // its output is zeroed
        requireAlti(*runWithValues(*model, kIds, {{"", 1, 2}}), refs, n);
    }
}

TEST_CASE("ALTI of Llama with grouped-query attention over several row blocks equals a double-precision reference",
          "[alti]") {
    LlamaSpec spec;  // 4 query heads over 2 kv heads, RMS norms, no biases
    spec.positions = 160;
    const Checkpoint c = makeLlama(spec, 11);
    auto model = writeAndLoad(c, "alti-llama");
    // 150 tokens: three blocks of 64 query rows, the last ones seeing more keys than a block has rows.
    std::vector<long long> ids;
    for (int t = 0; t < 150; ++t) ids.push_back((t * 7 + 3) % spec.vocab);
    const int n = static_cast<int>(ids.size());
    const Reference ref = referenceLlama(c, spec, ids);
    requireAlti(*runWithValues(*model, ids),
                preNormRefs(
                        ref, c, [](int l) { return "model.layers." + std::to_string(l) + ".self_attn.o_proj"; }, false,
                        spec.layers, n, spec.hidden, spec.heads, spec.kvHeads, llamaHeadDim(spec)),
                n);
}

TEST_CASE("ALTI of BERT (post-norm: the LayerNorm linearised at each token) equals a double-precision reference",
          "[alti]") {
    BertSpec spec;  // 3 heads of width 8, LayerNorm eps 1e-12
    const Checkpoint c = makeBert(spec, 13);
    auto model = writeAndLoad(c, "alti-bert");
    const std::vector<long long> ids = {2, 7, 9, 3, 41, 5, 12};
    const int n = static_cast<int>(ids.size()), E = spec.hidden, H = spec.heads;
    const auto trace = runWithValues(*model, ids, {{"", 0, 1}});
    const Reference ref = referenceBert(c, spec, ids, {}, {}, {{0, 1}});
    const auto layer = [](int l) { return "bert.encoder.layer." + std::to_string(l) + ".attention.output."; };
    std::vector<AltiRef> refs = preNormRefs(
            ref, c, [&](int l) { return layer(l) + "dense"; }, true, spec.layers, n, E, H, H, E / H);
    for (int l = 0; l < spec.layers; ++l) {
        for (int j = 0; j < n && l == 0; ++j)  // head 1 of layer 0 masked
            std::fill(refs[l].heads.f[1][j].begin(), refs[l].heads.f[1][j].end(), 0.0);
        refs[l].post = true;
        refs[l].gamma = tensorValues(c, layer(l) + "LayerNorm.weight");
        refs[l].beta = tensorValues(c, layer(l) + "LayerNorm.bias");
        refs[l].eps = 1e-12;
    }
    requireAlti(*trace, refs, n);
}

TEST_CASE("ALTI of OPT's post-LN variant (a decoder with the LayerNorm after the residual add) equals a "
          "double-precision reference",
          "[alti]") {
    OptSpec spec;  // 4 heads of width 8, biases, LayerNorm eps 1e-5
    spec.preNorm = false;
    const Checkpoint c = makeOpt(spec, 29);
    auto model = writeAndLoad(c, "alti-opt-post");
    const int n = static_cast<int>(kIds.size()), E = spec.hidden, H = spec.heads;
    const Reference ref = referenceOpt(c, spec, kIds);
    const auto layer = [](int l) { return "model.decoder.layers." + std::to_string(l) + "."; };
    std::vector<AltiRef> refs = preNormRefs(
            ref, c, [&](int l) { return layer(l) + "self_attn.out_proj"; }, true, spec.layers, n, E, H, H, E / H);
    for (int l = 0; l < spec.layers; ++l) {
        refs[l].post = true;
        refs[l].gamma = tensorValues(c, layer(l) + "self_attn_layer_norm.weight");
        refs[l].beta = tensorValues(c, layer(l) + "self_attn_layer_norm.bias");
        refs[l].eps = 1e-5;
    }
    requireAlti(*runWithValues(*model, kIds), refs, n);
}

TEST_CASE("ALTI of GPT-NeoX (parallel residual: the attention branch) equals a double-precision reference", "[alti]") {
    NeoxSpec spec;  // 4 heads of width 16, dense bias
    const Checkpoint c = makeNeox(spec, 19);
    auto model = writeAndLoad(c, "alti-neox");
    const int n = static_cast<int>(kIds.size()), E = spec.hidden, H = spec.heads;
    const Reference ref = referenceNeox(c, spec, kIds);
    requireAlti(*runWithValues(*model, kIds),
                preNormRefs(
                        ref, c, [](int l) { return "gpt_neox.layers." + std::to_string(l) + ".attention.dense"; }, true,
                        spec.layers, n, E, H, H, E / H),
                n);
}

TEST_CASE("ALTI of Gemma-2 (sandwich norm linearised at each token's scale) equals a double-precision reference",
          "[alti]") {
    RmsFamilySpec spec;  // 4 query heads of width 12 over 2 kv heads, width 32, 3 layers
    spec.type = "gemma2";
    const Checkpoint c = makeRmsFamily(spec, 23);
    auto model = writeAndLoad(c, "alti-gemma2");
    const int n = static_cast<int>(kIds.size()), E = spec.hidden;
    const Reference ref = referenceRmsFamily(c, spec, kIds);
    const auto layer = [](int l) { return "model.layers." + std::to_string(l) + "."; };
    std::vector<AltiRef> refs = preNormRefs(
            ref, c, [&](int l) { return layer(l) + "self_attn.o_proj"; }, false, spec.layers, n, E, spec.heads,
            spec.kvHeads, rmsHeadDim(spec));
    for (int l = 0; l < spec.layers; ++l) {
        refs[l].sandwich = true;
        refs[l].gamma = tensorValues(c, layer(l) + "post_attention_layernorm.weight");
        for (double& g : refs[l].gamma) g += 1;  // Gemma's RMSNorm scales by 1 + γ
        refs[l].eps = spec.eps;
    }
    requireAlti(*runWithValues(*model, kIds), refs, n);
}

TEST_CASE("ALTI of ViT (pre-norm, bidirectional) equals a double-precision reference", "[alti]") {
    VitSpec spec;  // 16×16 image in 4×4 patches: 17 tokens, 3 heads of width 8
    const Checkpoint c = makeVit(spec, 5);
    auto model = writeAndLoad(c, "alti-vit");
    RgbImage image{16, 16, std::vector<std::uint8_t>(16 * 16 * 3)};
    std::mt19937 rng(3);
    for (auto& p : image.pixels) p = static_cast<std::uint8_t>(rng() % 256);
    std::vector<double> pixels(3 * 16 * 16);  // channels first, (p / 255 - 0.5) / 0.5
    for (int i = 0; i < 16 * 16; ++i)
        for (int ch = 0; ch < 3; ++ch) pixels[ch * 256 + i] = (image.pixels[i * 3 + ch] / 255.0 - 0.5) / 0.5;
    RunOptions options;
    options.captureValues = true;
    const auto trace = model->forwardImage(image, options);
    const Reference ref = referenceVit(c, spec, pixels);
    const int n = 17, E = spec.hidden, H = spec.heads;
    requireAlti(*trace,
                preNormRefs(
                        ref, c,
                        [](int l) { return "vit.encoder.layer." + std::to_string(l) + ".attention.output.dense"; },
                        true, spec.layers, n, E, H, H, E / H),
                n);
}

TEST_CASE("ALTI refuses traces without values and the blocks of an encoder-decoder that mix two streams", "[alti]") {
    auto llama = writeAndLoad(makeLlama(LlamaSpec{}, 3), "alti-plain");
    const auto plain = llama->forward(ids64(kIds));
    CHECK_FALSE(hasAltiInputs(*plain, 0));
    CHECK_THROWS_WITH(altiMap(*plain, 0, 0),
                      Catch::Contains("alti: the 'self' attention block recorded no value vectors and residuals"));
    CHECK_THROWS_WITH(altiRolloutMap(*plain, 0, 1), Catch::Contains("alti-rollout: the 'self' attention block"));
    const auto traced = runWithValues(*llama, kIds);
    CHECK_THROWS_WITH(altiMap(*traced, 0, 2), Catch::Contains("alti: layer 2 is out of range (0..1)"));

    // A built-in model records them only when asked (test_builtin_sources.cpp checks their ALTI).
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    const auto builtin = Model::load("builtin:sentiment-dot", load)->forward({1, 2, 3});
    CHECK_FALSE(hasAltiInputs(*builtin, 0));
    CHECK_THROWS_WITH(altiMap(*builtin, 0, 0), Catch::Contains("recorded no value vectors and residuals"));
    RunOptions options;
    options.captureValues = true;

    // T5: the encoder is one stream (pre-norm RMS, no biases: rows sum to 1); decoder and cross are refused.
    const Checkpoint t5 = makeT5(T5Spec{}, 7);
    auto model = writeAndLoad(t5, "alti-t5");
    TextInput in;
    in.ids = ids64({4, 9, 13, 5, 1});
    in.targetIds = ids64({0, 6, 8});
    const auto trace = model->forwardText(in, options);
    const int encoder = trace->blockIndex("encoder");
    REQUIRE(hasAltiInputs(*trace, encoder));
    const HeadMap c = altiMap(*trace, encoder, 1);
    for (int i = 0; i < c.rows; ++i) {
        double sum = 0;
        for (int j = 0; j < c.cols; ++j) sum += c.values[i * c.cols + j];
        CHECK(std::abs(sum - 1.0) < 1e-5);
    }
    for (const char* name : {"decoder", "cross"}) {
        CHECK_FALSE(hasAltiInputs(*trace, trace->blockIndex(name)));
        CHECK_THROWS_WITH(altiMap(*trace, trace->blockIndex(name), 0),
                          "alti: the encoder-decoder's '" + std::string(name) +
                                  "' block mixes the decoder's and the encoder's streams; ALTI is defined here for "
                                  "self-attention over one stream (the 'encoder' block)");
    }
}

}  // namespace test_alti
