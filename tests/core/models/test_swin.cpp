// Swin on images against the independent reference of tests/support/reference_swin.cpp: shifted
// windows over a grid that is not a multiple of the window (padding), a grid within one window
// (no shift), the stage maps' layout (one block per stage, zero outside the windows, the padding
// as keys after the tokens), the classifier, SwinModel's final states, and bad configs.
#include "attnscope/analysis/overlay.h"
#include "attnscope/attention/window_padding.h"
#include "attnscope/io/pixel_values.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_swin.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace test_swin {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const double kMean[3] = {0.485, 0.456, 0.406}, kStd[3] = {0.229, 0.224, 0.225};  // IMAGENET_DEFAULT_*

// microsoft/swin-*'s preprocessor: ViT's processor, bicubic, ImageNet mean and std.
std::filesystem::path writeSwin(const Checkpoint& c, const std::string& name, int size) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c);
    const std::string s = std::to_string(size);
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "ViTImageProcessor", "resample": 3, "size": {"height": )" + s +
                      R"(, "width": )" + s +
                      R"(}, "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]})");
    return dir;
}

// max |map - reference| over every stage, block and head (the maps without their padding keys).
double maxStageDiff(const Trace& trace, const SwinReference& ref) {
    double worst = 0;
    for (std::size_t s = 0; s < ref.maps.size(); ++s)
        for (std::size_t l = 0; l < ref.maps[s].size(); ++l)
            for (std::size_t h = 0; h < ref.maps[s][l].size(); ++h) {
                const int b = static_cast<int>(s);
                const HeadMap map = withoutPaddingKeys(trace.map(b, static_cast<int>(l), static_cast<int>(h)),
                                                       paddingKeys(trace.blocks()[s]));
                REQUIRE(map.values.size() == ref.maps[s][l][h].size());
                for (std::size_t i = 0; i < map.values.size(); ++i)
                    worst = std::max(worst, std::abs(map.values[i] - ref.maps[s][l][h][i]));
            }
    return worst;
}

void checkProbabilities(const Trace& trace, const SwinReference& ref) {
    REQUIRE(trace.classProbabilities().size() == ref.logits.size());
    double mx = -1e300, sum = 0;
    for (double z : ref.logits) mx = std::max(mx, z);
    for (double z : ref.logits) sum += std::exp(z - mx);
    for (std::size_t i = 0; i < ref.logits.size(); ++i)
        CHECK(trace.classProbabilities()[i] == Approx(std::exp(ref.logits[i] - mx) / sum).margin(1e-6));
}

}  // namespace

TEST_CASE("Swin: shifted windows over padded grids against the reference", "[swin]") {
    const SwinSpec spec;  // 28² image, patch 4: stage grids 7×7 and 4×4, windows of 3 (padded to 9×9, 6×6)
    const Checkpoint c = makeSwin(spec, 51);
    auto model = loadCpu(writeSwin(c, "swin-shift", 28));
    CHECK(model->info().family == "swin");
    CHECK(model->info().layers == 4);
    const RgbImage image = noise(28, 52);
    auto trace = model->forwardImage(image);
    const SwinReference ref = referenceSwin(c, spec, normalised(image, kMean, kStd), 28);

    REQUIRE(trace->blocks().size() == 2);
    const BlockInfo& s1 = trace->blocks()[0];
    const BlockInfo& s2 = trace->blocks()[1];
    CHECK(s1.name == "stage1");
    CHECK(s2.name == "stage2");
    CHECK((s1.layers == 2 && s1.heads == 2 && s2.layers == 2 && s2.heads == 4));
    CHECK(s1.queryTokens.size() == 49);
    CHECK(s1.keyTokens.size() == 81);  // 49 tokens, then 32 padding positions of the 9×9 grid
    CHECK(paddingKeys(s1) == 32);
    CHECK(s1.keyTokens[49] == "[PAD r0c7]");
    CHECK(s2.queryTokens.size() == 16);
    CHECK(paddingKeys(s2) == 20);
    CHECK(trace->tokens().front() == "r0c0");
    CHECK(trace->tokens().back() == "r6c6");

    const double diff = maxStageDiff(*trace, ref);
    INFO("swin: max |map - reference| " << diff);
    CHECK(diff < 2e-6);
    checkProbabilities(*trace, ref);

    // Either part left out of the reference moves the maps far past that tolerance.
    SwinReferenceOptions noMask;
    noMask.shiftMask = false;
    CHECK(maxStageDiff(*trace, referenceSwin(c, spec, normalised(image, kMean, kStd), 28, noMask)) > 1e-2);
    SwinReferenceOptions noPadding;
    noPadding.paddingKeys = false;
    CHECK(maxStageDiff(*trace, referenceSwin(c, spec, normalised(image, kMean, kStd), 28, noPadding)) > 1e-2);
}

TEST_CASE("Swin: the stage map is block-sparse and padded windows' rows sum to less than 1", "[swin]") {
    const SwinSpec spec;
    const Checkpoint c = makeSwin(spec, 53);
    auto model = loadCpu(writeSwin(c, "swin-layout", 28));
    const RgbImage image = noise(28, 54);
    auto trace = model->forwardImage(image);
    const SwinReference ref = referenceSwin(c, spec, normalised(image, kMean, kStd), 28);
    const int n = 49, pad = paddingKeys(trace->blocks()[0]);
    for (int layer = 0; layer < 2; ++layer) {
        const HeadMap full = trace->map(0, layer, 1);
        REQUIRE((full.rows == n && full.cols == n + pad));
        const HeadMap map = withoutPaddingKeys(full, pad);
        int outside = 0, short_rows = 0;
        for (int i = 0; i < n; ++i) {
            double all = 0, tokens = 0;
            for (int j = 0; j < n + pad; ++j) all += full.at(i, j);
            for (int j = 0; j < n; ++j) {
                tokens += map.at(i, j);
                if (ref.maps[0][layer][1][i * n + j] == 0.0) {  // outside the query's window
                    CHECK(map.at(i, j) == 0.0f);
                    ++outside;
                }
            }
            CHECK(all == Approx(1.0).margin(1e-5));
            // Unshifted windows (layer 0) with padding: those of the last row and column of windows.
            const bool padded = layer == 0 && (i / 7 >= 6 || i % 7 >= 6);
            if (padded) CHECK(tokens < 0.9999);
            if (tokens < 0.9999) ++short_rows;
            if (layer == 0 && !padded) CHECK(tokens == Approx(1.0).margin(1e-5));
        }
        CHECK(outside > n * n / 2);
        // The shifted layer's windows hold padding only across regions (-100), so none is short there.
        CHECK((layer == 0 ? short_rows > 0 : short_rows == 0));
    }
}

TEST_CASE("Swin: a grid within one window is not shifted; SwinModel's final states", "[swin]") {
    SwinSpec spec;
    spec.imageSize = 26;  // not a multiple of the patch: grids 7×7 (padded pixels) and 4×4
    spec.window = 4;      // stage 2's 4×4 grid is one window, not shifted; stage 1 pads 7 to 8
    spec.prefix = false;
    spec.labels = 0;
    const Checkpoint c = makeSwin(spec, 55);
    auto model = loadCpu(writeSwin(c, "swin-base", 26));
    const auto& notes = model->info().notes;
    CHECK(std::find(notes.begin(), notes.end(), "no shift on stage 2 (grid within one window)") != notes.end());
    const RgbImage image = noise(26, 56);
    auto trace = model->forwardImage(image);
    const SwinReference ref = referenceSwin(c, spec, normalised(image, kMean, kStd), 26);
    CHECK(paddingKeys(trace->blocks()[1]) == 0);
    CHECK(trace->blocks()[0].queryTokens.size() == 49);
    const double diff = maxStageDiff(*trace, ref);
    INFO("swin: max |map - reference| " << diff);
    CHECK(diff < 2e-6);
    const int width = 16;
    REQUIRE(trace->finalHidden().size() == ref.hidden.size() * width);
    double worst = 0;
    for (std::size_t t = 0; t < ref.hidden.size(); ++t)
        for (int e = 0; e < width; ++e)
            worst = std::max(worst, std::abs(trace->finalHidden()[t * width + e] - ref.hidden[t][e]));
    INFO("max |final hidden - reference| " << worst);
    CHECK(worst < 1e-5);
}

TEST_CASE("Swin: bad configs and inputs name the file and the field", "[swin]") {
    const SwinSpec spec;
    const auto errorWith = [&](const std::function<void(Checkpoint&)>& change, int size = 28) {
        Checkpoint c = makeSwin(spec, 57);
        change(c);
        return loadErrorAt(writeSwin(c, "swin-bad", size));
    };
    CHECK_THAT(errorWith([](Checkpoint& c) { c.config["num_heads"] = {2}; }),
               Catch::Contains("config.json: 'num_heads' has 1 entries but depths has 2"));
    CHECK_THAT(errorWith([](Checkpoint& c) {
                   c.config["num_heads"] = {3, 4};
               }),
               Catch::Contains("config.json: 'num_heads' entry 0 (3) must divide stage 1's width"));
    CHECK_THAT(errorWith([](Checkpoint& c) { c.config["depths"] = "2,2"; }),
               Catch::Contains("config.json: 'depths' must be a list"));
    CHECK_THAT(errorWith([](Checkpoint& c) { c.config["use_absolute_embeddings"] = true; }),
               Catch::Contains("config.json: 'use_absolute_embeddings' true is not supported"));
    CHECK_THAT(errorWith([](Checkpoint& c) { c.config["hidden_act"] = "mish"; }),
               Catch::Contains("config.json: 'hidden_act'"));
    CHECK_THAT(errorWith([](Checkpoint& c) { c.config["window_size"] = 0; }),
               Catch::Contains("config.json: 'window_size' must be between 1"));
    CHECK_THAT(errorWith([](Checkpoint& c) { c.tensors.erase("swin.encoder.layers.0.downsample.reduction.weight"); }),
               Catch::Contains("encoder.layers.0.downsample.reduction.weight"));
    CHECK_THAT(errorWith([](Checkpoint&) {}, 16),  // grids 4×4 and 2×2: stage 2 is narrower than a window
               Catch::Contains("preprocessor_config.json: the input 16×16 gives stage 2 a 2×2 grid, smaller than "
                               "window_size 3"));
}

TEST_CASE("Swin's preprocessor (ViTFeatureExtractor, bicubic, ImageNet mean and std) against Pillow", "[swin]") {
    // microsoft/swin-tiny-patch4-window7-224's preprocessor_config.json at size 8: the golden
    // "deit strong downscale" case (tests/data/vision/make_preprocess.py: Pillow's bicubic to 8×8,
    // a crop that keeps it, mean and std 0.5) renormalised with ImageNet's mean and std.
    const auto file =
            std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA).parent_path() / "vision" / "preprocess_golden.json";
    nlohmann::json golden;
    std::ifstream(file) >> golden;
    const nlohmann::json* deit = nullptr;
    for (const auto& c : golden["cases"])
        if (c["name"] == "deit strong downscale") deit = &c;
    REQUIRE(deit);
    const auto dir = freshDir("swin-preprocess");
    writeText(dir / "preprocessor_config.json",
              R"({"crop_pct": 0.875, "do_normalize": true, "do_resize": true, "feature_extractor_type": )"
              R"("ViTFeatureExtractor", "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225], )"
              R"("resample": 3, "size": 8})");
    const RgbImage image{(*deit)["width"].get<int>(), (*deit)["height"].get<int>(),
                         (*deit)["pixels"].get<std::vector<std::uint8_t>>()};
    const PixelValues got = preprocessedPixels(dir, "ViT", image);
    REQUIRE((got.width == 8 && got.height == 8));
    const auto half = (*deit)["values"].get<std::vector<double>>();
    REQUIRE(got.values.size() == half.size());
    double worst = 0;
    for (std::size_t i = 0; i < half.size(); ++i) {
        const int channel = static_cast<int>(i / 64);
        const double want = (half[i] * 0.5 + 0.5 - kMean[channel]) / kStd[channel];
        worst = std::max(worst, std::abs(got.values[i] - want));
    }
    INFO("max |pixel - Pillow| " << worst);
    CHECK(worst < 1e-5);
}

TEST_CASE("Swin: attention over the image per stage, the rollout within a stage", "[swin]") {
    const SwinSpec spec;
    const Checkpoint c = makeSwin(spec, 58);
    auto model = loadCpu(writeSwin(c, "swin-overlay", 28));
    const RgbImage image = noise(28, 59);
    auto trace = model->forwardImage(image);
    const SwinReference ref = referenceSwin(c, spec, normalised(image, kMean, kStd), 28);

    OverlayOptions head;
    head.layer = 1;
    head.head = 1;
    head.query = 10;
    const PatchOverlay one = patchOverlay(*trace, 0, head);
    REQUIRE((one.grid.rows == 7 && one.grid.cols == 7));
    for (int p = 0; p < 49; ++p) CHECK(one.patches[p] == Approx(ref.maps[0][1][1][10 * 49 + p]).margin(1e-6));
    CHECK(one.otherWeight == 0);

    // Stage 2 (4×4 grid): Â = ½I + ½·mean over heads, rows renormalised (the padding's share is
    // lost), R = Â₁·Â₀, row 5.
    OverlayOptions rollout;
    rollout.source = OverlaySource::Rollout;
    rollout.layer = 1;
    rollout.query = 5;
    const PatchOverlay r = patchOverlay(*trace, 1, rollout);
    const int n = 16, H = spec.heads[1];
    std::vector<std::vector<double>> hat(2, std::vector<double>(n * n));
    for (int l = 0; l < 2; ++l)
        for (int i = 0; i < n; ++i) {
            double sum = 0;
            for (int j = 0; j < n; ++j) {
                double mean = 0;
                for (int h = 0; h < H; ++h) mean += ref.maps[1][l][h][i * n + j] / H;
                sum += (hat[l][i * n + j] = 0.5 * mean + (i == j ? 0.5 : 0.0));
            }
            for (int j = 0; j < n; ++j) hat[l][i * n + j] /= sum;
        }
    REQUIRE(r.patches.size() == static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
        double want = 0;
        for (int k = 0; k < n; ++k) want += hat[1][5 * n + k] * hat[0][k * n + j];
        CHECK(r.patches[j] == Approx(want).margin(1e-6));
    }
}

TEST_CASE("Swin: each key's window, and the overlay's windows and padding share", "[swin]") {
    const SwinSpec spec;  // stage 1: 7×7 tokens padded to 9×9, windows of 3, shift 1 on layer 1
    const Checkpoint c = makeSwin(spec, 61);
    auto model = loadCpu(writeSwin(c, "swin-windows", 28));
    auto trace = model->forwardImage(noise(28, 62));
    const SwinReference ref = referenceSwin(c, spec, normalised(noise(28, 62), kMean, kStd), 28);
    const BlockInfo& stage = trace->blocks()[0];
    const int n = 49, pad = paddingKeys(stage), w = 3, padded = 9;
    REQUIRE(pad == padded * padded - n);
    for (int layer = 0; layer < 2; ++layer) {
        const std::vector<int> windows = keyWindows(*trace, 0, layer);
        REQUIRE(windows.size() == static_cast<std::size_t>(n + pad));
        // modeling_swin.py: torch.roll(-shift) moves padded-grid position p to (p - shift) mod 9,
        // then window_partition cuts 3×3 windows row-major.
        const int shift = layer == 1 ? 1 : 0;
        std::vector<int> members(9, 0);
        for (int j = 0; j < n + pad; ++j) {
            int r = 0, col = 0;
            REQUIRE(std::sscanf(stage.keyTokens[static_cast<std::size_t>(j)].c_str(), j < n ? "r%dc%d" : "[PAD r%dc%d]",
                                &r, &col) == 2);
            const int rr = (r - shift + padded) % padded, cc = (col - shift + padded) % padded;
            CHECK(windows[static_cast<std::size_t>(j)] == rr / w * (padded / w) + cc / w);
            ++members[static_cast<std::size_t>(windows[static_cast<std::size_t>(j)])];
        }
        for (int m : members) CHECK(m == w * w);  // every window holds 3×3 keys, padding included
        // The map is zero across windows (the reference, written without the windows' ids).
        int across = 0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                if (windows[static_cast<std::size_t>(i)] != windows[static_cast<std::size_t>(j)]) {
                    CHECK(ref.maps[0][layer][0][i * n + j] == 0.0);
                    ++across;
                }
        CHECK(across > n * n / 2);
    }
    CHECK(keyWindows(*trace, 0, 1)[0] == 8);  // r0c0 wraps to the last window when shifted
    CHECK_THROWS_WITH(keyWindows(*trace, 0, 2), Catch::Contains("layer 2 is out of range (0..1)"));

    // The overlay of a query in a padded window: its patches' windows, and the row's share on
    // the padding, which the patches leave out.
    OverlayOptions head;
    head.layer = 0;
    head.head = 1;
    head.query = 48;  // r6c6: the last window, which holds padding
    const PatchOverlay o = patchOverlay(*trace, 0, head);
    REQUIRE(o.windows.size() == 49u);
    const std::vector<int> windows = keyWindows(*trace, 0, 0);
    CHECK(std::equal(o.windows.begin(), o.windows.end(), windows.begin()));
    double patches = 0;
    for (double p : o.patches) patches += p;
    CHECK(o.paddingWeight > 0.01);
    CHECK(patches + o.paddingWeight == Approx(1.0).margin(1e-5));
    double onPadding = 0;  // the same share from the full map's padding columns
    const HeadMap full = trace->map(0, 0, 1);
    for (int j = n; j < n + pad; ++j) onPadding += full.at(48, j);
    CHECK(o.paddingWeight == Approx(onPadding).margin(1e-7));
    head.query = 0;  // r0c0's window holds no padding
    CHECK(patchOverlay(*trace, 0, head).paddingWeight == 0.0);
}

}  // namespace test_swin
