// attnscope-cli distil --per-head (Hedgehog feature maps fitted to a pretrained model's heads):
// the files on a built-in classifier and on a GPT-2 folder without a tokenizer (lines of ids),
// and bad input as one line with exit 2.
#include "gpt2_fixture.h"
#include "npy_read.h"

#include "cli_run.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

namespace test_cli_hedgehog {

using namespace attnscope::testing;

namespace {

nlohmann::json readJson(const std::filesystem::path& file) {
    std::ifstream in(file);
    return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("cli distil --per-head writes the per-head KL, the feature maps and the output change", "[cli][hedgehog]") {
    const auto dir = freshDir("cli-hedgehog");
    writeText(dir / "texts.txt",
              "the acting was not very good\nthe plot was great\n\nthe acting was great but the plot was not\n"
              "not very good\nthe plot was very good\nthe acting was good\n");
    const CliResult r =
            runCli({"distil", "--teacher", "builtin:sentiment-dot", "--per-head", "--data",
                    (dir / "texts.txt").string(), "--steps", "5", "--seed", "2", "--out", (dir / "out").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("mean per-head KL") && Catch::Contains("top-1 agreement"));
    const nlohmann::json report = readJson(dir / "out" / "report.json");
    const int layers = static_cast<int>(report["layers"].size()), heads = report["heads"].get<int>();
    CHECK(report["train_inputs"] == 5);
    CHECK(report["eval_inputs"] == 1);
    CHECK(report["output_change"]["distilled"]["kind"] == "class");
    const NpyArray kl = readNpy(dir / "out" / "kl.npy");
    REQUIRE(kl.shape == std::vector<std::int64_t>{3, layers, heads});
    double distilled = 0;
    for (int i = 0; i < layers * heads; ++i) distilled += kl.values[static_cast<std::size_t>(2 * layers * heads + i)];
    CHECK(report["mean_kl"]["distilled"].get<double>() == Approx(distilled / (layers * heads)).epsilon(1e-5));
    const NpyArray maps = readNpy(dir / "out" / "feature_maps.npy");
    const int d = report["head_dim"].get<int>();
    CHECK(maps.shape == std::vector<std::int64_t>{layers, heads, 2, d, d + 1});
    std::ifstream loss(dir / "out" / "loss.csv");
    std::string line;
    int rows = -1;
    while (std::getline(loss, line)) ++rows;
    CHECK(rows == 5);
}

TEST_CASE("cli distil --per-head on a GPT-2 folder reads lines of ids; bad input is one line, exit 2",
          "[cli][hedgehog]") {
    const auto dir = freshDir("cli-hedgehog-gpt2");
    Gpt2Spec spec;
    spec.vocabJson = false;
    writeGpt2Folder(dir / "model", makeGpt2(spec, 4));
    writeText(dir / "ids.txt", "1 2 3 4 5 6\n7 8 9 10 11\n");
    const auto distil = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = {"distil",     "--teacher", (dir / "model").string(),
                                      "--per-head", "--out",     (dir / "out").string()};
        a.insert(a.end(), extra.begin(), extra.end());
        return runCli(a);
    };
    const CliResult ok = distil({"--data", (dir / "ids.txt").string(), "--layers", "1-1", "--steps", "3"});
    INFO(ok.err);
    REQUIRE(ok.code == 0);
    CHECK(readNpy(dir / "out" / "kl.npy").shape == std::vector<std::int64_t>{3, 1, 4});
    CHECK(readJson(dir / "out" / "report.json")["held_out"] == false);

    writeText(dir / "bad.txt", "1 2 3\n4 x 5\n");
    requireOneLineError(distil({"--data", (dir / "bad.txt").string()}), "bad.txt:2");
    requireOneLineError(distil({"--data", (dir / "none.txt").string()}), "none.txt");
    requireOneLineError(distil({"--data", (dir / "ids.txt").string(), "--layers", "1-5"}), "layer 2 is out of range");
    requireOneLineError(distil({"--data", (dir / "ids.txt").string(), "--layers", "1-0"}), "--layers");
    requireOneLineError(distil({"--data", (dir / "ids.txt").string(), "--lr", "0"}), "--lr");
    requireOneLineError(distil({"--data", (dir / "ids.txt").string(), "--block", "cross"}), "cross");
}

}  // namespace test_cli_hedgehog
