// attnscope-cli lens and dla: the files equal what core computes from the same forward, and bad
// input is one line and exit 2.
#include "attnscope/analysis/logit_lens.h"
#include "attnscope/analysis/patching.h"
#include "attnscope/models/model.h"
#include "family_fixtures.h"
#include "npy_read.h"

#include "cli_run.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

namespace test_cli_lens {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::filesystem::path llamaFolder() {
    static const auto dir = [] {
        auto d = freshDir("cli-lens-llama");
        writeCheckpoint(d, makeLlama(LlamaSpec{}, 5));
        return d;
    }();
    return dir;
}

}  // namespace

TEST_CASE("cli lens writes the top ids, their log-probabilities and one token's, as core computes them",
          "[cli][lens]") {
    const auto out = freshDir("cli-lens-out");
    const auto r = runCli({"lens", llamaFolder().string(), "--ids", "3,17,0,39,22", "--top", "3", "--token", "7",
                           "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    std::vector<std::int64_t> ids;
    const NpyArray idsArray = readNpy(out / "lens_top_ids.npy", &ids);
    const NpyArray logProbs = readNpy(out / "lens_top_logprobs.npy");
    const NpyArray token = readNpy(out / "lens_token_logprob.npy");
    CHECK(idsArray.shape == std::vector<std::int64_t>{3, 5, 3});  // 2 layers + 1 rows
    CHECK(logProbs.shape == std::vector<std::int64_t>{3, 5, 3});
    CHECK(token.shape == std::vector<std::int64_t>{3, 5});

    const auto model = Model::load(llamaFolder(), LoadOptions{DeviceChoice::Cpu, {}});
    RunOptions run;
    run.recordResiduals = true;
    LensOptions lo;
    lo.topK = 3;
    lo.token = 7;
    const LogitLens want = logitLens(*model->forward({3, 17, 0, 39, 22}, run), lo);
    CHECK(ids == want.topIds);
    CHECK(logProbs.values == want.topLogProbs);
    CHECK(token.values == want.tokenLogProbs);
    for (std::size_t i = 0; i + 1 < logProbs.values.size(); ++i)
        if ((i + 1) % 3 != 0) CHECK(logProbs.values[i] >= logProbs.values[i + 1]);  // most probable first
}

TEST_CASE("cli dla writes per-head parts that sum with the rest to the logit difference", "[cli][lens]") {
    const auto out = freshDir("cli-dla-out");
    const auto r = runCli({"dla", llamaFolder().string(), "--ids", "3,17,0,39,22", "--token", "9", "--minus", "4",
                           "--position", "3", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray heads = readNpy(out / "dla_heads.npy");
    REQUIRE(heads.shape == std::vector<std::int64_t>{2, 4});
    std::ifstream in(out / "dla.json");
    const auto j = nlohmann::json::parse(in);
    double sum = j["embed"].get<double>() + j["final_bias"].get<double>();
    for (float v : heads.values) sum += v;
    for (double v : j["attn_bias"]) sum += v;
    for (double v : j["mlp"]) sum += v;
    CHECK(sum == Approx(j["logit_diff"].get<double>()).margin(1e-4));
    CHECK(j["sum"].get<double>() == Approx(j["logit_diff"].get<double>()).margin(1e-4));
    CHECK(j["position"] == 3);
    CHECK(j["minus"] == 4);
}

TEST_CASE("cli lens and dla refuse bad input with one line and exit 2", "[cli][lens]") {
    const auto out = freshDir("cli-lens-bad");
    const std::string llama = llamaFolder().string();
    requireOneLineError(runCli({"lens", llama, "--ids", "1,2", "--top", "0", "--out", out.string()}), "--top");
    requireOneLineError(runCli({"lens", llama, "--ids", "1,2", "--top", "49", "--out", out.string()}), "outside 1..48");
    requireOneLineError(runCli({"lens", llama, "--ids", "1,2", "--token", "48", "--out", out.string()}),
                        "--token 48 is outside");
    const auto missing = runCli({"dla", llama, "--ids", "1,2", "--out", out.string()});  // a usage error: exit 1
    CHECK(missing.code == 1);
    CHECK_THAT(missing.err, Catch::Contains("option '--token' is required"));
    requireOneLineError(
            runCli({"dla", llama, "--ids", "1,2", "--token", "1", "--position", "2", "--out", out.string()}),
            "--position");
    requireOneLineError(runCli({"dla", "builtin:reverse-dot", "--ids", "1,2", "--token", "1", "--out", out.string()}),
                        "decoder-only language model");
    CHECK(std::filesystem::is_empty(out));  // nothing written by a refused run
}

TEST_CASE("cli patch writes the scores core computes, and refuses bad input with one line", "[cli][lens]") {
    const auto out = freshDir("cli-patch-out");
    const auto r = runCli({"patch", llamaFolder().string(), "--clean-ids", "3,17,0,39,22", "--corrupt-ids",
                           "3,17,8,39,22", "--token", "9", "--minus", "4", "--what", "heads", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray scores = readNpy(out / "patch.npy");
    REQUIRE(scores.shape == std::vector<std::int64_t>{2, 4});
    const auto model = Model::load(llamaFolder(), LoadOptions{DeviceChoice::Cpu, {}});
    PatchRequest request;
    request.token = 9;
    request.minus = 4;
    const PatchResult want = activationPatching(*model, {3, 17, 0, 39, 22}, {3, 17, 8, 39, 22}, request);
    CHECK(scores.values == want.scores);
    std::ifstream in(out / "patch.json");
    const auto j = nlohmann::json::parse(in);
    CHECK(j["ld_clean"].get<double>() == Approx(want.ldClean));
    CHECK(j["ld_corrupt"].get<double>() == Approx(want.ldCorrupt));
    CHECK(j["what"] == "heads");

    const auto approxOut = freshDir("cli-patch-approx");
    const auto approx = runCli({"patch", llamaFolder().string(), "--clean-ids", "3,17,0,39,22", "--corrupt-ids",
                                "3,17,8,39,22", "--token", "9", "--minus", "4", "--what", "mlp-out", "--approx",
                                "attribution", "--out", approxOut.string()});
    INFO(approx.err);
    REQUIRE(approx.code == 0);
    CHECK(readNpy(approxOut / "patch.npy").shape == std::vector<std::int64_t>{2, 5});
    std::ifstream approxJson(approxOut / "patch.json");
    CHECK(nlohmann::json::parse(approxJson)["method"] == "attribution (linear approximation)");

    const auto bad = freshDir("cli-patch-bad");
    const std::string llama = llamaFolder().string();
    requireOneLineError(runCli({"patch", llama, "--clean-ids", "1,2", "--corrupt-ids", "1,3", "--token", "9", "--what",
                                "neurons", "--out", bad.string()}),
                        "--what 'neurons' is not one of heads, resid, attn-out, mlp-out");
    requireOneLineError(runCli({"patch", llama, "--clean-ids", "1,2", "--corrupt-ids", "1,3", "--token", "9", "--what",
                                "heads", "--approx", "gradient", "--out", bad.string()}),
                        "--approx 'gradient' is not attribution");
    requireOneLineError(runCli({"patch", llama, "--clean-ids", "1,2", "--corrupt-ids", "1,3,4", "--token", "9",
                                "--what", "resid", "--out", bad.string()}),
                        "same length (2 and 3 tokens)");
    requireOneLineError(runCli({"patch", llama, "--clean-ids", "1,2", "--corrupt-ids", "1,2", "--token", "9", "--what",
                                "resid", "--out", bad.string()}),
                        "same logit difference");
    CHECK(std::filesystem::is_empty(bad));
}

TEST_CASE("cli attention --knockout writes the knocked maps and the output change", "[cli][lens]") {
    const auto out = freshDir("cli-knockout");
    const auto r = runCli({"attention", llamaFolder().string(), "--ids", "3,17,0,39,22", "--knockout", "4,3:0,1@0-1",
                           "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("knockout 4,3:0,1@0-1"));
    const NpyArray maps = readNpy(out / "attention.npy");  // [2, 4, 5, 5]
    REQUIRE(maps.shape == std::vector<std::int64_t>{2, 4, 5, 5});
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h)
            for (int q : {3, 4})
                for (int k : {0, 1}) CHECK(maps.values[((l * 4 + h) * 5 + q) * 5 + k] == 0.0f);
    CHECK(std::filesystem::exists(out / "output_change.json"));

    const auto bad = freshDir("cli-knockout-bad");
    const std::string llama = llamaFolder().string();
    requireOneLineError(runCli({"attention", llama, "--ids", "1,2,3", "--knockout", "2:0", "--out", bad.string()}),
                        "is not QUERIES:KEYS@LAYERS");
    requireOneLineError(runCli({"attention", llama, "--ids", "1,2,3", "--knockout", "1:0,1@0", "--out", bad.string()}),
                        "leaves query position 1 with no key in layer 0");
    requireOneLineError(
            runCli({"attention", "builtin:reverse-dot", "--text", "ab", "--knockout", "1:0@0", "--out", bad.string()}),
            "decoder-only language models");
    CHECK(std::filesystem::is_empty(bad));
}

}  // namespace test_cli_lens
