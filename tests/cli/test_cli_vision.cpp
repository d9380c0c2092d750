// attnscope-cli on DeiT, DINOv2 with registers and BEiT: attention --image writes the maps of the
// reference (tests/support/reference_vision.cpp) and tokens.json names [DIST] and the registers;
// the gradient sources label the same rows.
#include "cli_run.h"
#include "fixtures_vision.h"
#include "npy_read.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>

namespace test_cli_vision {

using namespace attnscope::testing;

namespace {

struct VisionCase {
    VisionModelSpec spec;
    std::string processor;             // preprocessor_config.json
    std::vector<double> mean, std;     // its normalisation
    std::vector<std::string> special;  // the tokens before r0c0
};

std::filesystem::path writePpm(const std::filesystem::path& dir, int size, unsigned seed,
                               std::vector<std::uint8_t>& pixels) {
    std::mt19937 rng(seed);
    pixels.assign(static_cast<std::size_t>(size) * size * 3, 0);
    for (auto& p : pixels) p = static_cast<std::uint8_t>(rng() % 256);
    const auto ppm = dir / "picture.ppm";
    std::ofstream f(ppm, std::ios::binary);
    f << "P6\n" << size << " " << size << "\n255\n";
    f.write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
    return ppm;
}

}  // namespace

TEST_CASE("cli attention --image runs DeiT, DINOv2 with registers and BEiT", "[cli][deit][dinov2][beit]") {
    VisionCase deit{{}, R"({"size": 16, "crop_size": 16})", {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {"[CLS]", "[DIST]"}};
    VisionCase dino{{},
                    R"({"do_resize": false, "crop_size": 24, "image_mean": 0.4, "image_std": 0.3})",
                    {0.4, 0.4, 0.4},
                    {0.3, 0.3, 0.3},
                    {"[CLS]", "[REG 1]", "[REG 2]"}};
    dino.spec.type = "dinov2_with_registers";
    VisionCase beit{{}, R"({"size": 16, "crop_size": 16})", {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {"[CLS]"}};
    beit.spec.type = "beit";
    beit.spec.sharedBias = true;
    for (const VisionCase& v : {deit, dino, beit}) {
        INFO(v.spec.type);
        const Checkpoint c = makeVisionModel(v.spec, 21);
        const auto dir = freshDir("cli-" + v.spec.type);
        writeCheckpoint(dir, c);
        writeText(dir / "preprocessor_config.json", v.processor);
        const int size = v.spec.type == "dinov2_with_registers" ? 24 : 16, grid = size / 4;
        std::vector<std::uint8_t> pixels;
        const auto ppm = writePpm(dir, size, 22, pixels);
        const auto out = freshDir("cli-" + v.spec.type + "-out");
        const CliResult r =
                runCli({"attention", dir.string(), "--image", ppm.string(), "--out", out.string(), "--device", "cpu"});
        INFO(r.err);
        REQUIRE(r.code == 0);
        const int n = static_cast<int>(v.special.size()) + grid * grid;
        const NpyArray maps = readNpy(out / "attention.npy");
        REQUIRE(maps.shape == std::vector<std::int64_t>{2, 3, n, n});
        const std::size_t plane = static_cast<std::size_t>(size) * size;
        std::vector<double> input(3 * plane);
        for (std::size_t i = 0; i < plane; ++i)
            for (int ch = 0; ch < 3; ++ch)
                input[ch * plane + i] = (pixels[i * 3 + ch] / 255.0 - v.mean[ch]) / v.std[ch];
        const Reference ref = referenceVisionModel(c, v.spec, input, size);
        double worst = 0;
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 3; ++h)
                for (int i = 0; i < n * n; ++i)
                    worst = std::max(worst, std::abs(maps.values[(l * 3 + h) * n * n + i] - ref.probs[l][h][i]));
        CHECK(worst < 1e-5);
        const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
        for (std::size_t t = 0; t < v.special.size(); ++t) CHECK(tokens["tokens"][t] == v.special[t]);
        CHECK(tokens["tokens"][v.special.size()] == "r0c0");
        CHECK(tokens["tokens"][n - 1] == "r" + std::to_string(grid - 1) + "c" + std::to_string(grid - 1));
        std::size_t best = 0;
        for (std::size_t i = 1; i < ref.logits.size(); ++i)
            if (ref.logits[i] > ref.logits[best]) best = i;
        CHECK(tokens["label"] == "class" + std::to_string(best));

        // The gradient sources' rows carry the same labels.
        const auto grad = freshDir("cli-" + v.spec.type + "-grad");
        const CliResult g = runCli({"attention", dir.string(), "--image", ppm.string(), "--source", "grad-weighted",
                                    "--out", grad.string(), "--device", "cpu"});
        INFO(g.err);
        REQUIRE(g.code == 0);
        const auto gradTokens = nlohmann::json::parse(slurpFile(grad / "tokens.json"));
        CHECK(gradTokens["tokens"] == tokens["tokens"]);
        CHECK(readNpy(grad / "attention.npy").shape == std::vector<std::int64_t>{2, 3, n, n});
    }
}

}  // namespace test_cli_vision
