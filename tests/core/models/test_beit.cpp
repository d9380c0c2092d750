// BEiT on images against the independent reference of tests/support/reference_vision.cpp:
// relative position bias per layer, shared, or both; absolute positions; layer scale; mean
// pooling with the pooler's LayerNorm or the final [CLS].
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_vision.h"

#include <algorithm>
#include <cmath>

namespace test_beit {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// Mean and std 0.5 (BeitImageProcessor's); the preprocessor keeps a 16-pixel image as it is.
std::vector<double> half(const RgbImage& image) {
    const std::size_t plane = static_cast<std::size_t>(image.width) * image.height;
    std::vector<double> out(3 * plane);
    for (std::size_t i = 0; i < plane; ++i)
        for (int c = 0; c < 3; ++c) out[c * plane + i] = (image.pixels[i * 3 + c] / 255.0 - 0.5) / 0.5;
    return out;
}

std::filesystem::path writeBeit(const Checkpoint& c, const std::string& name) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c);
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "BeitImageProcessor", "size": 16, "crop_size": 16})");
    return dir;
}

bool hasNote(const Model& m, const std::string& note) {
    return std::find(m.info().notes.begin(), m.info().notes.end(), note) != m.info().notes.end();
}

}  // namespace

TEST_CASE("BEiT: relative position bias per layer, shared or both, against the reference", "[beit]") {
    struct Variant {
        const char* name;
        bool layerBias, sharedBias, absolute, layerScale, meanPooling, prefix;
    };
    for (const Variant& v :
         {Variant{"per-layer bias, mean pooling", true, false, false, true, true, true},
          Variant{"shared bias, absolute positions, [CLS]", false, true, true, true, false, true},
          Variant{"both biases, no layer scale, no prefix", true, true, false, false, true, false}}) {
        INFO(v.name);
        VisionModelSpec spec;
        spec.type = "beit";
        spec.layerBias = v.layerBias;
        spec.sharedBias = v.sharedBias;
        spec.absolute = v.absolute;
        spec.layerScale = v.layerScale;
        spec.meanPooling = v.meanPooling;
        spec.prefix = v.prefix;
        const Checkpoint c = makeVisionModel(spec, 41);
        auto model = loadCpu(writeBeit(c, std::string("beit-") + (v.prefix ? "p" : "n") + (v.layerBias ? "l" : "") +
                                                  (v.sharedBias ? "s" : "")));
        CHECK(model->info().family == "beit");
        CHECK(hasNote(*model, "relative position bias per layer") == v.layerBias);
        CHECK(hasNote(*model, "shared relative position bias") == v.sharedBias);
        CHECK(hasNote(*model, "layer scale") == v.layerScale);
        CHECK(hasNote(*model, "mean pooling") == v.meanPooling);
        const RgbImage image = noise(16, 42);
        auto trace = model->forwardImage(image);
        const Reference ref = referenceVisionModel(c, spec, half(image), 16);
        const double diff = maxMapDiff(*trace, ref);
        INFO("beit: max |map - reference| " << diff);
        CHECK(diff < 2e-6);
        REQUIRE(trace->classProbabilities().size() == ref.logits.size());
        double mx = -1e300, sum = 0;
        for (double z : ref.logits) mx = std::max(mx, z);
        for (double z : ref.logits) sum += std::exp(z - mx);
        for (std::size_t i = 0; i < ref.logits.size(); ++i)
            CHECK(trace->classProbabilities()[i] == Approx(std::exp(ref.logits[i] - mx) / sum).margin(1e-5));
        REQUIRE(trace->tokens().size() == 17);
        CHECK(trace->tokens()[0] == "[CLS]");
        CHECK(trace->tokens()[1] == "r0c0");
    }
}

TEST_CASE("BEiT without a classifier: the final states (no final LayerNorm with mean pooling)", "[beit]") {
    VisionModelSpec spec;
    spec.type = "beit";
    spec.labels = 0;
    const Checkpoint c = makeVisionModel(spec, 43);
    auto model = loadCpu(writeBeit(c, "beit-base"));
    const RgbImage image = noise(16, 44);
    auto trace = model->forwardImage(image);
    const Reference ref = referenceVisionModel(c, spec, half(image), 16);
    REQUIRE(trace->finalHidden().size() == ref.hidden.size() * spec.hidden);
    double diff = 0;
    for (std::size_t t = 0; t < ref.hidden.size(); ++t)
        for (int e = 0; e < spec.hidden; ++e)
            diff = std::max(diff, std::abs(trace->finalHidden()[t * spec.hidden + e] - ref.hidden[t][e]));
    INFO("max |final hidden - reference| " << diff);
    CHECK(diff < 2e-5);
}

TEST_CASE("BEiT: bad configs and tensors name the file and the field", "[beit]") {
    VisionModelSpec spec;
    spec.type = "beit";
    Checkpoint c = makeVisionModel(spec, 45);
    c.config["layer_scale_init_value"] = -1;
    CHECK_THAT(loadErrorAt(writeBeit(c, "beit-bad")),
               Catch::Contains("config.json") && Catch::Contains("'layer_scale_init_value' must be a number >= 0"));
    c = makeVisionModel(spec, 45);
    c.config["use_shared_relative_position_bias"] = true;  // the checkpoint has no shared table
    CHECK_THAT(loadErrorAt(writeBeit(c, "beit-bad")),
               Catch::Contains("encoder.relative_position_bias.relative_position_bias_table"));
    c = makeVisionModel(spec, 45);
    c.config["use_mean_pooling"] = "yes";
    CHECK_THAT(loadErrorAt(writeBeit(c, "beit-bad")),
               Catch::Contains("config.json") && Catch::Contains("'use_mean_pooling'"));
    c = makeVisionModel(spec, 45);
    const auto dir = freshDir("beit-pre");
    writeCheckpoint(dir, c);  // BeitImageProcessor's default crop is 224², this checkpoint's image_size 16
    CHECK_THAT(loadErrorAt(dir), Catch::Contains("preprocessor_config.json: 'crop_size' 224×224 differs from "
                                                 "config.json's image_size 16"));
}

}  // namespace test_beit
