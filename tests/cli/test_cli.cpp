// attnscope-cli end to end: the real binary on real files; exit codes and the one-line errors.
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "npy_read.h"
#include "reference_gpt2.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>

namespace test_cli {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// Invalid input: exit 2 and exactly one line "error: ..." on stderr, nothing on stdout.
void requireInputError(const CliResult& r, const std::string& mentions) {
    requireCliInputError(r, mentions);
    REQUIRE(r.out.empty());
}

std::filesystem::path fixtureModel(const std::string& name, const Gpt2Spec& spec = {}) {
    const auto dir = freshDir(name);
    writeGpt2Folder(dir, makeGpt2(spec, 42));
    return dir;
}

}  // namespace

// The other CLI tests run the command line through the fork server (cli_run.h); it must give
// what starting the binary gives: exit code, stdout and stderr, for success, usage errors and
// input errors, with a relative path resolved in the caller's working directory.
TEST_CASE("cli the fork server runs the command line as the binary does", "[cli]") {
    const auto model = fixtureModel("fork-server");
    const auto here = std::filesystem::current_path();
    std::filesystem::current_path(model.parent_path());
    const std::vector<std::vector<std::string>> runs{
            {"--version"},
            {},
            {"no-such-command"},
            {"info", model.filename().string(), "--json"},
            {"info", model.filename().string(), "--layer"},
            {"info", "no-such-folder"},
            {"tokenize", model.filename().string(), "--text", "hello there"},
    };
    for (const auto& args : runs) {
        const CliResult server = runCli(args);
        const CliResult binary = runCliProcess(args);
        INFO("args: " << (args.empty() ? std::string("(none)") : args[0]) << " stderr: " << binary.err);
        CHECK(server.code == binary.code);
        CHECK(server.out == binary.out);
        CHECK(server.err == binary.err);
    }
    std::filesystem::current_path(here);
    CHECK(runCli({"info", "no-such-folder"}).code == 2);
    CHECK(runCliProcess({"--version"}).code == 0);
}

TEST_CASE("cli info describes a GPT-2 folder", "[cli]") {
    const auto model = fixtureModel("info");
    const CliResult r = runCli({"info", model.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("family:        gpt2"));
    CHECK_THAT(r.out, Catch::Contains("layers:        2"));
    CHECK_THAT(r.out, Catch::Contains("heads:         4"));
    CHECK_THAT(r.out, Catch::Contains("head dim:      4"));
    CHECK_THAT(r.out, Catch::Contains("max positions: 24"));
    CHECK_THAT(r.out, Catch::Contains("dtype:         F32"));
    // wte 40·16 + wpe 24·16 + 2 layers · 3,280 + ln_f 32 (the tied head is not counted again)
    CHECK_THAT(r.out, Catch::Contains("parameters:    7616"));

    const CliResult j = runCli({"info", model.string(), "--json"});
    REQUIRE(j.code == 0);
    const auto json = nlohmann::json::parse(j.out);
    CHECK(json["family"] == "gpt2");
    CHECK(json["parameters"] == 7616);
}

TEST_CASE("cli attention writes [layers, heads, seq, seq] float32 maps and the tokens", "[cli]") {
    Gpt2Spec spec;
    spec.vocab = 50;
    const auto model = fixtureModel("attention", spec);
    const auto out = freshDir("attention-out") / "nested";
    const CliResult r =
            runCli({"attention", model.string(), "--ids", "3, 17,42,0,9", "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);

    const NpyArray a = readNpy(out / "attention.npy");
    REQUIRE(a.shape == std::vector<std::int64_t>{2, 4, 5, 5});
    const auto ref = referenceGpt2(makeGpt2(spec, 42), {3, 17, 42, 0, 9});
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h)
            for (int q = 0; q < 5; ++q)
                for (int k = 0; k < 5; ++k) {
                    INFO("layer " << l << " head " << h << " query " << q << " key " << k);
                    REQUIRE(a.values[((l * 4 + h) * 5 + q) * 5 + k] == Approx(ref.probs[l][h][q * 5 + k]).margin(2e-6));
                }

    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["ids"] == nlohmann::json({3, 17, 42, 0, 9}));
    CHECK(tokens["tokens"] == nlohmann::json({"t3", "t17", "t42", "t0", "t9"}));

    SECTION("--temperature changes the written maps as softmax(logits / T)") {
        const CliResult t = runCli(
                {"attention", model.string(), "--ids", "3,17,42,0,9", "--out", out.string(), "--temperature", "2.5"});
        REQUIRE(t.code == 0);
        const NpyArray b = readNpy(out / "attention.npy");
        const auto expected = causalSoftmax(ref.scores[1][2], 5, 2.5);
        for (int i = 0; i < 25; ++i) REQUIRE(b.values[(1 * 4 + 2) * 25 + i] == Approx(expected[i]).margin(2e-6));
    }
}

TEST_CASE("cli rejects invalid input with exit code 2 and one error line", "[cli]") {
    const auto model = fixtureModel("errors");
    const auto out = freshDir("errors-out");
    // An earlier result in --out must survive every failed run untouched.
    writeText(out / "attention.npy", "previous result");

    requireInputError(runCli({"info", (out / "nope").string()}), "no such model folder");
    requireInputError(runCli({"attention", model.string(), "--ids", "1,40", "--out", out.string()}),
                      "token id 40 at position 1 is outside the vocabulary [0, 40)");
    std::string tooLong = "1";
    for (int i = 0; i < 24; ++i) tooLong += ",1";
    requireInputError(runCli({"attention", model.string(), "--ids", tooLong, "--out", out.string()}),
                      "25 tokens but the model has only 24 positions");
    requireInputError(runCli({"attention", model.string(), "--ids", "1,x", "--out", out.string()}),
                      "'x' is not a token id");
    requireInputError(
            runCli({"attention", model.string(), "--ids", "1,2", "--out", out.string(), "--temperature", "0"}),
            "--temperature must be a finite number > 0");
    requireInputError(runCli({"attention", model.string(), "--ids", "1", "--out", out.string(), "--device", "tpu"}),
                      "unknown device 'tpu'");
    requireInputError(runCli({"attention", model.string(), "--ids", "1", "--out", (model / "config.json").string()}),
                      "exists and is not a folder");
    requireInputError(runCli({"attention", model.string(), "--ids", "1", "--out", "/proc/attnscope"}),
                      "--out /proc/attnscope");
    CHECK(slurpFile(out / "attention.npy") == "previous result");

    SECTION("malformed files") {
        const auto bad = fixtureModel("malformed");
        writeText(bad / "model.safetensors", std::string("\x08\x00\x00\x00\x00\x00\x00\x00{\"a\":1}", 15));
        requireInputError(runCli({"info", bad.string()}), "model.safetensors");
        writeText(bad / "config.json", "{\"model_type\": \"mamba\"}");
        requireInputError(runCli({"info", bad.string()}), "model_type 'mamba' is not supported");
        writeText(bad / "config.json", "not json");
        requireInputError(runCli({"attention", bad.string(), "--ids", "1", "--out", out.string()}), "not valid JSON");
        CHECK(slurpFile(out / "attention.npy") == "previous result");
    }
    SECTION("cuda without a GPU is a clear error") {
        if (!cudaAvailable())
            requireInputError(runCli({"info", model.string(), "--device", "cuda"}), "device 'cuda' is not available");
    }
}

TEST_CASE("cli usage errors exit 1 with a hint; --help works everywhere", "[cli]") {
    const auto model = fixtureModel("usage");
    for (const auto& args :
         std::vector<std::vector<std::string>>{{},
                                               {"frobnicate"},
                                               {"info"},
                                               {"attention", model.string(), "--ids", "1"},
                                               {"attention", model.string(), "--out", "x"},
                                               {"info", model.string(), "--bogus"},
                                               {"info", model.string(), "extra"},
                                               {"bench", model.string(), "--seq", "4", "--seq", "5"}}) {
        const CliResult r = runCli(args);
        INFO("args: " << (args.empty() ? "" : args[0]) << " stderr: " << r.err);
        CHECK(r.code == 1);
        CHECK_FALSE(r.err.empty());
        CHECK_THAT(r.err, Catch::Contains("attnscope-cli") || Catch::Contains("usage:"));
    }
    for (const std::string command : {"info", "attention", "bench"}) {
        const CliResult r = runCli({command, "--help"});
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Catch::StartsWith("usage: attnscope-cli " + command));
    }
    const CliResult top = runCli({"--help"});
    CHECK(top.code == 0);
    CHECK_THAT(top.out, Catch::Contains("attention") && Catch::Contains("bench") && Catch::Contains("info"));

    // Each command listed once; --help-all (the man page's source, cmake/make_manpage.cmake) is the
    // top-level help, then each listed command's --help after a form feed and its name.
    std::istringstream lines(top.out.substr(top.out.find("commands:\n")));
    std::vector<std::string> listed;
    for (std::string line; std::getline(lines, line) && !(line.empty() && !listed.empty());)
        if (line.rfind("  ", 0) == 0) listed.push_back(line.substr(2, line.find(' ', 2) - 2));
    CHECK(listed.size() == std::set<std::string>(listed.begin(), listed.end()).size());
    const CliResult all = runCli({"--help-all"});
    CHECK(all.code == 0);
    CHECK_THAT(all.out, Catch::StartsWith(top.out));
    CHECK(std::count(all.out.begin(), all.out.end(), '\f') == std::ptrdiff_t(listed.size()));
    for (const auto& command : listed) CHECK_THAT(all.out, Catch::Contains("\f" + command + "\n"));
    for (const std::string command : {"info", "compare-models"})
        CHECK_THAT(all.out, Catch::Contains("\f" + command + "\n" + runCli({command, "--help"}).out));
}

TEST_CASE("cli bench times forward+capture", "[cli]") {
    const auto model = fixtureModel("bench");
    const CliResult r = runCli({"bench", model.string(), "--seq", "16", "--repeat", "2", "--warmup", "0", "--json"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto json = nlohmann::json::parse(r.out);
    CHECK(json["seq"] == 16);
    CHECK(json["runs"].size() == 2);
    CHECK(json["median_ms"].get<double>() > 0);
    requireInputError(runCli({"bench", model.string(), "--seq", "25"}),
                      "25 tokens but the model has only 24 positions");
}

}  // namespace test_cli
