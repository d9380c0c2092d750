// Attention over the image for DeiT and DINOv2 with registers: [DIST] and the registers are not
// patches (PatchGrid::others), and the rollout row over the patches equals a full rollout product
// of the reference's maps (tests/support/reference_vision.cpp) written out here.
#include "attnscope/analysis/overlay.h"
#include "family_checks.h"
#include "fixtures_vision.h"

#include <cmath>

namespace test_overlay_vision {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// Row `query` of R = Â_{L-1} ··· Â_0 with Â = (½I + ½·mean of the heads) per layer (rows sum to 1).
std::vector<double> rolloutReference(const Reference& ref, int n, int query) {
    std::vector<double> row(n, 0.0);
    row[query] = 1;
    for (std::size_t l = ref.probs.size(); l-- > 0;) {
        std::vector<double> next(n, 0.0);
        const auto& heads = ref.probs[l];
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                double a = 0;
                for (const auto& h : heads) a += h[static_cast<std::size_t>(i) * n + j] / heads.size();
                next[j] += row[i] * (0.5 * a + (i == j ? 0.5 : 0.0));
            }
        row = next;
    }
    return row;
}

}  // namespace

TEST_CASE("Overlays of DeiT and DINOv2 with registers keep [DIST] and [REG i] out of the patch grid",
          "[overlay][deit][dinov2]") {
    for (const std::string type : {"deit", "dinov2_with_registers"}) {
        INFO(type);
        VisionModelSpec spec;
        spec.type = type;
        const Checkpoint c = makeVisionModel(spec, 31);
        const auto dir = freshDir("overlay-" + type);
        writeCheckpoint(dir, c);
        writeText(dir / "preprocessor_config.json",
                  type == "deit" ? R"({"size": 16, "crop_size": 16, "image_mean": 0, "image_std": 1})"
                                 : R"({"do_resize": false, "crop_size": 16, "image_mean": 0, "image_std": 1})");
        auto model = loadCpu(dir);
        std::mt19937 rng(32);
        RgbImage image{16, 16, std::vector<std::uint8_t>(16 * 16 * 3)};
        for (auto& p : image.pixels) p = static_cast<std::uint8_t>(rng() % 256);
        std::vector<double> pixels(3 * 256);
        for (int i = 0; i < 256; ++i)
            for (int ch = 0; ch < 3; ++ch) pixels[ch * 256 + i] = image.pixels[i * 3 + ch] / 255.0;
        auto trace = model->forwardImage(image);
        const Reference ref = referenceVisionModel(c, spec, pixels, 16);
        const int special = type == "deit" ? 2 : 3, n = special + 16;

        OverlayOptions o;
        o.source = OverlaySource::Rollout;
        o.layer = 1;
        const PatchOverlay overlay = patchOverlay(*trace, 0, o);
        CHECK(overlay.grid.rows == 4);
        CHECK(overlay.grid.cols == 4);
        std::vector<int> others;
        for (int t = 0; t < special; ++t) others.push_back(t);
        CHECK(overlay.grid.others == others);
        CHECK(overlay.grid.positions.front() == special);
        const std::vector<double> want = rolloutReference(ref, n, 0);
        double other = 0, maxPatch = 0;
        for (int t = 0; t < special; ++t) other += want[t];
        for (int p = 0; p < 16; ++p) {
            CHECK(overlay.patches[p] == Approx(want[special + p]).margin(1e-6));
            maxPatch = std::max(maxPatch, want[special + p]);
        }
        CHECK(overlay.otherWeight == Approx(other).margin(1e-6));
        CHECK(overlay.maxPatch == Approx(maxPatch).margin(1e-6));  // the display scale: patches only
        CHECK(other > 0.01);  // the special tokens hold weight the patch scale leaves out

        // Patches only: the head's [CLS] row renormalised over the patches (the reference's row
        // divided by its patches' sum); the special tokens' weight stays as the row's own.
        OverlayOptions head;
        head.layer = 1;
        head.head = 1;
        head.patchesOnly = true;
        const PatchOverlay only = patchOverlay(*trace, 0, head);
        CHECK(only.renormalised);
        double patchSum = 0, specialSum = 0, best = 0;
        for (int p = 0; p < 16; ++p) patchSum += ref.probs[1][1][special + p];
        for (int t = 0; t < special; ++t) specialSum += ref.probs[1][1][t];
        for (int p = 0; p < 16; ++p) {
            CHECK(only.patches[p] == Approx(ref.probs[1][1][special + p] / patchSum).margin(1e-6));
            best = std::max(best, ref.probs[1][1][special + p] / patchSum);
        }
        CHECK(only.maxPatch == Approx(best).margin(1e-6));
        CHECK(only.otherWeight == Approx(specialSum).margin(1e-6));
        head.patchesOnly = false;
        CHECK_FALSE(patchOverlay(*trace, 0, head).renormalised);
        // A map source's row (mapRowOverlay) lays out the same way.
        const PatchOverlay fromMap = mapRowOverlay(*trace, 0, trace->map(0, 1, 1), 0);
        CHECK(fromMap.patches == patchOverlay(*trace, 0, head).patches);
        CHECK(overPatchesOnly(fromMap).patches == only.patches);
        CHECK_THROWS_WITH(mapRowOverlay(*trace, 0, trace->map(0, 1, 1), n),
                          Catch::Contains("query " + std::to_string(n) + " is outside the map's"));
    }
}

}  // namespace test_overlay_vision
