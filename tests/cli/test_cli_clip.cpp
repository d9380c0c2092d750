// attnscope-cli attention --image F --text T on CLIP: vision.npy and text.npy equal to the
// reference's maps (tests/support/reference_clip.cpp), contributions.npy and tokens.json's
// "similarity"; the input errors exit with code 2 and one line.
#include "cli_run.h"
#include "fixtures_clip.h"
#include "npy_read.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>

namespace test_cli_clip {

using namespace attnscope::testing;

namespace {

// A random `size`² picture as a PPM file beside the model; its pixels in `pixels`.
std::filesystem::path writePicture(const std::filesystem::path& dir, int size, std::vector<std::uint8_t>& pixels) {
    std::mt19937 rng(81);
    pixels.assign(static_cast<std::size_t>(size) * size * 3, 0);
    for (auto& p : pixels) p = static_cast<std::uint8_t>(rng() % 256);
    const auto ppm = dir / "picture.ppm";
    std::ofstream f(ppm, std::ios::binary);
    f << "P6\n" << size << " " << size << "\n255\n";
    f.write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
    return ppm;
}

double maxDiff(const NpyArray& maps, const std::vector<std::vector<std::vector<double>>>& ref) {
    double worst = 0;
    std::size_t at = 0;
    for (const auto& layer : ref)
        for (const auto& head : layer)
            for (double v : head) worst = std::max(worst, std::abs(maps.values.at(at++) - v));
    REQUIRE(at == maps.values.size());
    return worst;
}

}  // namespace

TEST_CASE("cli attention --image --text on CLIP writes both towers, the similarity and the contributions",
          "[cli][clip]") {
    const ClipSpec spec;
    const Checkpoint c = makeClip(spec, 82);
    const auto dir = freshDir("cli-clip");
    writeCheckpoint(dir, c);
    writeClipTokenizer(dir);
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "CLIPImageProcessor", "do_resize": false, "crop_size": 16})");
    std::vector<std::uint8_t> pixels;
    const auto ppm = writePicture(dir, 16, pixels);
    const auto out = freshDir("cli-clip-out");
    const CliResult r = runCli({"attention", dir.string(), "--image", ppm.string(), "--text", "The  Cat", "--out",
                                out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("vision.npy [2, 3, 17, 17]") && Catch::Contains("text.npy [2, 2, 4, 4]") &&
                              Catch::Contains("contributions.npy [3, 16]"));

    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    const std::vector<long long> ids = tokens["ids"].get<std::vector<long long>>();
    CHECK(ids == std::vector<long long>{62, 53, 55, 63});  // lowercased, the</w> cat</w>, with the markers
    std::vector<double> input(3 * 16 * 16);
    const double mean[3] = {0.48145466, 0.4578275, 0.40821073}, sd[3] = {0.26862954, 0.26130258, 0.27577711};
    for (std::size_t i = 0; i < 16 * 16; ++i)
        for (int ch = 0; ch < 3; ++ch) input[ch * 256 + i] = (pixels[i * 3 + ch] / 255.0 - mean[ch]) / sd[ch];
    const ImageTextReference ref = referenceClip(c, spec, input, ids);

    const NpyArray vision = readNpy(out / "vision.npy"), text = readNpy(out / "text.npy");
    CHECK(vision.shape == std::vector<std::int64_t>{2, 3, 17, 17});
    CHECK(text.shape == std::vector<std::int64_t>{2, 2, 4, 4});
    CHECK(maxDiff(vision, ref.vision) < 1e-5);
    CHECK(maxDiff(text, ref.text) < 1e-5);
    CHECK(tokens["blocks"]["vision"]["queries"][0] == "[CLS]");
    CHECK(tokens["blocks"]["text"]["queries"].size() == 4);

    const auto& sim = tokens["similarity"];
    CHECK(std::abs(sim["cosine"].get<double>() - ref.cosine) < 1e-5);
    CHECK(std::abs(sim["logit"].get<double>() - ref.logit) < 1e-4);
    const NpyArray contributions = readNpy(out / "contributions.npy");
    REQUIRE(contributions.shape == std::vector<std::int64_t>{3, 16});
    double sum = 0, worst = 0;
    for (int h = 0; h < 3; ++h)
        for (int j = 0; j < 16; ++j) {
            sum += contributions.values[h * 16 + j];
            worst = std::max(worst, std::abs(contributions.values[h * 16 + j] - ref.contributions[h][j]));
        }
    CHECK(worst < 1e-5);
    CHECK(std::abs(sum + sim["remainder"].get<double>() - ref.logit) < 1e-4);
    CHECK(sim["contributions"]["positions"][0] == "r0c0");
    CHECK(sim["remainder_parts"].size() == 5);

    // --mask-heads on a tower re-runs both and reports the logit's change.
    const auto masked = freshDir("cli-clip-masked");
    const CliResult m = runCli({"attention", dir.string(), "--image", ppm.string(), "--text", "the cat", "--mask-heads",
                                "vision:1:0", "--out", masked.string(), "--device", "cpu"});
    INFO(m.err);
    REQUIRE(m.code == 0);
    CHECK_THAT(m.out, Catch::Contains("image-text logit"));
    const auto change = nlohmann::json::parse(slurpFile(masked / "output_change.json"));
    CHECK(change["kind"] == "similarity");
    CHECK(std::abs(change["original_logit"].get<double>() - ref.logit) < 1e-4);
    CHECK(change["changed_logit"] != change["original_logit"]);
}

TEST_CASE("cli attention on CLIP refuses a lone image or text and a text longer than its positions", "[cli][clip]") {
    const ClipSpec spec;
    const Checkpoint c = makeClip(spec, 83);
    const auto dir = freshDir("cli-clip-errors");
    writeCheckpoint(dir, c);
    writeClipTokenizer(dir);
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "CLIPImageProcessor", "do_resize": false, "crop_size": 16})");
    std::vector<std::uint8_t> pixels;
    const auto ppm = writePicture(dir, 16, pixels);
    const auto out = (freshDir("cli-clip-errors-out") / "x").string();
    const auto oneLine = [](const CliResult& r) {
        return r.err.rfind("error: ", 0) == 0 && r.err.find('\n') == r.err.size() - 1;
    };
    const CliResult noText = runCli({"attention", dir.string(), "--image", ppm.string(), "--out", out});
    CHECK(noText.code == 2);
    CHECK(oneLine(noText));
    CHECK_THAT(noText.err, Catch::Contains("clip takes an image and a text together"));
    const CliResult noImage = runCli({"attention", dir.string(), "--text", "the cat", "--out", out});
    CHECK(noImage.code == 2);
    CHECK(oneLine(noImage));
    const CliResult tooLong = runCli(
            {"attention", dir.string(), "--image", ppm.string(), "--text", "a b c d e f g h i j k", "--out", out});
    CHECK(tooLong.code == 2);
    CHECK(oneLine(tooLong));
    CHECK_THAT(tooLong.err, Catch::Contains("the text has 13 tokens; clip's text tower has 12 positions"));
    const CliResult padded = runCli({"attention", dir.string(), "--image", ppm.string(), "--text", "the cat",
                                     "--pad-text-to", "8", "--out", out});
    CHECK(padded.code == 2);
    CHECK_THAT(padded.err, Catch::Contains("--pad-text-to pads siglip's text; clip's text is used as tokenized"));
    CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("cli attention --image --ids on SigLIP writes the probe, pads with --pad-text-to and refuses a long text",
          "[cli][siglip]") {
    ClipSpec spec;
    spec.type = "siglip";
    spec.visionAct = spec.textAct = "gelu_pytorch_tanh";
    spec.scalarShape = false;
    const Checkpoint c = makeClip(spec, 84);
    const auto dir = freshDir("cli-siglip");
    writeCheckpoint(dir, c);
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "SiglipImageProcessor", "do_resize": false, "size": 16})");
    std::vector<std::uint8_t> pixels;
    const auto ppm = writePicture(dir, 16, pixels);
    const auto out = freshDir("cli-siglip-out");
    const CliResult r = runCli({"attention", dir.string(), "--image", ppm.string(), "--ids", "5,33,21", "--pad-text-to",
                                "6", "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("probe.npy [1, 3, 1, 16]") && Catch::Contains("text.npy [2, 2, 6, 6]"));
    std::vector<double> input(3 * 16 * 16);
    for (std::size_t i = 0; i < 16 * 16; ++i)
        for (int ch = 0; ch < 3; ++ch) input[ch * 256 + i] = (pixels[i * 3 + ch] / 255.0 - 0.5) / 0.5;
    const ImageTextReference ref = referenceClip(c, spec, input, {5, 33, 21, 1, 1, 1});
    const NpyArray probe = readNpy(out / "probe.npy");
    REQUIRE(probe.shape == std::vector<std::int64_t>{1, 3, 1, 16});
    double worst = 0;
    for (int h = 0; h < 3; ++h)
        for (int j = 0; j < 16; ++j) worst = std::max(worst, std::abs(probe.values[h * 16 + j] - ref.probe[h][j]));
    CHECK(worst < 1e-5);
    CHECK(maxDiff(readNpy(out / "vision.npy"), ref.vision) < 1e-5);
    CHECK(maxDiff(readNpy(out / "text.npy"), ref.text) < 1e-5);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["ids"] == nlohmann::json::array({5, 33, 21, 1, 1, 1}));
    const auto& sim = tokens["similarity"];
    CHECK(std::abs(sim["logit"].get<double>() - ref.logit) < 1e-4);
    CHECK(sim["logit_bias"].get<double>() == Approx(-0.75));
    CHECK(sim["contributions"]["block"] == "probe");
    const NpyArray contributions = readNpy(out / "contributions.npy");
    REQUIRE(contributions.shape == std::vector<std::int64_t>{3, 16});
    double sum = 0;
    for (float v : contributions.values) sum += v;
    CHECK(std::abs(sum + sim["remainder"].get<double>() - ref.logit) < 1e-4);

    const auto bad = (freshDir("cli-siglip-bad") / "x").string();
    const CliResult tooShort = runCli({"attention", dir.string(), "--image", ppm.string(), "--ids", "5,33,21",
                                       "--pad-text-to", "2", "--out", bad});
    CHECK(tooShort.code == 2);
    CHECK_THAT(tooShort.err, Catch::Contains("the text has 3 tokens, more than --pad-text-to 2"));
    const CliResult noImage = runCli({"attention", dir.string(), "--ids", "5,33", "--out", bad});
    CHECK(noImage.code == 2);
    CHECK_THAT(noImage.err, Catch::Contains("siglip takes an image and a text together"));
}

}  // namespace test_cli_clip
