// `metrics --attention-file`: the maps `attention` wrote, read back from its attention.npy and
// tokens.json, give the same per-head metrics as running the model (no KL to a linear map:
// the file holds no Q/K); a malformed file is invalid input naming it.
#include "cli_run.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>

namespace test_cli_attention_file {

using namespace attnscope::testing;

TEST_CASE("metrics --attention-file reads the maps attention wrote", "[cli][attention-file]") {
    const auto dir = freshDir("cli-attention-file");
    const std::string text = "the acting was not good";
    requireCliExit(runCli({"attention", "builtin:sentiment-dot", "--text", text, "--out", (dir / "run").string()}), 0,
                   "");
    requireCliExit(runCli({"metrics", "builtin:sentiment-dot", "--text", text, "--out", (dir / "model.json").string()}),
                   0, "");
    const CliResult r = runCli({"metrics", "--attention-file", (dir / "run" / "attention.npy").string(), "--out",
                                (dir / "file.json").string()});
    requireCliExit(r, 0, "");
    nlohmann::json a, b;
    std::ifstream(dir / "file.json") >> a;
    std::ifstream(dir / "model.json") >> b;
    CHECK(a["tokens"] == b["tokens"]);  // from the tokens.json beside the file
    REQUIRE(a["heads"].size() == b["heads"].size());
    for (std::size_t i = 0; i < a["heads"].size(); ++i) {
        CHECK(a["heads"][i]["entropy"].get<double>() == Approx(b["heads"][i]["entropy"].get<double>()).margin(1e-6));
        CHECK(a["heads"][i]["mean_distance"].get<double>() ==
              Approx(b["heads"][i]["mean_distance"].get<double>()).margin(1e-6));
        CHECK(a["heads"][i]["pattern"] == b["heads"][i]["pattern"]);
        CHECK(a["heads"][i]["kl_dot_linear"].get<double>() == 0.0);
    }
    const auto& ra = a["blocks"]["self"]["rollout"];
    const auto& rb = b["blocks"]["self"]["rollout"];
    REQUIRE(ra.size() == rb.size());
    for (std::size_t i = 0; i < ra.size(); ++i)
        for (std::size_t j = 0; j < ra[i].size(); ++j)
            CHECK(ra[i][j].get<double>() == Approx(rb[i][j].get<double>()).margin(1e-6));

    std::ofstream(dir / "bad.npy") << "\x93NUMPY\x01";
    requireCliInputError(
            runCli({"metrics", "--attention-file", (dir / "bad.npy").string(), "--out", (dir / "x.json").string()}),
            "bad.npy");
    requireCliExit(runCli({"metrics", "--attention-file", (dir / "bad.npy").string(), "--text", "x", "--out",
                           (dir / "x.json").string()}),
                   1, "--attention-file takes no");
}

}  // namespace test_cli_attention_file
