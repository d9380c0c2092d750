// Gradient map sources (analysis/gradient_sources.h) against central finite differences through
// the independent double-precision references in tests/support: ε added to one α cell
// (ScopedProbsHook) and everything downstream recomputed, so ∂s/∂α_hij is the total derivative,
// later layers' attention included. Relevance against a plain-loop rollout of the reference G.
#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_alibi.h"
#include "fixtures_deberta.h"
#include "fixtures_gemma.h"
#include "fixtures_neox.h"
#include "fixtures_seq2seq.h"
#include "reference_gpt2.h"
#include "reference_math.h"

#include <cmath>
#include <functional>

namespace test_gradient_sources {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

using Vec = std::vector<double>;

// The target's logit from one reference run (with whatever hook is installed).
using Score = std::function<double()>;

// G[l][h][i·n + j] = (∂s/∂α_hij) · α_hij by central differences (ε in double precision) over the
// cells the model may attend to (α > 0; the others are 0 in G).
std::vector<std::vector<Vec>> referenceG(const std::vector<std::vector<Vec>>& alpha, int n, const Score& score) {
    constexpr double eps = 1e-6;
    std::vector<std::vector<Vec>> G;
    for (int l = 0; l < static_cast<int>(alpha.size()); ++l) {
        G.emplace_back();
        for (int h = 0; h < static_cast<int>(alpha[l].size()); ++h) {
            Vec g(static_cast<std::size_t>(n) * n, 0.0);
            for (int c = 0; c < n * n; ++c) {
                if (alpha[l][h][c] <= 0) continue;
                const auto at = [&](double delta) {
                    ScopedProbsHook hook([&](int layer, int head, Vec& p) {
                        if (layer == l && head == h) p[c] += delta;
                    });
                    return score();
                };
                g[c] = (at(eps) - at(-eps)) / (2 * eps) * alpha[l][h][c];
            }
            G.back().push_back(std::move(g));
        }
    }
    return G;
}

// Relevance written out: Ā = mean_h max(G, 0), R = I, R ← R + Ā R per layer.
std::vector<Vec> referenceRelevance(const std::vector<std::vector<Vec>>& G, int n) {
    Vec R(static_cast<std::size_t>(n) * n, 0.0);
    for (int i = 0; i < n; ++i) R[i * n + i] = 1;
    std::vector<Vec> out;
    for (const auto& layer : G) {
        Vec A(R.size(), 0.0);
        for (const Vec& g : layer)
            for (std::size_t c = 0; c < A.size(); ++c) A[c] += std::max(0.0, g[c]) / layer.size();
        Vec next = R;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                for (int k = 0; k < n; ++k) next[i * n + j] += A[i * n + k] * R[k * n + j];
        R = next;
        out.push_back(R);
    }
    return out;
}

std::int64_t argmax(const Vec& v) { return std::max_element(v.begin(), v.end()) - v.begin(); }

// Largest |got - want| relative to the largest |want|, which must be far from 0 (a test that
// compares zeros cannot fail).
void requireClose(const GradientMaps& maps, const std::vector<std::vector<Vec>>& G, const std::string& name,
                  double tolerance = 5e-6) {
    REQUIRE(maps.layers == static_cast<int>(G.size()));
    REQUIRE(maps.heads == static_cast<int>(G[0].size()));
    double worst = 0, biggest = 0;
    for (int l = 0; l < maps.layers; ++l)
        for (int h = 0; h < maps.heads; ++h) {
            const HeadMap m = maps.map(MapSource::GradWeighted, l, h);
            REQUIRE(m.values.size() == G[l][h].size());
            for (std::size_t c = 0; c < m.values.size(); ++c) {
                worst = std::max(worst, std::abs(m.values[c] - G[l][h][c]));
                biggest = std::max(biggest, std::abs(G[l][h][c]));
            }
        }
    INFO(name << " grad-weighted: max |core - finite differences| " << worst << " of " << biggest);
    CHECK(biggest > 1e-3);
    CHECK(worst <= tolerance * biggest);
    const std::vector<Vec> R = referenceRelevance(G, maps.tokens);
    double rWorst = 0, rBiggest = 0;
    for (int l = 0; l < maps.layers; ++l) {
        const HeadMap m = maps.map(MapSource::Relevance, l, 0);
        for (std::size_t c = 0; c < m.values.size(); ++c) {
            rWorst = std::max(rWorst, std::abs(m.values[c] - R[l][c]));
            rBiggest = std::max(rBiggest, std::abs(R[l][c]));
        }
    }
    INFO(name << " relevance: max |core - rollout of the reference G| " << rWorst);
    CHECK(rWorst <= tolerance * rBiggest);
}

std::string refusal(const Model& model, const GradientInput& input, const GradientTarget& target = {}) {
    try {
        gradientSources(model, input, target);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

GradientInput textInput(const std::vector<long long>& ids) {
    GradientInput in;
    in.text.ids = ids64(ids);
    return in;
}

RgbImage randomImage(int size, unsigned seed) {
    std::mt19937 rng(seed);
    RgbImage image{size, size, std::vector<std::uint8_t>(static_cast<std::size_t>(size) * size * 3)};
    for (auto& p : image.pixels) p = static_cast<std::uint8_t>(rng() % 256);
    return image;
}

// The ViT fixture's preprocessing: pixels / 255, mean and std 0.5, channels first.
Vec vitPixels(const RgbImage& image) {
    const std::size_t plane = static_cast<std::size_t>(image.width) * image.height;
    Vec out(3 * plane);
    for (std::size_t i = 0; i < plane; ++i)
        for (int c = 0; c < 3; ++c) out[c * plane + i] = (image.pixels[i * 3 + c] / 255.0 - 0.5) / 0.5;
    return out;
}

const std::vector<long long> kIds = {3, 17, 0, 39, 22, 5, 11};

}  // namespace

TEST_CASE("Gradient sources: GPT-2's G equals finite differences through the reference, default target the argmax",
          "[gradient_sources]") {
    Gpt2Spec spec;
    const Gpt2Checkpoint c = makeGpt2(spec, 3);
    const auto dir = freshDir("grad-gpt2");
    writeGpt2Folder(dir, c);
    const auto model = loadCpu(dir);
    const int n = static_cast<int>(kIds.size());
    const Gpt2Reference base = referenceGpt2(c, kIds);
    const GradientMaps maps = gradientSources(*model, textInput(kIds), GradientTarget{});
    CHECK(maps.target == argmax(base.nextTokenLogits));
    CHECK(maps.targetLabel == "t" + std::to_string(maps.target));
    CHECK(maps.score == Approx(base.nextTokenLogits[maps.target]).margin(1e-4));
    const auto score = [&] { return referenceGpt2(c, kIds).nextTokenLogits[maps.target]; };
    requireClose(maps, referenceG(base.probs, n, score), "gpt2");

    SECTION("an explicit target token explains that logit") {
        const std::int64_t other = (maps.target + 7) % spec.vocab;
        GradientTarget target;
        target.token = other;
        const GradientMaps explicitMaps = gradientSources(*model, textInput(kIds), target);
        CHECK(explicitMaps.target == other);
        CHECK(explicitMaps.score == Approx(base.nextTokenLogits[other]).margin(1e-4));
        const auto otherScore = [&] { return referenceGpt2(c, kIds).nextTokenLogits[other]; };
        requireClose(explicitMaps, referenceG(base.probs, n, otherScore), "gpt2 target");
    }
}

TEST_CASE("Gradient sources: the run's interventions (temperature inside, masked heads) apply", "[gradient_sources]") {
    Gpt2Spec spec;
    const Gpt2Checkpoint c = makeGpt2(spec, 4);
    const auto dir = freshDir("grad-gpt2-run");
    writeGpt2Folder(dir, c);
    const auto model = loadCpu(dir);
    ReferenceRun run;
    run.temperature = 0.6;
    run.temperatureLayers = {1};
    run.maskedHeads = {{0, 2}};
    RunOptions options;
    options.temperature = 0.6;
    options.temperatureLayers = {1};
    options.maskHeads = {{"", 0, 2}};
    const Gpt2Reference base = referenceGpt2(c, kIds, run);
    const GradientMaps maps = gradientSources(*model, textInput(kIds), {}, options);
    CHECK(maps.target == argmax(base.nextTokenLogits));
    const auto score = [&] { return referenceGpt2(c, kIds, run).nextTokenLogits[maps.target]; };
    const auto G = referenceG(base.probs, static_cast<int>(kIds.size()), score);
    requireClose(maps, G, "gpt2 with interventions");
    const HeadMap masked = maps.map(MapSource::GradWeighted, 0, 2);
    CHECK(std::all_of(masked.values.begin(), masked.values.end(), [](float v) { return v == 0.f; }));
}

TEST_CASE("Gradient sources: Llama with grouped-query attention equals finite differences", "[gradient_sources]") {
    LlamaSpec spec;  // 4 query heads over 2 kv groups
    const Checkpoint c = makeLlama(spec, 7);
    const auto model = writeAndLoad(c, "grad-llama");
    const Reference base = referenceLlama(c, spec, kIds);
    const GradientMaps maps = gradientSources(*model, textInput(kIds), GradientTarget{});
    CHECK(maps.target == argmax(base.logits));
    CHECK(maps.score == Approx(base.logits[maps.target]).margin(1e-4));
    const auto score = [&] { return referenceLlama(c, spec, kIds).logits[maps.target]; };
    requireClose(maps, referenceG(base.probs, static_cast<int>(kIds.size()), score), "llama-gqa");
}

TEST_CASE("Gradient sources: GPT-NeoX's parallel residual equals finite differences", "[gradient_sources]") {
    NeoxSpec spec;
    const Checkpoint c = makeNeox(spec, 5);
    const auto model = writeAndLoad(c, "grad-neox");
    const Reference base = referenceNeox(c, spec, kIds);
    const GradientMaps maps = gradientSources(*model, textInput(kIds), GradientTarget{});
    CHECK(maps.target == argmax(base.logits));
    const auto score = [&] { return referenceNeox(c, spec, kIds).logits[maps.target]; };
    requireClose(maps, referenceG(base.probs, static_cast<int>(kIds.size()), score), "gpt-neox");
}

TEST_CASE("Gradient sources: Gemma-2's soft-capped logits and sliding windows; s is taken before the final soft-cap",
          "[gradient_sources]") {
    RmsFamilySpec spec;
    spec.type = "gemma2";
    spec.attnSoftcap = 1.5;  // small enough to bite on these scores
    spec.finalSoftcap = 2.0;
    spec.window = 3;
    const Checkpoint c = makeRmsFamily(spec, 31);
    const auto model = writeAndLoad(c, "grad-gemma2");
    // The reference applies the final soft-cap; s is the logit before it.
    const auto uncapped = [&](double z) { return spec.finalSoftcap * std::atanh(z / spec.finalSoftcap); };
    const Reference base = referenceRmsFamily(c, spec, kIds);
    const GradientMaps maps = gradientSources(*model, textInput(kIds), GradientTarget{});
    CHECK(maps.target == argmax(base.logits));
    CHECK(maps.score == Approx(uncapped(base.logits[maps.target])).margin(1e-4));
    CHECK(std::abs(maps.score) > std::abs(base.logits[maps.target]) + 1e-3);  // the cap did bite
    const auto score = [&] { return uncapped(referenceRmsFamily(c, spec, kIds).logits[maps.target]); };
    requireClose(maps, referenceG(base.probs, static_cast<int>(kIds.size()), score), "gemma2");
}

TEST_CASE("Gradient sources: BLOOM's ALiBi and OPT's post-norm blocks equal finite differences", "[gradient_sources]") {
    BloomSpec bloom;
    bloom.residualAfterNorm = true;
    const Checkpoint b = makeBloom(bloom, 13);
    const Reference bloomBase = referenceBloom(b, bloom, kIds);
    const GradientMaps bloomMaps = gradientSources(*writeAndLoad(b, "grad-bloom"), textInput(kIds), GradientTarget{});
    CHECK(bloomMaps.target == argmax(bloomBase.logits));
    const auto bloomScore = [&] { return referenceBloom(b, bloom, kIds).logits[bloomMaps.target]; };
    requireClose(bloomMaps, referenceG(bloomBase.probs, static_cast<int>(kIds.size()), bloomScore), "bloom");

    OptSpec opt;
    opt.preNorm = false;  // OPT-350m's post-LN blocks
    const Checkpoint o = makeOpt(opt, 14);
    const Reference optBase = referenceOpt(o, opt, kIds);
    const GradientMaps optMaps = gradientSources(*writeAndLoad(o, "grad-opt"), textInput(kIds), GradientTarget{});
    CHECK(optMaps.target == argmax(optBase.logits));
    const auto optScore = [&] { return referenceOpt(o, opt, kIds).logits[optMaps.target]; };
    requireClose(optMaps, referenceG(optBase.probs, static_cast<int>(kIds.size()), optScore), "opt post-norm");
}

TEST_CASE("Gradient sources: ViT's class logit equals finite differences; a class by index or label",
          "[gradient_sources]") {
    VitSpec spec;
    const Checkpoint c = makeVit(spec, 5);
    const auto model = writeAndLoad(c, "grad-vit");
    GradientInput in;
    in.image = randomImage(spec.imageSize, 2);
    const Vec pixels = vitPixels(*in.image);
    const Reference base = referenceVit(c, spec, pixels);
    const GradientMaps maps = gradientSources(*model, in, GradientTarget{});
    CHECK(maps.tokens == 17);
    CHECK(maps.target == argmax(base.logits));
    CHECK(maps.targetLabel == "class" + std::to_string(maps.target));
    CHECK(maps.score == Approx(base.logits[maps.target]).margin(1e-4));
    CHECK(gradientClassLabels(*model).size() == 5);
    const auto score = [&] { return referenceVit(c, spec, pixels).logits[maps.target]; };
    requireClose(maps, referenceG(base.probs, 17, score), "vit");

    const int other = static_cast<int>((maps.target + 2) % 5);
    GradientTarget byLabel;
    byLabel.classLabel = "class" + std::to_string(other);
    const GradientMaps labelled = gradientSources(*model, in, byLabel);
    CHECK(labelled.target == other);
    CHECK(labelled.score == Approx(base.logits[other]).margin(1e-4));
    GradientTarget byIndex;
    byIndex.classIndex = other;
    CHECK(gradientSources(*model, in, byIndex).gradWeighted == labelled.gradWeighted);
}

TEST_CASE("Gradient sources: BERT-family sequence classifiers equal finite differences, padding and types included",
          "[gradient_sources]") {
    const std::vector<long long> ids = {2, 17, 9, 33, 5, 1};
    for (const std::string type : {"bert", "roberta", "distilbert"}) {
        BertSpec spec;
        spec.type = type;
        spec.labels = 4;
        const Checkpoint c = makeBert(spec, 11);
        const auto model = writeAndLoad(c, "grad-" + type);
        GradientInput in = textInput(ids);
        std::vector<long long> types;
        if (type == "bert") types = {0, 0, 0, 1, 1, 1};
        in.text.typeIds = {types.begin(), types.end()};
        const std::vector<int> attend = {1, 1, 1, 1, 1, 0};  // the last token is padding
        in.text.attend = {attend.begin(), attend.end()};
        const Reference base = referenceBert(c, spec, ids, types, attend);
        REQUIRE(base.logits.size() == 4);
        const GradientMaps maps = gradientSources(*model, in, GradientTarget{});
        INFO(type);
        CHECK(maps.target == argmax(base.logits));
        CHECK(maps.targetLabel == "class" + std::to_string(maps.target));
        CHECK(maps.score == Approx(base.logits[maps.target]).margin(1e-4));
        const auto score = [&] { return referenceBert(c, spec, ids, types, attend).logits[maps.target]; };
        requireClose(maps, referenceG(base.probs, static_cast<int>(ids.size()), score), type);
        // The forward outputs the same classes (softmax of the reference's logits).
        TextInput text = in.text;
        const auto trace = model->forwardText(text);
        REQUIRE(trace->classProbabilities().size() == 4);
        double sum = 0;
        for (double z : base.logits) sum += std::exp(z - base.logits[maps.target]);
        CHECK(trace->classProbabilities()[maps.target] == Approx(1 / sum).margin(1e-5));
        CHECK(trace->classLabels()[3] == "class3");
    }
}

TEST_CASE("Gradient sources: a DeBERTa classifier (relative terms, convolution, padding) equals finite differences",
          "[gradient_sources][deberta]") {
    const std::vector<long long> ids = {2, 17, 9, 33, 5, 1};
    DebertaSpec spec;
    spec.labels = 3;
    spec.convKernel = 3;
    spec.buckets = 4;
    spec.maxRelative = 12;
    const Checkpoint c = makeDeberta(spec, 12);
    const auto model = writeAndLoad(c, "grad-deberta");
    GradientInput in = textInput(ids);
    const std::vector<int> attend = {1, 1, 1, 1, 1, 0};
    in.text.attend = {attend.begin(), attend.end()};
    const DebertaReference base = referenceDeberta(c, spec, ids, {}, attend);
    const GradientMaps maps = gradientSources(*model, in, GradientTarget{});
    CHECK(maps.target == argmax(base.base.logits));
    CHECK(maps.score == Approx(base.base.logits[maps.target]).margin(1e-4));
    const auto score = [&] { return referenceDeberta(c, spec, ids, {}, attend).base.logits[maps.target]; };
    requireClose(maps, referenceG(base.base.probs, static_cast<int>(ids.size()), score), "deberta");
}

TEST_CASE("Gradient sources: refusals name the reason in one line", "[gradient_sources]") {
    const auto gpt2Dir = freshDir("grad-refuse-gpt2");
    writeGpt2Folder(gpt2Dir, makeGpt2(Gpt2Spec{}, 3));
    const auto gpt2 = loadCpu(gpt2Dir);
    GradientTarget token;
    token.token = 40;
    CHECK(refusal(*gpt2, textInput(kIds), token) == "target token 40 is outside the vocabulary (0..39)");
    RunOptions badHead;
    badHead.maskHeads = {{"", 0, 4}};
    CHECK_THROWS_WITH(gradientSources(*gpt2, textInput(kIds), GradientTarget{}, badHead),
                      "head 0:4: head 4 is out of range (0..3)");
    GradientTarget cls;
    cls.classIndex = 0;
    CHECK(refusal(*gpt2, textInput(kIds), cls) ==
          "a target class is for classifiers; gpt2 is a language model (give a target token)");

    const auto vit = writeAndLoad(makeVit(VitSpec{}, 5), "grad-refuse-vit");
    GradientInput image;
    image.image = randomImage(16, 1);
    cls.classIndex = 5;
    CHECK(refusal(*vit, image, cls) == "target class 5 is outside the classes (0..4)");
    GradientTarget label;
    label.classLabel = "dog";
    CHECK(refusal(*vit, image, label) == "target class 'dog' is not one of the model's 5 class labels");
    CHECK(refusal(*vit, image, token) ==
          "a target token is for decoder language models; vit explains a class (give a target class)");

    const std::string covered = "grad-weighted and relevance are defined for decoder language models, sequence "
                                "classifiers (BERT family) and ViT with a classification head";
    VitSpec headless;
    headless.labels = 0;
    const auto bare = writeAndLoad(makeVit(headless, 5), "grad-refuse-vit-bare");
    CHECK(refusal(*bare, image) ==
          "gradient sources: vit here is an encoder without a task head, so it has no output to explain; " + covered);

    const auto bert = writeAndLoad(makeBert(BertSpec{}, 9), "grad-refuse-bert");
    CHECK(refusal(*bert, textInput({2, 5, 7})) ==
          "gradient sources: bert here is an encoder without a task head, so it has no output to explain; " + covered);

    const auto t5 = writeAndLoad(makeT5(T5Spec{}, 31), "grad-refuse-t5");
    const std::string t5Refusal = refusal(*t5, textInput({2, 5, 7}));
    CHECK(t5Refusal.find(
                  "gradient sources: t5 is an encoder–decoder, whose decoder and cross blocks mix two streams") == 0);
    CHECK(t5Refusal.find('\n') == std::string::npos);
}

TEST_CASE("Gradient sources: an input whose backward cannot fit is refused before it runs, naming the memory",
          "[gradient_sources]") {
    Gpt2Spec spec;
    spec.positions = 100000;     // 100,000 tokens: each [H, n, n] tensor of the backward is 149 GiB
    spec.legacyBuffers = false;  // no [positions, positions] attn.bias
    const auto dir = freshDir("grad-memory");
    writeGpt2Folder(dir, makeGpt2(spec, 3));
    const auto model = loadCpu(dir);
    GradientInput in;
    in.text.ids.assign(100000, 5);
    const std::string why = refusal(*model, in);
    INFO(why);
    CHECK(why.rfind("the gradient sources' backward pass needs ", 0) == 0);
    CHECK_THAT(why, Catch::Contains(" GiB on cpu, ") && Catch::EndsWith(" GiB available"));
    const double gib = std::stod(why.substr(std::string("the gradient sources' backward pass needs ").size()));
    CHECK(gib == Approx(gradientSourcesBytes(model->info(), 100000) / double(1 << 30)).margin(0.06));

    const auto builtin = Model::load("builtin:sentiment-dot");
    CHECK(refusal(*builtin, textInput({1, 2, 3})).rfind("gradient sources: the built-in models are not covered; ", 0) ==
          0);
}

TEST_CASE("Gradient sources: streamed weights are refused, the same checkpoint converted runs", "[gradient_sources]") {
    Checkpoint c = makeLlama(LlamaSpec{}, 17);
    roundTensors(c, "BF16");
    const auto dir = freshDir("grad-stream");
    WriteOptions w;
    w.dtype = "BF16";
    writeCheckpoint(dir, c, w);
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    load.weights = WeightPlan::Stream;
    const auto streamed = Model::load(dir, load);
    REQUIRE_THAT(streamed->info().weights, Catch::StartsWith("streamed"));
    CHECK(refusal(*streamed, textInput(kIds)) == "gradient sources: this model streams its weights from the file, and "
                                                 "the backward pass needs them held (open it with --weights convert)");
    load.weights = WeightPlan::Convert;
    const GradientMaps maps = gradientSources(*Model::load(dir, load), textInput(kIds), GradientTarget{});
    const Reference base = referenceLlama(c, LlamaSpec{}, kIds);
    CHECK(maps.target == argmax(base.logits));
    const auto score = [&] { return referenceLlama(c, LlamaSpec{}, kIds).logits[maps.target]; };
    requireClose(maps, referenceG(base.probs, static_cast<int>(kIds.size()), score), "llama bf16 converted");
}

TEST_CASE("Gradient sources: the memory estimate grows with the square of the input", "[gradient_sources]") {
    ModelInfo info;
    info.layers = 12, info.heads = 12, info.hidden = 768;
    const double small = static_cast<double>(gradientSourcesBytes(info, 512));
    const double large = static_cast<double>(gradientSourcesBytes(info, 4096));
    // At 4,096 tokens the [H, n, n] maps dominate: 64× the cells of 512 tokens.
    CHECK(large / small > 40);
    CHECK(small > 4.0 * 12 * 12 * 512 * 512 * 4);  // at least α, its gradient, G and the temporaries
}

}  // namespace test_gradient_sources
