// attention --source alti|alti-rollout and metrics --source through the CLI: the .npy shapes and
// values (core's altiMap, checked against a double-precision reference in
// tests/core/analysis/test_alti.cpp; the rollout as the product of the written layers), the
// encoder-decoder refusal and --block, and the metrics rows of a source (one line errors, exit 2).
#include "attnscope/analysis/alti.h"
#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/models/model.h"
#include "cli_run.h"
#include "csv_read.h"
#include "fixtures_seq2seq.h"
#include "gpt2_fixture.h"
#include "npy_read.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>

namespace test_cli_alti {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<std::int64_t> kIds = {3, 17, 0, 37, 22, 5, 5, 11, 30};
const char* kIdText = "3,17,0,37,22,5,5,11,30";

std::filesystem::path gpt2Folder() {
    static const auto dir = [] {
        auto d = freshDir("cli-alti-model");
        writeGpt2Folder(d, makeGpt2(Gpt2Spec{}, 9));
        return d;
    }();
    return dir;
}

std::shared_ptr<const Trace> tracedGpt2() {
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    RunOptions run;
    run.captureValues = true;
    return Model::load(gpt2Folder(), load)->forward(kIds, run);
}

std::filesystem::path t5Folder() {
    static const auto dir = [] {
        auto d = freshDir("cli-alti-t5");
        writeCheckpoint(d, makeT5(T5Spec{}, 71));
        return d;
    }();
    return dir;
}

CliResult attention(const std::filesystem::path& out, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"attention", gpt2Folder().string(), "--ids", kIdText, "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return runCli(args);
}

CliResult metrics(const std::filesystem::path& out, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"metrics", gpt2Folder().string(), "--ids", kIdText, "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return runCli(args);
}

}  // namespace

TEST_CASE("cli attention --source alti writes core's ALTI per layer and alti-rollout their product", "[cli][alti]") {
    const int n = static_cast<int>(kIds.size()), L = 2;
    const auto trace = tracedGpt2();
    const auto out = freshDir("cli-alti-out");
    const CliResult r = attention(out, {"--source", "alti"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("attention.npy [2, 1, 9, 9]"));
    const NpyArray a = readNpy(out / "attention.npy");
    REQUIRE(a.shape == std::vector<std::int64_t>{L, 1, n, n});
    for (int l = 0; l < L; ++l) {
        const HeadMap c = altiMap(*trace, 0, l);
        double worst = 0;
        for (int k = 0; k < n * n; ++k)
            worst = std::max(worst, std::abs(double(a.values[l * n * n + k]) - c.values[k]));
        CHECK(worst <= 1e-6);
        for (int i = 0; i < n; ++i) {
            double sum = 0;
            for (int j = 0; j < n; ++j) sum += a.values[(l * n + i) * n + j];
            CHECK(std::abs(sum - 1) < 1e-5);
        }
    }
    CHECK(nlohmann::json::parse(slurpFile(out / "tokens.json")).at("map_source") == "alti");

    const auto rollOut = freshDir("cli-alti-rollout");
    const CliResult rr = attention(rollOut, {"--source", "alti-rollout"});
    INFO(rr.err);
    REQUIRE(rr.code == 0);
    const NpyArray b = readNpy(rollOut / "attention.npy");
    REQUIRE(b.shape == std::vector<std::int64_t>{L, 1, n, n});
    double worst = 0;
    for (int k = 0; k < n * n; ++k) worst = std::max(worst, std::abs(double(b.values[k]) - a.values[k]));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double want = 0;  // R¹ = C¹ · C⁰
            for (int k = 0; k < n; ++k) want += double(a.values[(n + i) * n + k]) * a.values[k * n + j];
            worst = std::max(worst, std::abs(b.values[(n + i) * n + j] - want));
        }
    CHECK(worst <= 1e-5);
}

TEST_CASE("cli attention --source alti on an encoder-decoder needs --block encoder", "[cli][alti]") {
    const auto out = freshDir("cli-alti-t5-out");
    const std::vector<std::string> base = {"attention",    t5Folder().string(), "--ids", "5,9,13,2,1",
                                           "--target-ids", "0,7,3,8",           "--out", out.string()};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = base;
        args.insert(args.end(), extra.begin(), extra.end());
        return runCli(args);
    };
    requireOneLineError(
            with({"--source", "alti"}),
            "--source alti is defined for one residual stream: this encoder-decoder's 'decoder' and "
            "'cross' blocks mix the decoder's and the encoder's; --block encoder gives the encoder's alone");
    requireOneLineError(with({"--source", "alti-rollout", "--block", "cross"}),
                        "--source alti-rollout is defined for one residual stream: the 'cross' block");
    requireOneLineError(with({"--source", "alti", "--block", "middle"}),
                        "--block 'middle' is not a block of this model (its blocks: encoder, decoder, cross)");
    CHECK_FALSE(std::filesystem::exists(out / "encoder.npy"));

    const CliResult r = with({"--source", "alti-rollout", "--block", "encoder"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray a = readNpy(out / "encoder.npy");
    CHECK(a.shape == std::vector<std::int64_t>{2, 1, 5, 5});
    for (int i = 0; i < 10; ++i) {  // rollout rows of row-stochastic matrices still sum to 1
        double sum = 0;
        for (int j = 0; j < 5; ++j) sum += a.values[i * 5 + j];
        CHECK(std::abs(sum - 1) < 1e-5);
    }
    CHECK_FALSE(std::filesystem::exists(out / "decoder.npy"));
    CHECK_FALSE(std::filesystem::exists(out / "cross.npy"));

    // The built-in encoder-decoder: refused as T5 without --block, its encoder's ALTI with it.
    requireOneLineError(
            runCli({"attention", "builtin:reverse-additive", "--ids", "5,6,7,8", "--source", "alti", "--out",
                    out.string()}),
            "--source alti is defined for one residual stream: this encoder-decoder's 'decoder' and "
            "'cross' blocks mix the decoder's and the encoder's; --block encoder gives the encoder's alone");
    const auto builtinOut = freshDir("cli-alti-builtin");
    const CliResult b = runCli({"attention", "builtin:reverse-additive", "--ids", "5,6,7,8", "--source", "alti",
                                "--block", "encoder", "--out", builtinOut.string()});
    INFO(b.err);
    REQUIRE(b.code == 0);
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    RunOptions run;
    run.captureValues = true;
    const auto trace = Model::load("builtin:reverse-additive", load)->forward({5, 6, 7, 8}, run);
    const NpyArray e = readNpy(builtinOut / "encoder.npy");
    const int layers = trace->blocks()[0].layers;
    REQUIRE(e.shape == std::vector<std::int64_t>{layers, 1, 4, 4});
    for (int l = 0; l < layers; ++l) {
        const HeadMap c = altiMap(*trace, 0, l);
        for (int k = 0; k < 16; ++k) CHECK(e.values[static_cast<std::size_t>(l * 16 + k)] == c.values[k]);
    }
}

TEST_CASE("cli metrics --source measures each layer's ALTI map, each head's value-norm shares", "[cli][alti]") {
    const int n = static_cast<int>(kIds.size());
    const auto trace = tracedGpt2();
    const auto dir = freshDir("cli-alti-metrics");
    const CliResult r = metrics(dir / "alti.csv", {"--source", "alti"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto rows = readCsv(dir / "alti.csv");
    REQUIRE(rows.size() == 3);  // header + one row per layer
    CHECK(rows[0][0] == "block");
    CHECK(rows[0][2] == "head");
    CHECK(rows[0][rows[0].size() - 2] == "kl_dot_linear");
    CHECK(rows[0].back() == "sink");
    for (int l = 0; l < 2; ++l) {
        const auto& row = rows[l + 1];
        CHECK(row[1] == std::to_string(l));
        CHECK(row[2] == "-1");
        CHECK(std::abs(std::stod(row[3]) - meanRowEntropy(altiMap(*trace, 0, l))) < 1e-6);
        CHECK(row[row.size() - 2].empty());  // KL(dot || linear) compares variants of the weights
    }

    const CliResult rv = metrics(dir / "vn.json", {"--source", "value-norm"});
    INFO(rv.err);
    REQUIRE(rv.code == 0);
    const auto j = nlohmann::json::parse(slurpFile(dir / "vn.json"));
    CHECK(j.at("map_source") == "value-norm");
    REQUIRE(j.at("heads").size() == 8);   // 2 layers × 4 heads
    const auto& head = j.at("heads")[5];  // layer 1, head 1
    CHECK(head.at("kl_dot_linear").is_null());
    HeadMap shares = valueNormMap(*trace, 0, 1, 1);  // each row over its sum
    for (int i = 0; i < n; ++i) {
        double sum = 0;
        for (int k = 0; k < n; ++k) sum += shares.values[i * n + k];
        for (int k = 0; k < n; ++k) shares.values[i * n + k] = static_cast<float>(shares.values[i * n + k] / sum);
    }
    CHECK(std::abs(head.at("entropy").get<double>() - meanRowEntropy(shares)) < 1e-6);
    CHECK(std::abs(head.at("mean_distance").get<double>() - meanAttentionDistance(shares)) < 1e-5);

    // The weights stay the default, byte for byte.
    REQUIRE(metrics(dir / "plain.csv", {}).code == 0);
    REQUIRE(metrics(dir / "weights.csv", {"--source", "weights"}).code == 0);
    CHECK(slurpFile(dir / "plain.csv") == slurpFile(dir / "weights.csv"));

    // Option combinations are usage errors (exit 1), as the command's others.
    requireCliExit(metrics(dir / "x.csv", {"--source", "alti", "--flow"}), 1, "--source alti takes no --flow");
    requireCliExit(metrics(dir / "x.csv", {"--source", "alti", "--temperature", "2"}), 1,
                   "--source alti measures the model's own maps; it takes no --temperature");
    requireCliExit(metrics(dir / "x.csv", {"--block", "self"}), 1, "--block needs --source");
    CHECK_FALSE(std::filesystem::exists(dir / "x.csv"));
}

}  // namespace test_cli_alti
