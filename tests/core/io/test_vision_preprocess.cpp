// The image processors (DeiT, BEiT, Bit for DINOv2, ViT) against Pillow: tests/data/vision/make_preprocess.py
// ran Hugging Face's steps (PIL resize, shortest edge, center crop with padding, rescale,
// normalise) on small random images and stored the pixel values.
#include "attnscope/io/pixel_values.h"
#include "attnscope/runtime/error.h"
#include "family_fixtures.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace test_vision_preprocess {

using namespace attnscope;
using namespace attnscope::testing;

TEST_CASE("Image processors give Pillow's golden pixel values", "[vision][preprocess]") {
    const auto file =
            std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA).parent_path() / "vision" / "preprocess_golden.json";
    nlohmann::json golden;
    std::ifstream(file) >> golden;
    REQUIRE(golden["cases"].size() == 11);
    for (const auto& c : golden["cases"]) {
        INFO(c["name"].get<std::string>());
        const auto dir = freshDir("preprocess");
        writeText(dir / "preprocessor_config.json", c["config"].dump());
        RgbImage image{c["width"].get<int>(), c["height"].get<int>(), c["pixels"].get<std::vector<std::uint8_t>>()};
        const PixelValues got = preprocessedPixels(dir, "ViT", image);
        const auto shape = c["shape"].get<std::vector<int>>();
        REQUIRE(got.height == shape[1]);
        REQUIRE(got.width == shape[2]);
        const auto want = c["values"].get<std::vector<double>>();
        REQUIRE(got.values.size() == want.size());
        double worst = 0;
        for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got.values[i] - want[i]));
        CHECK(worst < 1e-5);
    }
}

TEST_CASE("Processor defaults come from the class the file names, else the family's", "[vision][preprocess]") {
    const auto dir = freshDir("preprocess-defaults");
    RgbImage image{300, 260, std::vector<std::uint8_t>(300 * 260 * 3, 128)};
    // No file: the family's processor. DeiT: 256² then a 224² crop; Bit: shortest edge 224, crop 224².
    PixelValues p = preprocessedPixels(dir, "DeiT", image);
    CHECK((p.width == 224 && p.height == 224));
    CHECK(p.values[0] == Approx((128 / 255.0 - 0.5) / 0.5).margin(1e-6));
    p = preprocessedPixels(dir, "Bit", image);
    CHECK((p.width == 224 && p.height == 224));
    CHECK(p.values[0] == Approx((128 / 255.0 - 0.48145466) / 0.26862954).margin(1e-6));
    // A file naming BitImageProcessor keeps Bit's defaults whatever the family.
    writeText(dir / "preprocessor_config.json", R"({"image_processor_type": "BitImageProcessor", "crop_size": 100})");
    p = preprocessedPixels(dir, "DeiT", image);
    CHECK((p.width == 100 && p.height == 100));
    CHECK(p.values[0] == Approx((128 / 255.0 - 0.48145466) / 0.26862954).margin(1e-6));
    // DeiT's processor reads one number as a square and refuses a shortest edge.
    writeText(dir / "preprocessor_config.json", R"({"size": {"shortest_edge": 20}})");
    CHECK_THROWS_WITH(preprocessedPixels(dir, "DeiT", image),
                      Catch::Contains("preprocessor_config.json: 'size' must be {\"height\": H, \"width\": W} or a "
                                      "positive integer"));
    writeText(dir / "preprocessor_config.json", R"({"crop_size": [1, 2]})");
    CHECK_THROWS_WITH(preprocessedPixels(dir, "Bit", image), Catch::Contains("'crop_size' must be"));
    writeText(dir / "preprocessor_config.json", R"({"do_center_crop": "yes"})");
    CHECK_THROWS_WITH(preprocessedPixels(dir, "Bit", image), Catch::Contains("'do_center_crop'"));
}

TEST_CASE("CLIP's and SigLIP's processors keep their classes' defaults", "[vision][preprocess][clip][siglip]") {
    // Pillow's goldens above cover Bit's and DeiT's paths; CLIPImageProcessor's defaults are Bit's
    // (bicubic shortest edge 224, crop 224², OpenAI's mean and std) and SiglipImageProcessor's are
    // DeiT's resize without its crop (bicubic to 224², not keeping the aspect ratio; mean and std 0.5).
    RgbImage image{300, 260, std::vector<std::uint8_t>(300 * 260 * 3)};
    for (std::size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<std::uint8_t>((i * 7) % 251);
    const auto none = freshDir("preprocess-clip-none");
    const PixelValues clip = preprocessedPixels(none, "CLIP", image);
    CHECK((clip.width == 224 && clip.height == 224));
    CHECK(clip.values == preprocessedPixels(none, "Bit", image).values);
    const auto named = freshDir("preprocess-clip-named");
    writeText(named / "preprocessor_config.json",
              R"({"image_processor_type": "CLIPImageProcessor", "size": 100, "crop_size": 80})");
    const PixelValues small = preprocessedPixels(named, "ViT", image);  // the file's class wins
    CHECK((small.width == 80 && small.height == 80));
    writeText(named / "preprocessor_config.json",
              R"({"image_processor_type": "BitImageProcessor", "size": {"shortest_edge": 100}, "crop_size": 80})");
    CHECK(small.values == preprocessedPixels(named, "ViT", image).values);

    const PixelValues siglip = preprocessedPixels(none, "Siglip", image);
    CHECK((siglip.width == 224 && siglip.height == 224));
    const auto deit = freshDir("preprocess-siglip-deit");
    writeText(deit / "preprocessor_config.json",
              R"({"image_processor_type": "DeiTImageProcessor", "size": 224, "do_center_crop": false})");
    CHECK(siglip.values == preprocessedPixels(deit, "ViT", image).values);
    writeText(deit / "preprocessor_config.json",
              R"({"image_processor_type": "SiglipImageProcessor", "size": {"height": 30, "width": 40}})");
    const PixelValues wide = preprocessedPixels(deit, "ViT", image);
    CHECK((wide.width == 40 && wide.height == 30));
}

}  // namespace test_vision_preprocess
