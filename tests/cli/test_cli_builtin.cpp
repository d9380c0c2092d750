// attnscope-cli on the built-in models: list-builtin, train, attention on an encoder-decoder and
// on a classifier (files checked against the Trace), and the errors.
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "npy_read.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace test_cli_builtin {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// The .npy block equals the Trace's maps, head by head.
void requireNpyMatchesTrace(const NpyArray& a, const Trace& trace, const std::string& block) {
    const int b = trace.blockIndex(block);
    const BlockInfo& info = trace.blocks()[b];
    REQUIRE(a.shape == std::vector<std::int64_t>{info.layers, info.heads,
                                                 static_cast<std::int64_t>(info.queryTokens.size()),
                                                 static_cast<std::int64_t>(info.keyTokens.size())});
    std::size_t at = 0;
    for (int l = 0; l < info.layers; ++l)
        for (int h = 0; h < info.heads; ++h)
            for (float v : trace.map(b, l, h).values) REQUIRE(a.values[at++] == v);
}

}  // namespace

TEST_CASE("cli list-builtin lists the six built-in models", "[cli][builtin]") {
    const CliResult r = runCli({"list-builtin"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 6);
    for (const char* task : {"reverse", "sentiment"})
        for (const char* kind : {"dot", "additive", "linear"}) {
            const std::string name = std::string(task) + "-" + kind;
            const auto line = r.out.substr(r.out.find(name), r.out.find('\n', r.out.find(name)) - r.out.find(name));
            CHECK_THAT(line, Catch::Contains(task) && Catch::Contains(std::string(" ") + kind + " ") &&
                                     Catch::Contains("parameters"));
        }
    const CliResult j = runCli({"list-builtin", "--json"});
    REQUIRE(j.code == 0);
    const auto list = nlohmann::json::parse(j.out);
    REQUIRE(list.size() == 6);
    CHECK(list[0]["name"] == "reverse-additive");
    CHECK(list[0]["spec"] == "builtin:reverse-additive");
    CHECK(list[0]["task"] == "reverse");
    CHECK(list[0]["attention"] == "additive");
    CHECK(list[0]["parameters"].get<long long>() > 1000);
}

TEST_CASE("cli attention on the encoder-decoder writes encoder, decoder and cross maps and their labels",
          "[cli][builtin]") {
    const auto out = freshDir("cli-reverse");
    const CliResult r = runCli({"attention", "builtin:reverse-dot", "--text", "abc123", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["source"] == nlohmann::json({"a", "b", "c", "1", "2", "3"}));
    CHECK(tokens["target"] == nlohmann::json({"<s>", "3", "2", "1", "c", "b", "a"}));
    CHECK(tokens["output"] == nlohmann::json({"3", "2", "1", "c", "b", "a"}));
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    const auto model = Model::load("builtin:reverse-dot", load);
    const auto trace = model->forward(model->encodeText("abc123"));
    requireNpyMatchesTrace(readNpy(out / "encoder.npy"), *trace, "encoder");
    requireNpyMatchesTrace(readNpy(out / "decoder.npy"), *trace, "decoder");
    const NpyArray cross = readNpy(out / "cross.npy");
    requireNpyMatchesTrace(cross, *trace, "cross");
    CHECK(cross.shape == std::vector<std::int64_t>{2, 2, 7, 6});
    CHECK_FALSE(std::filesystem::exists(out / "attention.npy"));
}

TEST_CASE("cli attention on the classifier writes attention.npy, the label and the probabilities", "[cli][builtin]") {
    const auto out = freshDir("cli-sentiment");
    const CliResult r = runCli(
            {"attention", "builtin:sentiment-additive", "--text", "The movie was not bad.", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["tokens"] == nlohmann::json({"<cls>", "the", "movie", "was", "not", "bad"}));
    CHECK(tokens["label"] == "positive");
    REQUIRE(tokens["probabilities"].size() == 2);
    CHECK(tokens["probabilities"][0].get<double>() + tokens["probabilities"][1].get<double>() == Approx(1.0));
    CHECK(tokens["probabilities"][1].get<double>() > 0.5);
    const NpyArray a = readNpy(out / "attention.npy");
    CHECK(a.shape == std::vector<std::int64_t>{2, 2, 6, 6});
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    const auto model = Model::load("builtin:sentiment-additive", load);
    requireNpyMatchesTrace(a, *model->forward(model->encodeText("The movie was not bad.")), "self");
}

TEST_CASE("cli train writes a model folder that the other commands accept", "[cli][builtin]") {
    const auto out = freshDir("cli-train") / "model";
    const CliResult r = runCli({"train", "--task", "sentiment", "--attention", "linear", "--steps", "30", "--seed", "5",
                                "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("step    25/30") && Catch::Contains("step    30/30") &&
                              Catch::Contains("held-out accuracy"));
    const auto config = nlohmann::json::parse(slurpFile(out / "config.json"));
    CHECK(config["model_type"] == "attnscope-classifier");
    CHECK(config["attention"] == "linear");
    CHECK(config["training"]["seed"] == 5);
    CHECK(config["training"]["steps"] == 30);
    CHECK(nlohmann::json::parse(slurpFile(out / "vocab.json"))["<cls>"] == 1);
    const CliResult info = runCli({"info", out.string()});
    REQUIRE(info.code == 0);
    CHECK_THAT(info.out, Catch::Contains("family:        attnscope-classifier") &&
                                 Catch::Contains("task:          sentiment") &&
                                 Catch::Contains("attention:     linear"));
}

TEST_CASE("cli built-in errors: one line, exit 2, nothing written", "[cli][builtin]") {
    const auto out = freshDir("cli-builtin-errors") / "never";
    requireCliInputError(runCli({"attention", "builtin:reverse-dot", "--text", "abC", "--out", out.string()}),
                         "symbol 'C'");
    requireCliInputError(
            runCli({"attention", "builtin:sentiment-dot", "--text", "the acting was amazing", "--out", out.string()}),
            "word 'amazing'");
    requireCliInputError(runCli({"attention", "builtin:nope", "--text", "ab", "--out", out.string()}), "reverse-dot");
    CHECK_FALSE(std::filesystem::exists(out));
    requireCliInputError(runCli({"train", "--task", "translate", "--attention", "dot", "--out", out.string()}),
                         "unknown task 'translate'");
    CHECK_FALSE(std::filesystem::exists(out));
    const CliResult usage = runCli({"train", "--task", "reverse"});
    CHECK(usage.code == 1);
}

}  // namespace test_cli_builtin
