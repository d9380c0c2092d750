// The Image tab's "contribution to the text match" for CLIP and SigLIP (similarityOverlay): each
// patch's contribution to the image–text logit summed over the heads, against the independent
// reference's per-head contributions (tests/support/reference_clip.cpp); the patches plus the
// overlay's remainder give the logit; other models are refused.
#include "attnscope/analysis/overlay.h"
#include "attnscope/attention/image_text.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_clip.h"
#include "fixtures_vision.h"

#include <cmath>

namespace test_overlay_similarity {

using namespace attnscope;
using namespace attnscope::testing;

TEST_CASE("The overlay of each patch's contribution to the image–text logit", "[overlay][clip][siglip]") {
    for (const std::string type : {"clip", "siglip"}) {
        INFO(type);
        ClipSpec spec;
        spec.type = type;
        spec.scalarShape = type == "clip";  // SiglipModel's logit_scale and logit_bias are [1]
        const Checkpoint c = makeClip(spec, 81);
        const auto dir = freshDir("overlay-similarity-" + type);
        writeCheckpoint(dir, c);
        writeText(dir / "preprocessor_config.json",
                  type == "clip"
                          ? R"({"image_processor_type": "CLIPImageProcessor", "do_resize": false, "crop_size": 16})"
                          : R"({"image_processor_type": "SiglipImageProcessor", "do_resize": false, "size": 16})");
        auto model = loadCpu(dir);
        const RgbImage image = noise(16, 82);
        TextInput text;
        text.ids = {62, 5, 17, 63};
        auto trace = model->forwardImageText(image, text);
        const ImageTextScore& score = traceImageText(*trace);
        REQUIRE(score.present);

        // Pixels as the processor gives them, for the reference.
        const bool clip = type == "clip";
        const double clipMean[3] = {0.48145466, 0.4578275, 0.40821073},
                     clipStd[3] = {0.26862954, 0.26130258, 0.27577711};
        const double half[3] = {0.5, 0.5, 0.5};
        const std::vector<double> pixels = normalised(image, clip ? clipMean : half, clip ? clipStd : half);
        const ImageTextReference ref = referenceClip(c, spec, pixels, {62, 5, 17, 63});

        const PatchOverlay all = similarityOverlay(*trace);
        CHECK(all.signedValues);
        CHECK(all.grid.rows == 4);
        CHECK(all.grid.cols == 4);
        REQUIRE(all.patches.size() == 16u);
        double sum = 0, largest = 0;
        for (int p = 0; p < 16; ++p) {
            double want = 0;
            for (const auto& head : ref.contributions) want += head[static_cast<std::size_t>(p)];
            CHECK(all.patches[static_cast<std::size_t>(p)] == Approx(want).margin(1e-4));
            sum += all.patches[static_cast<std::size_t>(p)];
            largest = std::max(largest, std::abs(all.patches[static_cast<std::size_t>(p)]));
        }
        CHECK(all.maxPatch == Approx(largest).margin(1e-12));
        CHECK(sum + all.otherWeight == Approx(score.logit).margin(1e-9));
        CHECK(all.otherWeight == Approx(score.remainder()).margin(1e-6));
        CHECK(std::abs(ref.logit - score.logit) < 1e-4);

        // One head's; the Image tab's source gives the sum.
        const PatchOverlay one = similarityOverlay(*trace, 1);
        for (int p = 0; p < 16; ++p)
            CHECK(one.patches[static_cast<std::size_t>(p)] ==
                  Approx(ref.contributions[1][static_cast<std::size_t>(p)]).margin(1e-4));
        OverlayOptions o;
        o.source = OverlaySource::Similarity;
        CHECK(patchOverlay(*trace, 1, o).patches == all.patches);
        CHECK_THROWS_WITH(similarityOverlay(*trace, score.heads),
                          Catch::Contains("head " + std::to_string(score.heads) + " is out of range"));
    }

    // A model without a text tower.
    VisionModelSpec vit;
    vit.type = "deit";
    const auto dir = freshDir("overlay-similarity-deit");
    writeCheckpoint(dir, makeVisionModel(vit, 83));
    writeText(dir / "preprocessor_config.json", R"({"size": 16, "crop_size": 16})");
    RgbImage image{16, 16, std::vector<std::uint8_t>(16 * 16 * 3, 100)};
    auto trace = loadCpu(dir)->forwardImage(image);
    CHECK_THROWS_WITH(similarityOverlay(*trace), Catch::Contains("needs an image–text model (CLIP, SigLIP)"));
}

}  // namespace test_overlay_similarity
