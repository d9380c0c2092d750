// attnscope-cli on the BERT, Llama and ViT families: info, attention with ids, --image.
#include "cli_run.h"
#include "family_fixtures.h"
#include "npy_read.h"
#include "png_write.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>

namespace test_cli_families {

using namespace attnscope::testing;

namespace {

// A 16×16 RGB picture of random pixels.
std::vector<std::uint8_t> randomPixels(unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::uint8_t> pixels(16 * 16 * 3);
    for (auto& p : pixels) p = static_cast<std::uint8_t>(rng() % 256);
    return pixels;
}

// The ViT fixture's input for those pixels: channel-major, rescaled to [0, 1], normalised with
// mean 0.5 and std 0.5 (the defaults, as the fixture has no preprocessor_config.json).
std::vector<double> vitInput(const std::vector<std::uint8_t>& pixels) {
    std::vector<double> input(3 * 256);
    for (int i = 0; i < 256; ++i)
        for (int ch = 0; ch < 3; ++ch) input[ch * 256 + i] = (pixels[i * 3 + ch] / 255.0 - 0.5) / 0.5;
    return input;
}

}  // namespace

TEST_CASE("cli info names grouped-query heads", "[cli][llama]") {
    const auto dir = freshDir("cli-llama");
    writeCheckpoint(dir, makeLlama(LlamaSpec{}, 1), WriteOptions{"BF16", 2});
    const CliResult r = runCli({"info", dir.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("family:        llama"));
    CHECK_THAT(r.out, Catch::Contains("heads:         4 (2 key/value heads)"));
    CHECK_THAT(r.out, Catch::Contains("dtype:         BF16"));
}

TEST_CASE("cli attention on BERT and Llama writes every head", "[cli][bert][llama]") {
    const auto bert = freshDir("cli-bert");
    writeCheckpoint(bert, makeBert(BertSpec{}, 2));
    const auto out = freshDir("cli-bert-out");
    CliResult r = runCli({"attention", bert.string(), "--ids", "2,7,9,3", "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(readNpy(out / "attention.npy").shape == std::vector<std::int64_t>{2, 3, 4, 4});

    // Token types and padding: the padded keys get no attention.
    r = runCli({"attention", bert.string(), "--ids", "2,7,9,3", "--type-ids", "0,0,1,1", "--attend", "1,1,1,0", "--out",
                out.string(), "--device", "cpu"});
    REQUIRE(r.code == 0);
    const NpyArray padded = readNpy(out / "attention.npy");
    for (std::size_t row = 0; row < padded.values.size() / 4; ++row) REQUIRE(padded.values[row * 4 + 3] == 0.0f);
    requireCliInputError(
            runCli({"attention", bert.string(), "--ids", "2,7", "--type-ids", "0,x", "--out", out.string()}),
            "--type-ids: 'x' is not a token type");
    requireCliInputError(runCli({"attention", bert.string(), "--ids", "2,7", "--attend", "1,2", "--out", out.string()}),
                         "--attend: values must be 0 (padding) or 1");
    requireCliInputError(
            runCli({"attention", bert.string(), "--ids", "2,7", "--type-ids", "0,5", "--out", out.string()}),
            "token type 5 at position 1 is outside [0, 2)");

    const auto llama = freshDir("cli-llama2");
    writeCheckpoint(llama, makeLlama(LlamaSpec{}, 3));
    r = runCli({"attention", llama.string(), "--ids", "1,2,3", "--out", out.string(), "--device", "cpu"});
    REQUIRE(r.code == 0);
    CHECK(readNpy(out / "attention.npy").shape == std::vector<std::int64_t>{2, 4, 3, 3});  // every query head
    requireCliInputError(
            runCli({"attention", llama.string(), "--image", (llama / "config.json").string(), "--out", out.string()}),
            "config.json");
}

TEST_CASE("cli attention --image runs ViT on a PNG file", "[cli][vit]") {
    VitSpec spec;
    const Checkpoint c = makeVit(spec, 4);
    const auto dir = freshDir("cli-vit");
    writeCheckpoint(dir, c);
    const std::vector<std::uint8_t> pixels = randomPixels(5);
    const auto png = dir / "picture.png";
    writePng(png, 16, 16, pixels);
    const auto out = freshDir("cli-vit-out");
#ifdef ATTNSCOPE_CLI_HAS_QT
    const CliResult r =
            runCli({"attention", dir.string(), "--image", png.string(), "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray maps = readNpy(out / "attention.npy");
    REQUIRE(maps.shape == std::vector<std::int64_t>{2, 3, 17, 17});
    const Reference ref = referenceVit(c, spec, vitInput(pixels));
    double worst = 0;
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 3; ++h)
            for (int i = 0; i < 17 * 17; ++i)
                worst = std::max(worst, std::abs(maps.values[(l * 3 + h) * 289 + i] - ref.probs[l][h][i]));
    CHECK(worst < 1e-5);  // float32 forward vs the double reference; BLAS kernels differ by CPU
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["tokens"][0] == "[CLS]");
    CHECK(tokens["tokens"][16] == "r3c3");
    std::size_t best = 0;
    for (std::size_t i = 1; i < ref.logits.size(); ++i)
        if (ref.logits[i] > ref.logits[best]) best = i;
    CHECK(tokens["label"] == "class" + std::to_string(best));

    requireCliInputError(
            runCli({"attention", dir.string(), "--image", (dir / "config.json").string(), "--out", out.string()}),
            "config.json: cannot be read as an image");
#else
    requireCliInputError(runCli({"attention", dir.string(), "--image", png.string(), "--out", out.string()}),
                         "built without Qt (ATTNSCOPE_BUILD_UI=OFF) and reads only binary PPM (P6) images");
#endif
    // Binary PPM is read with or without Qt; the maps are the PNG's (same pixels).
    const auto ppm = dir / "picture.ppm";
    {
        std::ofstream f(ppm, std::ios::binary);
        f << "P6\n# made by the test\n16 16\n255\n";
        f.write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
    }
    const auto outPpm = freshDir("cli-vit-ppm");
    const CliResult p =
            runCli({"attention", dir.string(), "--image", ppm.string(), "--out", outPpm.string(), "--device", "cpu"});
    INFO(p.err);
    REQUIRE(p.code == 0);
#ifdef ATTNSCOPE_CLI_HAS_QT
    CHECK(readNpy(outPpm / "attention.npy").values == maps.values);
#endif
    writeText(dir / "broken.ppm", "P6\n16 16\n255\nabc");
    requireCliInputError(
            runCli({"attention", dir.string(), "--image", (dir / "broken.ppm").string(), "--out", out.string()}),
            "broken.ppm: not a binary PPM image (pixel data truncated)");
    requireCliInputError(
            runCli({"attention", dir.string(), "--image", (dir / "nothing.png").string(), "--out", out.string()}),
            "nothing.png: no such image file");
    const CliResult usage = runCli({"attention", dir.string(), "--ids", "1,2", "--out", out.string()});
    CHECK(usage.code == 1);
    CHECK_THAT(usage.err, Catch::Contains("vit models take an image: --image FILE"));
}

TEST_CASE("cli metrics and export take --image like attention", "[cli][vit]") {
    VitSpec spec;
    const Checkpoint c = makeVit(spec, 6);
    const auto dir = freshDir("cli-vit-lab");
    writeCheckpoint(dir, c);
    const std::vector<std::uint8_t> pixels = randomPixels(9);
    const auto ppm = dir / "picture.ppm";  // read with or without Qt
    {
        std::ofstream f(ppm, std::ios::binary);
        f << "P6\n16 16\n255\n";
        f.write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
    }
    const Reference ref = referenceVit(c, spec, vitInput(pixels));

    // Each head's entropy is the mean row entropy of the reference map (17 tokens: [CLS] + 16 patches).
    const auto json = dir / "metrics.json";
    const CliResult m =
            runCli({"metrics", dir.string(), "--image", ppm.string(), "--out", json.string(), "--device", "cpu"});
    INFO(m.err);
    REQUIRE(m.code == 0);
    const auto j = nlohmann::json::parse(slurpFile(json));
    REQUIRE(j["heads"].size() == 6);
    for (const auto& head : j["heads"]) {
        const auto& p = ref.probs[head["layer"].get<int>()][head["head"].get<int>()];
        double entropy = 0;
        for (double v : p)
            if (v > 0) entropy -= v * std::log(v);
        CHECK(head["entropy"].get<double>() == Approx(entropy / 17).margin(1e-5));
    }

#ifdef ATTNSCOPE_CLI_HAS_EXPORT
    const auto fig = dir / "head.svg";
    const CliResult e = runCli({"export", dir.string(), "--image", ppm.string(), "--layer", "1", "--head", "2", "--out",
                                fig.string(), "--device", "cpu"});
    INFO(e.err);
    REQUIRE(e.code == 0);
    const std::string svg = slurpFile(fig);
    CHECK_THAT(svg, Catch::Contains("<svg"));
    CHECK_THAT(svg, Catch::Contains(">[CLS]<"));
    CHECK_THAT(svg, Catch::Contains(">r3c3<"));
#endif
    // --type-ids belongs to text input; two inputs at once are a usage error.
    CHECK(runCli({"metrics", dir.string(), "--image", ppm.string(), "--type-ids", "0", "--out", json.string()}).code ==
          1);
    CHECK(runCli({"metrics", dir.string(), "--image", ppm.string(), "--ids", "1", "--out", json.string()}).code == 1);
}

}  // namespace test_cli_families
