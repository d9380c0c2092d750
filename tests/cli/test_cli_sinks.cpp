// attnscope-cli metrics on soft-capped and ALiBi models (Gemma-2, BLOOM, Falcon with ALiBi):
// it runs, leaves only kl_dot_linear empty (null in JSON, an empty CSV cell) with a note, and
// every other column equals core's per-head metrics; the sink column and rate; --sink-threshold
// is validated.
#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/models/model.h"
#include "cli_run.h"
#include "csv_read.h"
#include "family_checks.h"
#include "fixtures_alibi.h"
#include "fixtures_gemma.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace test_cli_sinks {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30};
const std::string kIdText = "3,17,0,47,22,5,5,11,30";

// Runs metrics on dir (JSON and CSV) and checks them against core's metrics of the same run.
// klDefined: whether the model's layers allow the linear map.
void checkMetrics(const std::filesystem::path& dir, bool klDefined) {
    const auto out = freshDir(dir.filename().string() + "-metrics");
    const CliResult json = runCli({"metrics", dir.string(), "--ids", kIdText, "--out", (out / "m.json").string(),
                                   "--device", "cpu", "--sink-threshold", "0.25"});
    INFO(json.err);
    REQUIRE(json.code == 0);
    CHECK((json.err.find("note: kl_dot_linear is empty") != std::string::npos) == !klDefined);
    const CliResult csv =
            runCli({"metrics", dir.string(), "--ids", kIdText, "--out", (out / "m.csv").string(), "--device", "cpu"});
    REQUIRE(csv.code == 0);

    const auto model = Model::load(dir.string(), LoadOptions{DeviceChoice::Cpu, {}});
    const auto trace = model->forward(ids64(kIds));
    MetricsOptions without;
    without.compareLinear = false;
    const std::vector<HeadMetrics> core = headMetrics(*trace, without);

    const auto j = nlohmann::json::parse(slurpFile(out / "m.json"));
    REQUIRE(j["heads"].size() == core.size());
    CHECK(j.contains("notes") == !klDefined);
    int sinks = 0;
    for (std::size_t i = 0; i < core.size(); ++i) {
        const auto& h = j["heads"][i];
        INFO("head " << i);
        CHECK(h["kl_dot_linear"].is_null() == !klDefined);
        if (klDefined) CHECK(h["kl_dot_linear"].get<double>() >= 0);
        CHECK(h["entropy"].get<double>() == core[i].entropy);
        CHECK(h["mean_distance"].get<double>() == core[i].meanDistance);
        CHECK(h["first_token"].get<double>() == core[i].firstToken);
        CHECK(h["sink"].get<double>() == core[i].sink);
        CHECK(h["separator"].get<double>() == core[i].separator);
        CHECK(h["scores"]["previous"].get<double>() == core[i].scores.previous);
        CHECK(h["scores"]["sparse"].get<double>() == core[i].scores.sparse);
        CHECK(h["pattern"].get<std::string>() == patternName(core[i].pattern));
        sinks += core[i].sink > 0.25;
    }
    CHECK(j["sinks"]["threshold"].get<double>() == 0.25);
    CHECK(j["sinks"]["heads"].get<int>() == sinks);
    CHECK(j["sinks"]["rate"].get<double>() == Approx(double(sinks) / core.size()));
    CHECK(j["blocks"]["self"]["rollout"].size() == kIds.size());

    const auto rows = readCsv(out / "m.csv");
    REQUIRE(rows.size() == core.size() + 1);
    const auto& header = rows[0];
    const auto kl = std::find(header.begin(), header.end(), "kl_dot_linear") - header.begin();
    const auto sink = std::find(header.begin(), header.end(), "sink") - header.begin();
    REQUIRE(sink == kl + 1);
    for (std::size_t i = 0; i < core.size(); ++i) {
        REQUIRE(rows[i + 1].size() == header.size());
        CHECK(rows[i + 1][std::size_t(kl)].empty() == !klDefined);
        CHECK(std::stod(rows[i + 1][std::size_t(sink)]) == Approx(core[i].sink).margin(1e-8));
    }
}

}  // namespace

TEST_CASE("cli metrics runs on Gemma-2, BLOOM and Falcon with ALiBi with only the KL column empty",
          "[cli][sinks][gemma][bloom][falcon]") {
    RmsFamilySpec gemma2;
    gemma2.type = "gemma2";
    gemma2.attnSoftcap = 1.5;
    gemma2.finalSoftcap = 2.0;
    gemma2.window = 3;
    gemma2.prefix = false;
    const auto g2 = freshDir("cli-sinks-gemma2");
    writeCheckpoint(g2, makeRmsFamily(gemma2, 5));
    checkMetrics(g2, false);

    const auto bloom = freshDir("cli-sinks-bloom");
    writeCheckpoint(bloom, makeBloom(BloomSpec{}, 63));
    checkMetrics(bloom, false);

    FalconSpec alibi;  // Falcon-RW's layout: ALiBi, one key/value head per query head
    alibi.hidden = 36;
    alibi.heads = 6;
    alibi.alibi = true;
    alibi.multiQuery = false;
    alibi.parallel = false;
    alibi.bias = true;
    const auto falcon = freshDir("cli-sinks-falcon");
    writeCheckpoint(falcon, makeFalcon(alibi, 66));
    checkMetrics(falcon, false);

    // A plain Gemma of the same shape keeps its KL column.
    const auto gemma = freshDir("cli-sinks-gemma");
    writeCheckpoint(gemma, makeRmsFamily(RmsFamilySpec{}, 5));
    checkMetrics(gemma, true);
}

TEST_CASE("cli metrics --sink-threshold must lie in [0, 1)", "[cli][sinks]") {
    const auto dir = freshDir("cli-sinks-threshold");
    writeCheckpoint(dir, makeRmsFamily(RmsFamilySpec{}, 5));
    const auto out = freshDir("cli-sinks-threshold-out");
    const auto run = [&](const std::string& value) {
        return runCli({"metrics", dir.string(), "--ids", kIdText, "--out", (out / "m.json").string(), "--device", "cpu",
                       "--sink-threshold", value});
    };
    for (const char* bad : {"-0.1", "1", "1.5"}) requireCliInputError(run(bad), "--sink-threshold must be in [0, 1)");
    requireCliInputError(run("abc"), "--sink-threshold needs a finite number, got 'abc'");
    requireCliInputError(run("nan"), "--sink-threshold needs a finite number");
    CHECK(!std::filesystem::exists(out / "m.json"));
    const CliResult ok = run("0");
    REQUIRE(ok.code == 0);
    const auto j = nlohmann::json::parse(slurpFile(out / "m.json"));
    CHECK(j["sinks"]["threshold"].get<double>() == 0.0);
}

// The .json file's matrices are streamed row by row (app/cli/json_stream.h), each float32 in the
// shortest text that reads back as itself: read back and rounded to float32 they are core's
// blockRollout and blockFlow bit for bit, and every one is a floating-point JSON number.
TEST_CASE("cli metrics .json: rollout and flow read back as core's float32 values", "[cli][sinks][rollout]") {
    const auto dir = freshDir("cli-metrics-matrices");
    writeCheckpoint(dir, makeRmsFamily(RmsFamilySpec{}, 5));
    const auto out = freshDir("cli-metrics-matrices-out");
    const CliResult run = runCli({"metrics", dir.string(), "--ids", kIdText, "--out", (out / "m.json").string(),
                                  "--device", "cpu", "--flow"});
    INFO(run.err);
    REQUIRE(run.code == 0);
    const auto model = Model::load(dir.string(), LoadOptions{DeviceChoice::Cpu, {}});
    const auto trace = model->forward(ids64(kIds));
    const auto j = nlohmann::json::parse(slurpFile(out / "m.json"));
    const auto& block = j["blocks"]["self"];
    for (const char* name : {"rollout", "flow"}) {
        INFO(name);
        const HeadMap core = std::string(name) == "rollout" ? blockRollout(*trace, 0) : blockFlow(*trace, 0);
        const auto& rows = block[name];
        REQUIRE(rows.size() == static_cast<std::size_t>(core.rows));
        int fractional = 0;
        for (int r = 0; r < core.rows; ++r) {
            REQUIRE(rows[r].size() == static_cast<std::size_t>(core.cols));
            for (int c = 0; c < core.cols; ++c) {
                const auto& v = rows[r][c];
                REQUIRE(v.is_number_float());
                CHECK(static_cast<float>(v.get<double>()) == core.values[r * core.cols + c]);
                fractional += core.values[r * core.cols + c] != 0 && core.values[r * core.cols + c] != 1;
            }
        }
        CHECK(fractional > core.rows);  // the comparison above is not only of zeros and ones
    }
    const std::vector<double> similarity = blockSimilarity(*trace, 0);  // 3 layers × 4 heads: 12 × 12
    REQUIRE(block["similarity"].size() == 12);
    for (int a = 0; a < 12; ++a)
        for (int b = 0; b < 12; ++b) CHECK(block["similarity"][a][b].get<double>() == similarity[a * 12 + b]);
}

}  // namespace test_cli_sinks
