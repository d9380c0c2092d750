// CLIP's two towers, their similarity and the patch contributions against the independent
// double-precision reference of tests/support/reference_clip.cpp.
#include "attnscope/attention/image_text.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_clip.h"

#include <cmath>

namespace test_clip {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::array<double, 3> kClipMean{0.48145466, 0.4578275, 0.40821073}, kClipStd{0.26862954, 0.26130258, 0.27577711};

// The checkpoint with a CLIPImageProcessor that keeps a `size`² image as it is (no resize, the crop
// of the whole), OpenAI's mean and std.
std::filesystem::path writeClip(const Checkpoint& c, int size, const std::string& name) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c);
    writeText(dir / "preprocessor_config.json", R"({"image_processor_type": "CLIPImageProcessor", "do_resize": false, )"
                                                R"("crop_size": )" +
                                                        std::to_string(size) + "}");
    return dir;
}

// Largest |map - reference| over block b's layers, heads and cells.
double blockDiff(const Trace& trace, int b, const std::vector<std::vector<std::vector<double>>>& ref) {
    const BlockInfo& block = trace.blocks().at(static_cast<std::size_t>(b));
    REQUIRE(static_cast<int>(ref.size()) == block.layers);
    double worst = 0;
    for (int l = 0; l < block.layers; ++l)
        for (int h = 0; h < block.heads; ++h) {
            const HeadMap m = trace.map(b, l, h);
            REQUIRE(m.values.size() == ref[l][h].size());
            for (std::size_t i = 0; i < m.values.size(); ++i)
                worst = std::max(worst, std::abs(m.values[i] - ref[l][h][i]));
        }
    return worst;
}

TextInput textOf(const std::vector<long long>& ids) {
    TextInput t;
    t.ids = ids64(ids);
    return t;
}

}  // namespace

TEST_CASE("CLIP: both towers' maps, the embeddings' cosine and the logit equal the reference", "[clip]") {
    ClipSpec spec;
    spec.eos = 40;  // the first end token (40, at 2) is neither the largest id (62, at 0) nor the last token
    const Checkpoint c = makeClip(spec, 71);
    auto model = loadCpu(writeClip(c, 16, "clip-towers"));
    CHECK(model->info().family == "clip");
    CHECK(model->info().imageText);
    CHECK(model->info().imageSize == 16);
    CHECK(model->info().maxPositions == 12);
    const RgbImage image = noise(16, 3);
    const std::vector<long long> ids{62, 5, 40, 7, 40, 3};
    auto trace = model->forwardImageText(image, textOf(ids));
    const ImageTextReference ref = referenceClip(c, spec, normalised(image, kClipMean, kClipStd), ids);

    REQUIRE(trace->blocks().size() == 2);
    CHECK(trace->blocks()[0].name == "vision");
    CHECK(trace->blocks()[1].name == "text");
    CHECK_FALSE(trace->blocks()[0].causal);
    CHECK(trace->blocks()[1].causal);
    CHECK(trace->blocks()[0].queryTokens.size() == 17);
    CHECK(trace->blocks()[0].queryTokens[0] == "[CLS]");
    CHECK(trace->blocks()[0].queryTokens[16] == "r3c3");
    CHECK(trace->ids() == ids64(ids));
    const double vision = blockDiff(*trace, 0, ref.vision), text = blockDiff(*trace, 1, ref.text);
    INFO("clip: max |map - reference| vision " << vision << ", text " << text);
    CHECK(vision < 1e-5);
    CHECK(text < 1e-5);
    const HeadMap causal = trace->map(1, 0, 0);
    CHECK(causal.at(0, 1) == 0.0f);  // the text's first row sees only itself

    const ImageTextScore& s = traceImageText(*trace);
    REQUIRE(s.present);
    INFO("cosine " << s.cosine << " (reference " << ref.cosine << "), logit " << s.logit << " (" << ref.logit << ")");
    CHECK(std::abs(s.cosine - ref.cosine) < 1e-5);
    CHECK(std::abs(s.logit - ref.logit) < 1e-4);
    CHECK(s.logitScale == Approx(std::exp(1.2)).epsilon(1e-6));
    CHECK(s.logitBias == 0.0);

    // The pooling matters: the same checkpoint pooled at the largest id (the legacy rule) or at
    // the last token gives another logit, so the comparison above can tell them apart.
    ClipSpec legacy = spec;
    legacy.eos = 2;
    const double argmaxLogit = referenceClip(c, legacy, normalised(image, kClipMean, kClipStd), ids).logit;
    CHECK(std::abs(argmaxLogit - ref.logit) > 1e-2);
}

TEST_CASE("CLIP with the legacy eos_token_id 2 pools at the largest id", "[clip]") {
    ClipSpec spec;
    spec.eos = 2;
    spec.scalarShape = false;  // logit_scale stored as [1]
    spec.visionAct = "gelu";
    const Checkpoint c = makeClip(spec, 72);
    auto model = loadCpu(writeClip(c, 16, "clip-legacy"));
    const RgbImage image = noise(16, 4);
    const std::vector<long long> ids{62, 2, 50, 9, 63, 1};  // largest at 0: 62
    const ImageTextReference ref = referenceClip(c, spec, normalised(image, kClipMean, kClipStd), ids);
    auto trace = model->forwardImageText(image, textOf(ids));
    CHECK(std::abs(traceImageText(*trace).logit - ref.logit) < 1e-4);
    const std::vector<long long> later{5, 2, 50, 9, 63, 1};  // largest at 4: 63
    const ImageTextReference ref2 = referenceClip(c, spec, normalised(image, kClipMean, kClipStd), later);
    auto trace2 = model->forwardImageText(image, textOf(later));
    CHECK(std::abs(traceImageText(*trace2).logit - ref2.logit) < 1e-4);
    CHECK(std::abs(ref2.logit - ref.logit) > 1e-3);
}

TEST_CASE("CLIP's patch contributions equal the reference's and add up to the logit with the remainder", "[clip]") {
    ClipSpec spec;
    spec.visionLayers = 3;
    const Checkpoint c = makeClip(spec, 73);
    auto model = loadCpu(writeClip(c, 16, "clip-contributions"));
    const RgbImage image = noise(16, 5);
    const std::vector<long long> ids{62, 19, 7, 4, 63};
    const ImageTextReference ref = referenceClip(c, spec, normalised(image, kClipMean, kClipStd), ids);
    auto trace = model->forwardImageText(image, textOf(ids));
    const ImageTextScore& s = traceImageText(*trace);
    CHECK(s.block == "vision");
    CHECK(s.layer == 2);
    REQUIRE(s.heads == 3);
    REQUIRE(s.positions.size() == 16);
    CHECK(s.positions.front() == "r0c0");
    double worst = 0, sum = 0, largest = 0;
    for (int h = 0; h < 3; ++h)
        for (int j = 0; j < 16; ++j) {
            worst = std::max(worst, std::abs(s.contribution(h, j) - ref.contributions[h][j]));
            largest = std::max(largest, std::abs(ref.contributions[h][j]));
            sum += s.contribution(h, j);
        }
    INFO("max |contribution - reference| " << worst << " (largest " << largest << ")");
    CHECK(worst < 1e-5);
    CHECK(largest > 1e-3);
    std::vector<std::string> parts;
    for (const auto& p : s.remainderParts) parts.push_back(p.first);
    CHECK(parts == std::vector<std::string>{"residual", "cls", "out_bias", "mlp", "norm_bias"});
    INFO("contributions " << sum << " + remainder " << s.remainder() << " vs logit " << s.logit);
    CHECK(std::abs(sum + s.remainder() - s.logit) < 1e-4);
    CHECK(std::abs(sum + s.remainder() - ref.logit) < 1e-4);

    // A masked head of the last layer contributes nothing, and the sum still gives the new logit.
    RunOptions masked;
    masked.maskHeads = {{"vision", 2, 1}};
    auto trace2 = model->forwardImageText(image, textOf(ids), masked);
    const ImageTextScore& m = traceImageText(*trace2);
    double sum2 = 0;
    for (int j = 0; j < 16; ++j) {
        CHECK(m.contribution(1, j) == 0.0);
        sum2 += m.contribution(0, j) + m.contribution(2, j);
    }
    CHECK(std::abs(m.logit - s.logit) > 1e-4);
    CHECK(std::abs(sum2 + m.remainder() - m.logit) < 1e-4);
    // The interventions compare the two runs' logits.
    const OutputChange change = compareOutputs(*trace, *trace2);
    CHECK(change.kind == "similarity");
    CHECK(change.originalLogit == s.logit);
    CHECK(change.changedLogit == m.logit);
    CHECK(change.magnitude() == Approx(std::abs(m.logit - s.logit)));
}

TEST_CASE("CLIP refuses a text longer than its positions, a lone image or text, and bad config fields", "[clip]") {
    const ClipSpec spec;
    const Checkpoint c = makeClip(spec, 74);
    const auto dir = writeClip(c, 16, "clip-errors");
    auto model = loadCpu(dir);
    const RgbImage image = noise(16, 6);
    CHECK_THROWS_WITH(model->forwardImageText(image, textOf(std::vector<long long>(13, 5))),
                      Catch::Contains("the text has 13 tokens; clip's text tower has 12 positions"));
    CHECK_THROWS_WITH(model->forwardImageText(image, textOf({5, 64})), Catch::Contains("token id 64 is outside"));
    CHECK_THROWS_WITH(model->forwardImage(image), Catch::Contains("takes an image and a text together"));
    CHECK_THROWS_WITH(model->forward(ids64({1, 2})), Catch::Contains("takes an image and a text together"));

    Checkpoint bad = c;
    bad.config["text_config"]["hidden_act"] = "swish";
    CHECK_THAT(writeAndLoadError(bad, "clip-bad-act"),
               Catch::Contains("config.json (text_config): 'hidden_act' 'swish' is not supported"));
    bad = c;
    bad.config["vision_config"]["image_size"] = 18;
    CHECK_THAT(writeAndLoadError(bad, "clip-bad-size"),
               Catch::Contains("(vision_config): 'image_size' (18) must be a multiple of patch_size (4)"));
    bad = c;
    bad.tensors.erase("logit_scale");
    CHECK_THAT(loadErrorAt(writeClip(bad, 16, "clip-no-scale")), Catch::Contains("the weights have no 'logit_scale'"));
    // Without a preprocessor_config.json: CLIPImageProcessor's 224² differs from image_size 16.
    CHECK_THAT(writeAndLoadError(c, "clip-no-processor"),
               Catch::Contains("is 224×224 but config.json's vision_config image_size is 16"));
}

}  // namespace test_clip
