// attention --generate and metrics --detectors through the real binary: the files they write
// parse and hold what core computes (the same model loaded here), and bad options exit as the
// README says (2 with one line for a value, 1 for the shape of the command line).
#include "attnscope/analysis/detectors.h"
#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "cli_run.h"
#include "gpt2_fixture.h"
#include "npy_read.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace test_cli_generate {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::filesystem::path gpt2Folder() {
    static const auto dir = [] {
        auto d = freshDir("cli-generate-model");
        Gpt2Spec spec;
        spec.positions = 32;
        writeGpt2Folder(d, makeGpt2(spec, 21));
        return d;
    }();
    return dir;
}

}  // namespace

TEST_CASE("cli attention --generate writes the whole sequence's maps and the generated ids", "[cli][generation]") {
    const auto out = freshDir("cli-generate-out");
    const CliResult r = runCli(
            {"attention", gpt2Folder().string(), "--ids", "3,1,4,1,5", "--generate", "6", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("generated 6 tokens (greedy)"));
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    const auto& g = tokens.at("generation");
    CHECK(g.at("prompt_ids") == nlohmann::json({3, 1, 4, 1, 5}));
    REQUIRE(g.at("generated_ids").size() == 6);
    CHECK(g.at("mode") == "greedy");
    CHECK(g.at("step_query_rows") == nlohmann::json({4, 5, 6, 7, 8, 9}));
    CHECK(tokens.at("ids").size() == 11);
    const NpyArray a = readNpy(out / "attention.npy");
    CHECK(a.shape == std::vector<std::int64_t>{2, 4, 11, 11});

    // The same generation in core, on the same folder.
    LoadOptions lo;
    lo.device = DeviceChoice::Cpu;
    const auto model = Model::load(gpt2Folder(), lo);
    GenerateOptions o;
    o.tokens = 6;
    const Generation expected = generate(*model, {3, 1, 4, 1, 5}, o);
    CHECK(g.at("generated_ids").get<std::vector<std::int64_t>>() == expected.generated);
    const HeadMap m = expected.trace->map(0, 1, 3);
    for (int i = 0; i < 11; ++i)
        for (int j = 0; j < 11; ++j)
            CHECK(a.values[((1 * 4 + 3) * 11 + i) * 11 + j] == Approx(m.at(i, j)).margin(1e-6));

    // Sampling: the seed decides, and the options are recorded.
    const auto s1 = freshDir("cli-generate-s1"), s2 = freshDir("cli-generate-s2");
    for (const auto& dir : {s1, s2})
        REQUIRE(runCli({"attention", gpt2Folder().string(), "--ids", "3,1,4", "--generate", "8", "--sample", "--seed",
                        "7", "--sample-temperature", "1.3", "--top-k", "5", "--top-p", "0.9", "--out", dir.string()})
                        .code == 0);
    const auto j1 = nlohmann::json::parse(slurpFile(s1 / "tokens.json")).at("generation");
    const auto j2 = nlohmann::json::parse(slurpFile(s2 / "tokens.json")).at("generation");
    CHECK(j1.at("generated_ids") == j2.at("generated_ids"));
    CHECK(j1.at("mode") == "sample");
    CHECK(j1.at("sampling").at("sample_temperature") == 1.3);
    CHECK(j1.at("sampling").at("top_k") == 5);
    CHECK(j1.at("sampling").at("top_p") == 0.9);
    o.tokens = 8;
    o.sampling.sample = true;
    o.sampling.seed = 7;
    o.sampling.temperature = 1.3;
    o.sampling.topK = 5;
    o.sampling.topP = 0.9;
    CHECK(j1.at("generated_ids").get<std::vector<std::int64_t>>() == generate(*model, {3, 1, 4}, o).generated);
}

TEST_CASE("cli attention --generate refuses bad options", "[cli][generation]") {
    const auto out = freshDir("cli-generate-bad");
    const std::string m = gpt2Folder().string();
    auto run = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"attention", m, "--ids", "1,2", "--out", out.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return runCli(args);
    };
    requireCliInputError(run({"--generate", "0"}), "--generate");
    requireCliInputError(run({"--generate", "40"}), "exceed the model's 32 positions");
    requireCliInputError(run({"--generate", "3", "--sample", "--sample-temperature", "0"}),
                         "--sample-temperature must be");
    requireCliInputError(run({"--generate", "3", "--sample", "--top-p", "1.5"}), "--top-p must be in (0, 1]");
    requireCliInputError(run({"--generate", "3", "--sample", "--top-p", "0"}), "--top-p must be in (0, 1]");
    requireCliInputError(run({"--generate", "3", "--sample", "--seed", "-1"}), "--seed");
    requireCliExit(run({"--sample"}), 1, "need --generate");
    requireCliExit(run({"--generate", "3", "--top-p", "0.5"}), 1, "need --sample");
    requireCliExit(run({"--generate", "3", "--mask-heads", "0:1"}), 1, "cannot be combined with --mask-heads");
    requireCliInputError(
            runCli({"attention", "builtin:reverse-dot", "--text", "abc", "--generate", "3", "--out", out.string()}),
            "encoder-decoder");
}

TEST_CASE("cli metrics --detectors adds the detector scores per head", "[cli][detectors]") {
    const auto dir = freshDir("cli-detectors");
    const std::string m = gpt2Folder().string();
    const CliResult r = runCli({"metrics", m, "--ids", "1,2,3,4", "--detectors", "--probe-length", "9", "--probe-seed",
                                "4", "--out", (dir / "m.json").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(slurpFile(dir / "m.json"));
    const auto probe = j.at("detector_probe").at("ids").get<std::vector<std::int64_t>>();
    REQUIRE(probe.size() == 19);
    CHECK(j.at("detector_probe").at("repeat_length") == 9);

    LoadOptions lo;
    lo.device = DeviceChoice::Cpu;
    const auto model = Model::load(m, lo);
    DetectorOptions o;
    o.repeatLength = 9;
    o.seed = 4;
    const DetectorReport expected = headDetectors(*model, o, {});
    CHECK(expected.probe == probe);
    REQUIRE(j.at("heads").size() == expected.heads.size());
    for (std::size_t i = 0; i < expected.heads.size(); ++i) {
        const auto& d = j.at("heads")[i].at("detectors");
        CHECK(d.at("previous_token").get<double>() == Approx(expected.heads[i].scores.previousToken).margin(1e-7));
        CHECK(d.at("duplicate_token").get<double>() == Approx(expected.heads[i].scores.duplicateToken).margin(1e-7));
        CHECK(d.at("induction").get<double>() == Approx(expected.heads[i].scores.induction).margin(1e-7));
        CHECK(d.at("first_token").get<double>() == Approx(expected.heads[i].scores.firstToken).margin(1e-7));
    }
    // CSV: the det_* columns at the end; without --detectors none.
    REQUIRE(runCli({"metrics", m, "--ids", "1,2,3", "--detectors", "--out", (dir / "m.csv").string()}).code == 0);
    const std::string csv = slurpFile(dir / "m.csv");
    CHECK(csv.substr(0, csv.find('\n')).find(",det_previous_token,det_duplicate_token,det_induction,det_first_token") !=
          std::string::npos);
    REQUIRE(runCli({"metrics", m, "--ids", "1,2,3", "--out", (dir / "plain.csv").string()}).code == 0);
    CHECK(slurpFile(dir / "plain.csv").find("det_") == std::string::npos);
    requireCliExit(runCli({"metrics", m, "--ids", "1,2", "--probe-length", "5", "--out", (dir / "x.json").string()}), 1,
                   "needs --detectors");
    requireCliInputError(runCli({"metrics", m, "--ids", "1,2", "--detectors", "--probe-length", "20", "--out",
                                 (dir / "x.json").string()}),
                         "exceeds the model's 32 positions");
    requireCliInputError(runCli({"metrics", m, "--ids", "1,2", "--detectors", "--probe-first", "99", "--out",
                                 (dir / "x.json").string()}),
                         "outside the vocabulary");
}

}  // namespace test_cli_generate
