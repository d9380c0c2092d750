// attnscope-cli evict and niah through the real binary: the files they write parse, hold what
// core computes on the same folder, and bad budgets and grids exit 2 with one line.
#include "attnscope/analysis/kv_eviction.h"
#include "attnscope/models/model.h"
#include "cli_run.h"
#include "family_checks.h"
#include "npy_read.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace test_cli_long_context {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::filesystem::path llamaFolder() {
    static const auto dir = [] {
        auto d = freshDir("cli-long-llama");
        writeCheckpoint(d, makeLlama(LlamaSpec{}, 5));
        return d;
    }();
    return dir;
}

const char* kIds = "3,17,0,27,22,5,5,11,30,2,41,8";

// A '|b1' .npy's shape and bytes, read here without core's code.
std::pair<std::string, std::vector<std::uint8_t>> readBoolNpy(const std::filesystem::path& file) {
    const std::string bytes = slurpFile(file);
    REQUIRE(bytes.rfind("\x93NUMPY", 0) == 0);
    const std::size_t headerLength = std::uint8_t(bytes[8]) | (std::uint8_t(bytes[9]) << 8);
    const std::string header = bytes.substr(10, headerLength);
    std::vector<std::uint8_t> data(bytes.begin() + std::ptrdiff_t(10 + headerLength), bytes.end());
    return {header, data};
}

}  // namespace

TEST_CASE("cli evict writes the policy's scores, kept keys and the comparison core computes", "[cli][kv_eviction]") {
    const auto out = freshDir("cli-evict-out");
    const CliResult r = runCli({"evict", llamaFolder().string(), "--ids", kIds, "--policy", "h2o", "--budget", "6",
                                "--max-new-tokens", "5", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("h2o, budget 6 of 12 prompt keys: agreement"));
    const NpyArray scores = readNpy(out / "scores.npy");
    CHECK(scores.shape == std::vector<std::int64_t>{2, 2, 12});
    const auto [header, kept] = readBoolNpy(out / "kept.npy");
    CHECK_THAT(header, Catch::Contains("'descr': '|b1'") && Catch::Contains("'shape': (2,2,12)"));
    REQUIRE(kept.size() == 48);
    const auto report = nlohmann::json::parse(slurpFile(out / "report.json"));

    const auto model = loadCpu(llamaFolder());
    EvictionOptions o;
    o.budget = 6;
    o.newTokens = 5;
    const EvictionResult expected = evictionWhatIf(*model, {3, 17, 0, 27, 22, 5, 5, 11, 30, 2, 41, 8}, o);
    for (std::size_t i = 0; i < kept.size(); ++i) {
        CHECK(int(kept[i]) == int(expected.selection.kept[i]));
        CHECK(scores.values[i] == Approx(expected.selection.scores[i]).margin(1e-6));
    }
    CHECK(report.at("tokens_full").get<std::vector<std::int64_t>>() == expected.tokensFull);
    CHECK(report.at("tokens_evicted").get<std::vector<std::int64_t>>() == expected.tokensEvicted);
    CHECK(report.at("agreement").get<double>() == expected.agreement);
    CHECK(report.at("first_difference").get<int>() == expected.firstDifference);
    const auto kl = report.at("kl_per_step").get<std::vector<double>>();
    REQUIRE(kl.size() == 5);
    CHECK(kl[0] == 0.0);
    for (std::size_t t = 0; t < kl.size(); ++t) CHECK(kl[t] == Approx(expected.klPerStep[t]).margin(1e-7));
    CHECK(report.at("recent") == 3);
}

TEST_CASE("cli evict refuses budgets that cannot hold the forced keys, with one line", "[cli][kv_eviction]") {
    const auto out = freshDir("cli-evict-refused");
    const auto run = [&](std::vector<std::string> extra) {
        std::vector<std::string> argv = {
                "evict", llamaFolder().string(), "--ids", kIds, "--max-new-tokens", "3", "--out", out.string()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return runCli(argv);
    };
    CliResult r = run({"--policy", "streaming", "--budget", "3"});
    CHECK(r.code == 2);
    CHECK(r.err == "error: --budget 3 cannot hold the 4 sink keys (--sinks)\n");
    r = run({"--policy", "snapkv", "--budget", "8", "--window", "4", "--kernel", "2"});
    CHECK(r.code == 2);
    CHECK(r.err == "error: --kernel must be an odd number >= 1, got 2\n");
    r = run({"--policy", "snapkv", "--budget", "8"});
    CHECK(r.code == 2);
    CHECK(r.err == "error: --window 32 is longer than the prompt's 12 positions\n");
    r = run({"--policy", "h2o", "--budget", "4", "--recent", "5"});
    CHECK(r.code == 2);
    CHECK(r.err == "error: --budget 4 cannot hold the 5 recent keys (--recent)\n");
    CHECK_FALSE(std::filesystem::exists(out / "report.json"));
}

TEST_CASE("cli niah writes the retrieval scores, the runs and the two figures", "[cli][needle]") {
    const auto out = freshDir("cli-niah-out");
    std::string hay;
    for (int i = 0; i < 40; ++i) hay += (i ? "," : "") + std::to_string(i % 10);
    const CliResult r =
            runCli({"niah", llamaFolder().string(), "--haystack-ids", hay, "--needle-ids", "40,41,42", "--question-ids",
                    "43", "--lengths", "16,32", "--depths", "0,0.5,1", "--max-new-tokens", "4", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("of 6 runs retrieved the needle"));
    const NpyArray retrieval = readNpy(out / "retrieval.npy");
    CHECK(retrieval.shape == std::vector<std::int64_t>{2, 4});
    for (float v : retrieval.values) CHECK((v >= 0 && v <= 4.0 / 3.0));
    const std::string csv = slurpFile(out / "niah.csv");
    CHECK(csv.rfind("length,depth,success,generated\n16,0,", 0) == 0);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 7);
#ifdef ATTNSCOPE_CLI_HAS_EXPORT
    for (const char* pdf : {"niah.pdf", "retrieval.pdf"}) CHECK(slurpFile(out / pdf).rfind("%PDF", 0) == 0);
#endif
}

TEST_CASE("cli niah refuses bad grids with one line", "[cli][needle]") {
    const auto out = freshDir("cli-niah-refused");
    const auto run = [&](const std::string& lengths, const std::string& depths) {
        return runCli({"niah", llamaFolder().string(), "--haystack-ids", "1,2,3,4,5,6,7,8,9,10", "--needle-ids",
                       "40,41", "--question-ids", "43", "--lengths", lengths, "--depths", depths, "--max-new-tokens",
                       "2", "--out", out.string()});
    };
    CliResult r = run("8", "0.5,1.5");
    CHECK(r.code == 2);
    CHECK(r.err == "error: --depths: 1.5 is outside [0, 1]\n");
    r = run("20", "0.5");
    CHECK(r.code == 2);
    CHECK(r.err == "error: --lengths: 20 needs 18 haystack ids, the haystack has 10\n");
    r = run("2", "0.5");
    CHECK(r.code == 2);
    CHECK(r.err == "error: --lengths: 2 leaves no room beside the needle's 2 ids\n");
    r = run("8", "half");
    CHECK(r.code == 2);
    CHECK(r.err == "error: --depths: 'half' is not a number\n");
    CHECK_FALSE(std::filesystem::exists(out / "niah.csv"));
}

}  // namespace test_cli_long_context
