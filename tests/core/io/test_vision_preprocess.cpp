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

using namespace attnscope;
using namespace attnscope::testing;

TEST_CASE("Image processors give Pillow's golden pixel values", "[vision][preprocess]") {
    const auto file =
            std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA).parent_path() / "vision" / "preprocess_golden.json";
    nlohmann::json golden;
    std::ifstream(file) >> golden;
    REQUIRE(golden["cases"].size() == 7);
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
