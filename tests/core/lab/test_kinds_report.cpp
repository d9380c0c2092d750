// The kinds report on a tiny budget: kinds.csv's columns, accuracy mean and spread recomputed here
// from the trained runs' models, and scaling.csv's measured rows.
#include "attnscope/lab/kinds_report.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"

#include "csv_read.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

namespace test_kinds_report {

using namespace attnscope;
using namespace attnscope::testing;

TEST_CASE("the kinds report writes its columns from the runs it trained", "[kindsreport]") {
    KindsReportOptions o;
    o.base.task = BuiltinTask::Sentiment;
    o.base.batch = 4;
    o.kinds = {"dot", "hybrid"};
    o.seeds = {1, 2, 3};
    o.epochs = 1;
    o.epochSteps = 2;
    o.evalExamples = 8;
    o.scalingLengths = {16, 32};
    o.out = freshDir("kinds-report");
    const KindsReport report = runKindsReport(o);
    const auto kinds = readCsv(o.out / "kinds.csv");
    REQUIRE(kinds.size() == 3);
    CHECK(kinds[0] == std::vector<std::string>{"kind", "parameters", "parameter_count", "accuracy_mean",
                                               "accuracy_spread", "length_buckets", "accuracy_short", "accuracy_medium",
                                               "accuracy_long", "seconds_per_epoch", "peak_rss_mib", "mean_entropy"});
    CHECK(kinds[1][0] == "dot");
    CHECK(kinds[2][0] == "hybrid");
    CHECK(kinds[2][1] == "learned gate; width 16");  // no comma inside a cell
    const auto examples = heldOutExamples(o.base, 8);
    for (std::size_t k = 0; k < 2; ++k) {
        INFO(o.kinds[k]);
        std::vector<double> acc;
        for (int seed = 1; seed <= 3; ++seed) {
            const auto model = Model::load(o.out / "runs" / (o.kinds[k] + "-" + std::to_string(seed)),
                                           LoadOptions{DeviceChoice::Cpu, {}});
            int right = 0;
            for (const auto& [text, label] : examples) {
                const auto trace = model->forward(model->encodeText(text));
                const auto& p = trace->classProbabilities();
                right += (p[0] > p[1] ? trace->classLabels()[0] : trace->classLabels()[1]) == label;
            }
            acc.push_back(right / 8.0);
        }
        const double mean = (acc[0] + acc[1] + acc[2]) / 3;
        const double spread = *std::max_element(acc.begin(), acc.end()) - *std::min_element(acc.begin(), acc.end());
        CHECK(std::stod(kinds[k + 1][3]) == Approx(mean).margin(1e-5));
        CHECK(std::stod(kinds[k + 1][4]) == Approx(spread).margin(1e-5));
        CHECK(report.kinds[k].parameterCount == std::stoll(kinds[k + 1][2]));
        CHECK(std::stod(kinds[k + 1][9]) > 0);   // seconds per epoch
        CHECK(std::stod(kinds[k + 1][11]) > 0);  // mean head entropy
        CHECK(kinds[k + 1][5].find('|') != std::string::npos);
    }
    for (const auto& row : kinds) CHECK(row.size() == 12);
    // hybrid adds the additive projections and the gate to dot: per module 2·d·w + w + d + 1 per head
    CHECK(std::stoll(kinds[2][2]) > std::stoll(kinds[1][2]));
    const auto scaling = readCsv(o.out / "scaling.csv");
    REQUIRE(scaling.size() == 1 + 4);
    CHECK(scaling[0] == std::vector<std::string>{"kind", "n", "seconds", "peak_extra_mib", "note"});
    CHECK(scaling[1][0] == "dot");
    CHECK(scaling[2][1] == "32");
    for (std::size_t r = 1; r < scaling.size(); ++r) CHECK(std::stod(scaling[r][2]) > 0);
    const KindsReport back = readKindsReport(o.out);  // the Kinds panel's reader: the CSVs' values
    REQUIRE(back.kinds.size() == 2);
    REQUIRE(back.scaling.size() == 4);
    CHECK(back.kinds[1].parameters == "learned gate; width 16");
    CHECK(back.kinds[0].parameterCount == report.kinds[0].parameterCount);
    CHECK(back.kinds[1].accuracyLong == Approx(report.kinds[1].accuracyLong).epsilon(1e-5));
    CHECK(back.kinds[0].meanEntropy == Approx(report.kinds[0].meanEntropy).epsilon(1e-5));
    for (std::size_t r = 0; r < 4; ++r) {
        CHECK(back.scaling[r].n == report.scaling[r].n);
        CHECK(back.scaling[r].seconds == Approx(report.scaling[r].seconds).epsilon(1e-5));
        CHECK(back.scaling[r].note.empty());
    }
    // The memory a forward needs: n x n float maps (hybrid: 7 of them; linear: no map).
    CHECK(kindForwardBytes("hybrid", 16384) == 7ull * 16384 * 16384 * 4);
    CHECK(kindForwardBytes("linear", 16384) < (64ull << 20));
    o.kinds = {"dot", "sparse"};
    CHECK_THROWS_WITH(runKindsReport(o), Catch::Contains("unknown attention kind 'sparse'"));
}

}  // namespace test_kinds_report
