// attnscope-cli attention --image on Swin: one file per stage, stage1.npy, stage2.npy
// [blocks, heads, n, n] over the stage grid, equal to the reference's block-sparse maps
// (tests/support/reference_swin.cpp) without the window padding, whose rows then sum to less
// than 1; tokens.json lists each stage's labels and the padding keys left out.
#include "cli_run.h"
#include "fixtures_swin.h"
#include "npy_read.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>

namespace test_cli_swin {

using namespace attnscope::testing;

TEST_CASE("cli attention --image on Swin writes one block-sparse map file per stage", "[cli][swin]") {
    const SwinSpec spec;  // 28², patch 4, windows of 3: grids 7×7 and 4×4, both padded, shifted
    const Checkpoint c = makeSwin(spec, 61);
    const auto dir = freshDir("cli-swin");
    writeCheckpoint(dir, c);
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "ViTImageProcessor", "size": 28, "image_mean": 0.5, "image_std": 0.25})");
    std::mt19937 rng(62);
    std::vector<std::uint8_t> pixels(28 * 28 * 3);
    for (auto& p : pixels) p = static_cast<std::uint8_t>(rng() % 256);
    const auto ppm = dir / "picture.ppm";
    {
        std::ofstream f(ppm, std::ios::binary);
        f << "P6\n28 28\n255\n";
        f.write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
    }
    const auto out = freshDir("cli-swin-out");
    const CliResult r =
            runCli({"attention", dir.string(), "--image", ppm.string(), "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("stage1.npy [2, 2, 49, 49]") && Catch::Contains("stage2.npy [2, 4, 16, 16]"));

    std::vector<double> input(3 * 28 * 28);
    for (std::size_t i = 0; i < 28 * 28; ++i)
        for (int ch = 0; ch < 3; ++ch) input[ch * 28 * 28 + i] = (pixels[i * 3 + ch] / 255.0 - 0.5) / 0.25;
    const SwinReference ref = referenceSwin(c, spec, input, 28);
    int shortRows = 0;
    for (int s = 0; s < 2; ++s) {
        const NpyArray maps = readNpy(out / ("stage" + std::to_string(s + 1) + ".npy"));
        const std::int64_t n = ref.rows[s] * ref.cols[s], H = spec.heads[s];
        REQUIRE(maps.shape == std::vector<std::int64_t>{2, H, n, n});
        double worst = 0;
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < H; ++h) {
                const std::size_t base = static_cast<std::size_t>((l * H + h) * n * n);
                for (std::int64_t i = 0; i < n * n; ++i)
                    worst = std::max(worst, std::abs(maps.values[base + i] - ref.maps[s][l][h][i]));
                for (std::int64_t i = 0; i < n; ++i) {
                    double sum = 0;
                    for (std::int64_t j = 0; j < n; ++j) sum += maps.values[base + i * n + j];
                    if (sum < 0.9999) ++shortRows;
                }
            }
        INFO("stage " << s + 1);
        CHECK(worst < 1e-5);
    }
    CHECK(shortRows > 0);  // windows over padding: their probability is left out

    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["tokens"].size() == 49);
    CHECK(tokens["tokens"][0] == "r0c0");
    CHECK(tokens["blocks"]["stage1"]["keys"].size() == 49);
    CHECK(tokens["blocks"]["stage1"]["padding_keys"].size() == 32);
    CHECK(tokens["blocks"]["stage2"]["queries"][15] == "r3c3");
    std::size_t best = 0;
    for (std::size_t i = 1; i < ref.logits.size(); ++i)
        if (ref.logits[i] > ref.logits[best]) best = i;
    CHECK(tokens["label"] == "class" + std::to_string(best));
}

}  // namespace test_cli_swin
