// attnscope-cli on hostile command lines and failing output folders (issue 15, faults 3, 5, 10,
// 12): numbers outside their range are refused naming the option, sizes are checked before they
// are allocated, one exit-code rule, and a run replaces all its outputs or none.
#include "family_fixtures.h"
#include "gpt2_fixture.h"
#include "png_write.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

namespace test_cli_reliability {

using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

fs::path model() {
    static const fs::path dir = [] {
        const auto d = freshDir("cli-reliability-model");
        writeGpt2Folder(d, makeGpt2({}, 7));
        return d;
    }();
    return dir;
}

}  // namespace

TEST_CASE("cli numeric options are range-checked, never truncated (fault 3)", "[cli][reliability]") {
    const auto out = freshDir("cli-reliability-ranges");
    const std::string m = model().string();
    // 2^32 used to become layer 0 and 2^32 + 1 top-k 1; the strtoll overflow was ignored.
    requireCliInputError(runCli({"attention", m, "--ids", "1,2", "--out", out.string(), "--top-k", "4294967297",
                                 "--mask-heads", "0:0"}),
                         "--top-k must be between 1 and 2147483647, got 4294967297");
    requireCliInputError(runCli({"attention", m, "--ids", "1", "--out", out.string(), "--mask-heads", "0:0", "--top-k",
                                 "99999999999999999999"}),
                         "--top-k must be between 1 and 2147483647, got 99999999999999999999");
    requireCliInputError(runCli({"bench", m, "--repeat", "-3"}), "--repeat must be between 1 and 100000, got -3");
    requireCliInputError(runCli({"train", "--task", "reverse", "--attention", "dot", "--out", out.string(), "--batch",
                                 "4294967360"}),
                         "--batch must be between 1 and 4096");
    CHECK_FALSE(fs::exists(out / "attention.npy"));
#ifdef ATTNSCOPE_CLI_HAS_EXPORT
    requireCliInputError(runCli({"export", m, "--ids", "1,2", "--layer", "4294967296", "--head", "0", "--out",
                                 (out / "f.png").string()}),
                         "--layer must be between 0 and 2147483647, got 4294967296");
    requireCliInputError(runCli({"export", m, "--ids", "1,2", "--layer", "0", "--head", "0", "--dpi",
                                 "18446744073709551617", "--out", (out / "f.png").string()}),
                         "--dpi must be between");
    CHECK_FALSE(fs::exists(out / "f.png"));
#endif
}

TEST_CASE("cli bench checks --seq against the model before allocating (fault 10)", "[cli][reliability]") {
    const std::string m = model().string();
    // 10^9 ids used to be allocated (8 GB) before the position check; LLONG_MAX gave a raw
    // library message.
    requireCliInputError(runCli({"bench", m, "--seq", "1000000000"}),
                         "--seq: 1000000000 tokens but the model has only 24 positions");
    requireCliInputError(runCli({"bench", m, "--seq", "9223372036854775807"}),
                         "--seq must be between 1 and 2147483647");
    const CliResult ok = runCli({"bench", m, "--seq", "24", "--repeat", "1", "--warmup", "0", "--json"});
    INFO(ok.err);
    REQUIRE(ok.code == 0);
    CHECK(nlohmann::json::parse(ok.out)["seq"] == 24);
}

TEST_CASE("cli exit codes: shape of the command line 1, bad values 2 (fault 12)", "[cli][reliability]") {
    const auto out = freshDir("cli-reliability-codes");
    const std::string m = model().string();
    // Malformed values are values: exit 2 and one line naming the option, like any other bad value.
    requireCliInputError(runCli({"bench", m, "--seq", "ten"}),
                         "--seq needs a whole number between 1 and 2147483647, got 'ten'");
    requireCliInputError(runCli({"attention", m, "--ids", "1", "--out", out.string(), "--variant", "linear",
                                 "--feature-map", "favor", "--seed", "1e3"}),
                         "--seed needs a whole number");
    requireCliInputError(runCli({"attention", m, "--ids", "1", "--out", out.string(), "--temperature", "inf"}),
                         "--temperature needs a finite number, got 'inf'");
    requireCliInputError(runCli({"bench", m, "--seq", " 12"}), "--seq needs a whole number");
#ifdef ATTNSCOPE_CLI_HAS_EXPORT
    requireCliInputError(
            runCli({"export", m, "--ids", "1", "--layer", "x", "--head", "0", "--out", (out / "f.svg").string()}),
            "--layer needs a whole number");
#endif
    // The command line's shape: exit 1 with the hint.
    for (const auto& args : std::vector<std::vector<std::string>>{
                 {"bench", m, "--seq", "3", "--seq", "4"},
                 {"bench", m, "--seq"},
                 {"bench", m, "--bogus", "1"},
                 {"attention", m, "--ids", "1", "--out", out.string(), "--feature-map", "elu"}}) {
        const CliResult r = runCli(args);
        INFO("stderr: " << r.err);
        CHECK(r.code == 1);
        CHECK_THAT(r.err, Catch::Contains("Try 'attnscope-cli"));
    }
}

TEST_CASE("cli attention replaces all its outputs or none (fault 5)", "[cli][reliability]") {
    const auto out = freshDir("cli-reliability-staged");
    const std::string m = model().string();
    writeText(out / "attention.npy", "old map");
    writeText(out / "output_change.json", "old change");
    // tokens.json cannot be replaced (a folder is in the way): before, attention.npy was already
    // new when that failed.
    fs::create_directories(out / "tokens.json");
    const CliResult r = runCli({"attention", m, "--ids", "1,2,3", "--out", out.string(), "--mask-heads", "0:1"});
    requireCliInputError(r, "tokens.json: is a folder; nothing was written");
    CHECK(slurpFile(out / "attention.npy") == "old map");
    CHECK(slurpFile(out / "output_change.json") == "old change");
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(out)) ++entries;
    CHECK(entries == 3);  // no staging folder or temporary left behind

    fs::remove(out / "tokens.json");
    const CliResult ok = runCli({"attention", m, "--ids", "1,2,3", "--out", out.string(), "--mask-heads", "0:1"});
    INFO(ok.err);
    REQUIRE(ok.code == 0);
    CHECK(slurpFile(out / "attention.npy").rfind("\x93NUMPY", 0) == 0);
    CHECK(nlohmann::json::parse(slurpFile(out / "tokens.json"))["ids"] == nlohmann::json({1, 2, 3}));
    CHECK(nlohmann::json::parse(slurpFile(out / "output_change.json")).contains("intervention"));
    CHECK_THAT(ok.err, Catch::Contains("wrote " + (out / "attention.npy").string() + " [2, 4, 3, 3]"));
}

#ifdef ATTNSCOPE_CLI_HAS_QT
TEST_CASE("cli: a damaged PNG is one error line, without libpng's own (fault 11)", "[cli][reliability]") {
    const auto dir = freshDir("cli-reliability-vit");
    writeCheckpoint(dir, makeVit(VitSpec{}, 4));
    const auto images = freshDir("cli-reliability-png");
    std::vector<std::uint8_t> pixels(16 * 16 * 3);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 7);
    writePng(images / "whole.png", 16, 16, pixels);
    const std::string png = slurpFile(images / "whole.png");
    writeText(images / "cut.png", png.substr(0, png.size() / 2));  // libpng used to print "libpng error: Read Error"
    const auto out = freshDir("cli-reliability-png-out");
    const CliResult r =
            runCli({"attention", dir.string(), "--image", (images / "cut.png").string(), "--out", out.string()});
    requireCliInputError(r, (images / "cut.png").string() + ": cannot be read as an image (damaged PNG: ");
    CHECK_THAT(r.err, !Catch::Contains("libpng"));
}
#endif

// main.cpp ends through exitProcess (no static destructors): what the command printed must still
// reach stdout, and output that could not be written must not pass for success.
TEST_CASE("cli: output is flushed at exit, and an unwritable stdout is an error", "[cli][reliability]") {
    const CliResult ok = runCliProcess({"info", model().string(), "--json"});
    INFO(ok.err);
    REQUIRE(ok.code == 0);
    CHECK_FALSE(ok.out.empty());
    CHECK(nlohmann::json::parse(ok.out)["layers"] == 2);

    const auto dir = freshDir("cli-dev-full");
    const std::string cmd = shellQuote(ATTNSCOPE_CLI) + " --version >/dev/full 2>" + shellQuote((dir / "err").string());
    const int code = exitCodeOf(std::system(cmd.c_str()));
    const std::string err = slurpFile(dir / "err");
    INFO(err);
    CHECK(code == 2);
    CHECK_THAT(err, Catch::StartsWith("error: could not write the output"));
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}

}  // namespace test_cli_reliability
