// SigLIP's two towers, the MAP head's probe, the similarity with its bias and the patch
// contributions through the probe against the independent double-precision reference of
// tests/support/reference_clip.cpp.
#include "attnscope/attention/image_text.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_clip.h"

#include <cmath>

namespace test_siglip {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const double kHalf[3] = {0.5, 0.5, 0.5};  // SiglipImageProcessor's mean and std

ClipSpec siglipSpec() {
    ClipSpec s;
    s.type = "siglip";
    s.visionAct = s.textAct = "gelu_pytorch_tanh";
    s.scalarShape = false;  // SiglipModel's logit_scale and logit_bias are [1]
    return s;
}

std::filesystem::path writeSiglip(const Checkpoint& c, const std::string& name) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c);
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "SiglipImageProcessor", "do_resize": false, "size": 16})");
    return dir;
}

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

TEST_CASE("SigLIP: both towers, the probe, the cosine and the biased logit equal the reference", "[siglip]") {
    const ClipSpec spec = siglipSpec();
    const Checkpoint c = makeClip(spec, 91);
    auto model = loadCpu(writeSiglip(c, "siglip-towers"));
    CHECK(model->info().family == "siglip");
    CHECK(model->info().imageText);
    CHECK(model->info().imageSpecialTokens.empty());
    CHECK(model->info().padTokenId == 1);
    const RgbImage image = noise(16, 7);
    const std::vector<long long> ids{12, 40, 7, 1};
    auto trace = model->forwardImageText(image, textOf(ids));
    const ImageTextReference ref = referenceClip(c, spec, normalised(image, kHalf, kHalf), ids);

    REQUIRE(trace->blocks().size() == 3);
    CHECK(trace->blocks()[0].name == "vision");
    CHECK(trace->blocks()[1].name == "probe");
    CHECK(trace->blocks()[2].name == "text");
    CHECK_FALSE(trace->blocks()[2].causal);
    CHECK(trace->blocks()[0].queryTokens.size() == 16);
    CHECK(trace->blocks()[0].queryTokens[0] == "r0c0");
    CHECK(trace->blocks()[1].queryTokens == std::vector<std::string>{"[PROBE]"});
    CHECK(trace->blocks()[1].keyTokens.size() == 16);
    const double vision = blockDiff(*trace, 0, ref.vision), text = blockDiff(*trace, 2, ref.text);
    double probe = 0;
    for (int h = 0; h < 3; ++h) {
        const HeadMap m = trace->map(1, 0, h);
        REQUIRE(m.values.size() == 16);
        for (int j = 0; j < 16; ++j) probe = std::max(probe, std::abs(m.values[j] - ref.probe[h][j]));
    }
    INFO("siglip: max |map - reference| vision " << vision << ", probe " << probe << ", text " << text);
    CHECK(vision < 1e-5);
    CHECK(probe < 1e-5);
    CHECK(text < 1e-5);
    CHECK(trace->map(2, 0, 0).at(0, 3) > 0.0f);  // no causal mask: the first token sees the last

    const ImageTextScore& s = traceImageText(*trace);
    INFO("cosine " << s.cosine << " (reference " << ref.cosine << "), logit " << s.logit << " (" << ref.logit << ")");
    CHECK(std::abs(s.cosine - ref.cosine) < 1e-5);
    CHECK(std::abs(s.logit - ref.logit) < 1e-4);
    CHECK(s.logitBias == Approx(-0.75));
}

TEST_CASE("SigLIP's contributions through the probe equal the reference's and add up to the logit", "[siglip]") {
    const ClipSpec spec = siglipSpec();
    const Checkpoint c = makeClip(spec, 92);
    auto model = loadCpu(writeSiglip(c, "siglip-contributions"));
    const RgbImage image = noise(16, 8);
    const std::vector<long long> ids{5, 33, 21, 1, 1, 1};  // padded as --pad-text-to 6 would
    const ImageTextReference ref = referenceClip(c, spec, normalised(image, kHalf, kHalf), ids);
    auto trace = model->forwardImageText(image, textOf(ids));
    const ImageTextScore& s = traceImageText(*trace);
    CHECK(s.block == "probe");
    CHECK(s.layer == 0);
    REQUIRE(s.heads == 3);
    REQUIRE(s.positions.size() == 16);
    double worst = 0, sum = 0;
    for (int h = 0; h < 3; ++h)
        for (int j = 0; j < 16; ++j) {
            worst = std::max(worst, std::abs(s.contribution(h, j) - ref.contributions[h][j]));
            sum += s.contribution(h, j);
        }
    std::vector<std::string> parts;
    for (const auto& p : s.remainderParts) parts.push_back(p.first);
    CHECK(parts == std::vector<std::string>{"out_bias", "mlp", "logit_bias"});
    INFO("max |contribution - reference| " << worst << "; contributions " << sum << " + remainder " << s.remainder()
                                           << " vs logit " << ref.logit);
    CHECK(worst < 1e-5);
    CHECK(std::abs(sum + s.remainder() - ref.logit) < 1e-4);
    CHECK(std::abs(sum + s.remainder() - s.logit) < 1e-4);
}

TEST_CASE("SigLIP refuses a long text, vision_use_head false and a mismatched projection", "[siglip]") {
    const ClipSpec spec = siglipSpec();
    const Checkpoint c = makeClip(spec, 93);
    auto model = loadCpu(writeSiglip(c, "siglip-errors"));
    CHECK_THROWS_WITH(model->forwardImageText(noise(16, 9), textOf(std::vector<long long>(13, 4))),
                      Catch::Contains("the text has 13 tokens; siglip's text tower has 12 positions"));
    Checkpoint bad = c;
    bad.config["vision_config"]["vision_use_head"] = false;
    CHECK_THAT(loadErrorAt(writeSiglip(bad, "siglip-no-head")),
               Catch::Contains("(vision_config): 'vision_use_head' false is not supported"));
    bad = c;
    bad.config["text_config"]["projection_size"] = 10;
    CHECK_THAT(loadErrorAt(writeSiglip(bad, "siglip-projection")),
               Catch::Contains("'projection_size' (10) must equal vision_config's hidden_size (24)"));
    bad = c;
    bad.tensors.erase("logit_bias");
    CHECK_THAT(loadErrorAt(writeSiglip(bad, "siglip-no-bias")), Catch::Contains("the weights have no 'logit_bias'"));
}

}  // namespace test_siglip
