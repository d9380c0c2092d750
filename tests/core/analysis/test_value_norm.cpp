// Value-weighted map sources (analysis/value_norm.h) against double-precision references written
// here from the checkpoints' tensors: α from the independent forwards in tests/support, value
// vectors from them, W_O sliced per head from the checkpoint, norms by plain loops.
#include "attnscope/analysis/value_norm.h"
#include "attnscope/runtime/error.h"
#include "value_refs.h"

#include <cmath>
#include <functional>

namespace test_value_norm {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// Relative to the map's largest value (norms reach ~10 on these random weights): the float32
// forward's own rounding of α and x̃ (about 2e-6 on α) is what separates it from the reference.
constexpr double kTolerance = 1e-5;

// value-norm: α_hij · ‖f_h(x̃_j)‖; value-norm-layer: ‖Σ_h α_hij f_h(x̃_j)‖ (heads in `skip` left out).
Vec refValueNorm(const LayerRef& r, int h, int n) {
    Vec out(static_cast<std::size_t>(n) * n);
    for (int j = 0; j < n; ++j) {
        double sq = 0;
        for (double x : r.f[h][j]) sq += x * x;
        for (int i = 0; i < n; ++i) out[i * n + j] = r.alpha[h][i * n + j] * std::sqrt(sq);
    }
    return out;
}

Vec refLayerNorm(const LayerRef& r, int n, const std::vector<int>& skip = {}) {
    Vec out(static_cast<std::size_t>(n) * n);
    const std::size_t E = r.f[0][0].size();
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            Vec sum(E, 0.0);
            for (std::size_t h = 0; h < r.f.size(); ++h) {
                if (std::find(skip.begin(), skip.end(), static_cast<int>(h)) != skip.end()) continue;
                for (std::size_t e = 0; e < E; ++e) sum[e] += r.alpha[h][i * n + j] * r.f[h][j][e];
            }
            double sq = 0;
            for (double x : sum) sq += x * x;
            out[i * n + j] = std::sqrt(sq);
        }
    return out;
}

void requireSources(const Trace& trace, const std::vector<LayerRef>& refs, int n,
                    const std::vector<std::pair<int, int>>& maskedHeads = {}) {
    for (int l = 0; l < static_cast<int>(refs.size()); ++l) {
        std::vector<int> skip;
        for (const auto& [layer, head] : maskedHeads)
            if (layer == l) skip.push_back(head);
        for (int h = 0; h < static_cast<int>(refs[l].f.size()); ++h) {
            const bool off = std::find(skip.begin(), skip.end(), h) != skip.end();
            const Vec want = off ? Vec(static_cast<std::size_t>(n) * n, 0.0) : refValueNorm(refs[l], h, n);
            const auto [worst, biggest] = diff(valueNormMap(trace, 0, l, h), want);
            INFO("value-norm layer " << l << " head " << h << ": max |got - reference| " << worst << " of " << biggest);
            CHECK(worst <= kTolerance * std::max(1.0, biggest));
            CHECK((off || biggest > 1e-2));
        }
        const auto [worst, biggest] = diff(valueNormLayerMap(trace, 0, l), refLayerNorm(refs[l], n, skip));
        INFO("value-norm-layer layer " << l << ": max |got - reference| " << worst << " of " << biggest);
        CHECK(worst <= kTolerance * std::max(1.0, biggest));
        CHECK(biggest > 1e-2);
    }
}

const std::vector<long long> kIds = {3, 17, 0, 37, 22, 5, 5, 11, 30, 1, 9};

}  // namespace

TEST_CASE("value-norm sources of GPT-2 (Conv1D) equal a double-precision reference", "[value_norm]") {
    Gpt2Spec spec;
    const Gpt2Checkpoint c = makeGpt2(spec, 5);
    const auto dir = freshDir("valnorm-gpt2");
    writeGpt2Folder(dir, c);
    auto model = loadCpu(dir);
    const int n = static_cast<int>(kIds.size());
    const auto trace = runWithValues(*model, kIds);
    REQUIRE(hasValues(*trace, 0));
    requireSources(*trace, gpt2Refs(c, referenceGpt2(c, kIds), n), n);

    // Recording the values changes nothing else: the weights are the plain forward's, bit for bit.
    const auto plain = model->forward(ids64(kIds));
    CHECK_FALSE(hasValues(*plain, 0));
    for (int l = 0; l < spec.layers; ++l)
        for (int h = 0; h < spec.heads; ++h) CHECK(plain->map(0, l, h).values == trace->map(0, l, h).values);
    CHECK(plain->nextTokenLogits() == trace->nextTokenLogits());

    SECTION("a masked head contributes nothing") {
        const auto masked = runWithValues(*model, kIds, {{"", 1, 2}});
        ReferenceRun run;
        run.maskedHeads = {{1, 2}};
        requireSources(*masked, gpt2Refs(c, referenceGpt2(c, kIds, run), n), n, {{1, 2}});
    }
    SECTION("α is the map at the temperature the model ran at") {
        RunOptions options;
        options.captureValues = true;
        options.temperature = 2.5;
        options.temperatureLayers = {1};
        const auto hot = model->forward(ids64(kIds), options);
        ReferenceRun run;
        run.temperature = 2.5;
        run.temperatureLayers = {1};
        requireSources(*hot, gpt2Refs(c, referenceGpt2(c, kIds, run), n), n);
    }
}

TEST_CASE("value-norm sources of Llama with grouped-query attention equal a double-precision reference",
          "[value_norm]") {
    LlamaSpec spec;  // 4 query heads over 2 kv heads
    spec.positions = 160;
    REQUIRE(spec.kvHeads < spec.heads);
    const Checkpoint c = makeLlama(spec, 11);
    auto model = writeAndLoad(c, "valnorm-llama");
    // 150 tokens: the layer source's query blocks (64 rows) split the causal map three times.
    std::vector<long long> ids;
    for (int t = 0; t < 150; ++t) ids.push_back((t * 7 + 3) % spec.vocab);
    const int n = static_cast<int>(ids.size()), E = spec.hidden, H = spec.heads, d = llamaHeadDim(spec);
    const auto trace = runWithValues(*model, ids);
    const Reference ref = referenceLlama(c, spec, ids);
    const std::vector<LayerRef> refs = linearRefs(
            ref, [](int l) { return std::string("model.layers." + std::to_string(l) + ".self_attn.o_proj.weight"); }, c,
            spec.layers, n, E, H, spec.kvHeads, d);
    requireSources(*trace, refs, n);
}

TEST_CASE("value-norm sources of BERT (post-norm: x̃ = x) equal a double-precision reference", "[value_norm]") {
    BertSpec spec;  // 3 heads of width 8
    const Checkpoint c = makeBert(spec, 13);
    auto model = writeAndLoad(c, "valnorm-bert");
    const std::vector<long long> ids = {2, 7, 9, 3, 41, 5, 12};
    const int n = static_cast<int>(ids.size()), E = spec.hidden, H = spec.heads, d = E / H;
    const auto trace = runWithValues(*model, ids, {{"", 0, 1}});
    const Reference ref = referenceBert(c, spec, ids, {}, {}, {{0, 1}});
    const std::vector<LayerRef> refs = linearRefs(
            ref,
            [](int l) {
                return std::string("bert.encoder.layer." + std::to_string(l) + ".attention.output.dense.weight");
            },
            c, spec.layers, n, E, H, H, d);
    requireSources(*trace, refs, n, {{0, 1}});
}

TEST_CASE("value-norm sources of ViT (pre-norm: x̃ = LN(x)) equal a double-precision reference", "[value_norm]") {
    VitSpec spec;  // 16×16 image in 4×4 patches: 17 tokens, 3 heads of width 8
    const Checkpoint c = makeVit(spec, 5);
    auto model = writeAndLoad(c, "valnorm-vit");
    RgbImage image{16, 16, std::vector<std::uint8_t>(16 * 16 * 3)};
    std::mt19937 rng(3);
    for (auto& p : image.pixels) p = static_cast<std::uint8_t>(rng() % 256);
    std::vector<double> pixels(3 * 16 *
                               16);  // channels first, (p / 255 - 0.5) / 0.5 as the fixture's preprocessor says
    for (int i = 0; i < 16 * 16; ++i)
        for (int ch = 0; ch < 3; ++ch) pixels[ch * 256 + i] = (image.pixels[i * 3 + ch] / 255.0 - 0.5) / 0.5;
    RunOptions options;
    options.captureValues = true;
    const auto trace = model->forwardImage(image, options);
    const Reference ref = referenceVit(c, spec, pixels);
    const int n = 17, E = spec.hidden, H = spec.heads, d = E / H;
    const std::vector<LayerRef> refs = linearRefs(
            ref,
            [](int l) {
                return std::string("vit.encoder.layer." + std::to_string(l) + ".attention.output.dense.weight");
            },
            c, spec.layers, n, E, H, H, d);
    requireSources(*trace, refs, n);
}

TEST_CASE("value-norm sources of GPT-NeoX (parallel residual, per-head fused qkv) equal a double-precision reference",
          "[value_norm]") {
    NeoxSpec spec;  // 4 heads of width 16
    const Checkpoint c = makeNeox(spec, 19);
    auto model = writeAndLoad(c, "valnorm-neox");
    const int n = static_cast<int>(kIds.size()), E = spec.hidden, H = spec.heads, d = E / H;
    const auto trace = runWithValues(*model, kIds);
    const Reference ref = referenceNeox(c, spec, kIds);
    const std::vector<LayerRef> refs = linearRefs(
            ref, [](int l) { return std::string("gpt_neox.layers." + std::to_string(l) + ".attention.dense.weight"); },
            c, spec.layers, n, E, H, H, d);
    requireSources(*trace, refs, n);
}

TEST_CASE("value-norm sources of a streamed model equal the converted model's", "[value_norm][streamed]") {
    // Streamed forwards reuse one float32 buffer per matrix for every layer: the recorded W_O
    // must be each layer's own.
    Checkpoint c = makeLlama(LlamaSpec{}, 17);
    roundTensors(c, "BF16");
    const auto dir = freshDir("valnorm-stream");
    WriteOptions w;
    w.dtype = "BF16";
    writeCheckpoint(dir, c, w);
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    load.weights = WeightPlan::Convert;
    const auto converted = Model::load(dir, load);
    load.weights = WeightPlan::Stream;
    const auto streamed = Model::load(dir, load);
    REQUIRE_THAT(streamed->info().weights, Catch::StartsWith("streamed"));
    const auto a = runWithValues(*converted, kIds), b = runWithValues(*streamed, kIds);
    for (int l = 0; l < 2; ++l) {
        CHECK(valueNormLayerMap(*b, 0, l).values == valueNormLayerMap(*a, 0, l).values);
        for (int h = 0; h < 4; ++h) CHECK(valueNormMap(*b, 0, l, h).values == valueNormMap(*a, 0, l, h).values);
    }
}

TEST_CASE("value-norm sources refuse traces without values and name the accepted sources", "[value_norm]") {
    CHECK(parseMapSource("value-norm-layer") == MapSource::ValueNormLayer);
    CHECK(std::string(sourceName(MapSource::ValueNorm)) == "value-norm");
    CHECK_THROWS_WITH(
            parseMapSource("values"),
            "unknown map source 'values' (accepted: weights, value-norm, value-norm-layer, alti, alti-rollout, "
            "grad-weighted, relevance, score-c2c, score-c2p, score-p2c)");

    // A decoder run without RunOptions::captureValues.
    auto llama = writeAndLoad(makeLlama(LlamaSpec{}, 3), "valnorm-plain");
    const auto plain = llama->forward(ids64(kIds));
    CHECK_THROWS_WITH(valueNormMap(*plain, 0, 0, 0),
                      Catch::Contains("value-norm: the 'self' attention block recorded no value vectors"));

    // A built-in model records them only when asked (test_builtin_sources.cpp checks their maps).
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    auto builtin = Model::load("builtin:sentiment-dot", load);
    const auto trace = builtin->forward({1, 2, 3});
    CHECK_FALSE(hasValues(*trace, 0));
    CHECK_THROWS_WITH(valueNormLayerMap(*trace, 0, 0),
                      Catch::Contains("value-norm-layer: the '" + trace->blocks()[0].name +
                                      "' attention block recorded no value vectors"));
    CHECK_THROWS_WITH(valueNormMap(*plain, 0, 5, 0), Catch::Contains("layer 5 is out of range"));
}

}  // namespace test_value_norm
