// Training monitors: the CSV a monitored training run writes per epoch against metrics computed
// here, independently, from the checkpoints it saved (maps through the public Trace API, entropy,
// distance and cosine similarity with plain loops); the collapsed and duplicated flags.
#include "attnscope/analysis/training_monitors.h"
#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"

#include "csv_read.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace test_training_monitors {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

struct Expected {
    double entropy = 0, distance = 0, similarity = 0, layerSimilarity = 0;
};

// Per (block, layer, head) in trace order, averaged over the probes; and the probe accuracy.
std::vector<Expected> independentMetrics(const Model& model, const std::vector<ProbeExample>& probes,
                                         double& accuracy) {
    std::vector<Expected> out;
    int right = 0;
    for (std::size_t p = 0; p < probes.size(); ++p) {
        const auto trace = model.forward(model.encodeText(probes[p].input));
        const auto& probs = trace->classProbabilities();
        right += (probs[1] > probs[0] ? "positive" : "negative") == probes[p].expected;
        std::size_t index = 0;
        for (int b = 0; b < static_cast<int>(trace->blocks().size()); ++b) {
            const BlockInfo& info = trace->blocks()[b];
            for (int l = 0; l < info.layers; ++l) {
                std::vector<HeadMap> maps;
                for (int h = 0; h < info.heads; ++h) maps.push_back(trace->map(b, l, h));
                for (int h = 0; h < info.heads; ++h, ++index) {
                    if (p == 0) out.emplace_back();
                    const HeadMap& m = maps[h];
                    double entropy = 0, distance = 0;
                    for (int i = 0; i < m.rows; ++i)
                        for (int j = 0; j < m.cols; ++j) {
                            const double v = m.at(i, j);
                            if (v > 0) entropy -= v * std::log(v);
                            distance += v * std::abs(j - (i + m.cols - m.rows));
                        }
                    double sim = 0, layer = 0;
                    for (int a = 0; a < info.heads; ++a)
                        for (int c = a + 1; c < info.heads; ++c) {
                            double ab = 0, aa = 0, cc = 0;
                            for (std::size_t k = 0; k < maps[a].values.size(); ++k) {
                                ab += double(maps[a].values[k]) * maps[c].values[k];
                                aa += double(maps[a].values[k]) * maps[a].values[k];
                                cc += double(maps[c].values[k]) * maps[c].values[k];
                            }
                            const double cosv = ab / std::sqrt(aa * cc);
                            layer += cosv;
                            if (a == h || c == h) sim += cosv;
                        }
                    Expected& e = out[index];
                    e.entropy += entropy / m.rows / probes.size();
                    e.distance += distance / m.rows / probes.size();
                    e.similarity += sim / (info.heads - 1) / probes.size();
                    e.layerSimilarity += layer / (info.heads * (info.heads - 1) / 2) / probes.size();
                }
            }
        }
    }
    accuracy = static_cast<double>(right) / probes.size();
    return out;
}

TrainOptions tiny(AttentionKind kind, const std::filesystem::path& out) {
    TrainOptions o;
    o.task = BuiltinTask::Sentiment;
    o.attention = kind;
    o.seed = 4;
    o.steps = 6;
    o.epochSteps = 2;
    o.batch = 8;
    o.evalExamples = 0;
    o.out = out;
    return o;
}

}  // namespace

TEST_CASE("the monitors CSV equals metrics computed independently from each epoch's checkpoint", "[monitors]") {
    const auto out = freshDir("monitors");
    std::vector<EpochMonitor> epochs;
    int told = 0;
    const std::vector<ProbeExample> probes = builtinProbes(BuiltinTask::Sentiment, 12);
    trainMonitored(tiny(AttentionKind::Dot, out), out / "monitors.csv", epochs, probes,
                   [&](const EpochMonitor&) { ++told; });
    REQUIRE(epochs.size() == 3);
    CHECK(told == 3);
    const auto rows = readCsv(out / "monitors.csv");
    REQUIRE(rows.size() == 1 + 3 * 4);  // header + 3 epochs × 2 layers × 2 heads
    CHECK(rows[0].size() == 14);
    CHECK(rows[0][7] == "entropy");
    for (int e = 1; e <= 3; ++e) {
        INFO("epoch " << e);
        const auto folder = out / "checkpoints" / ("epoch-" + std::to_string(e));
        const auto model = Model::load(folder, LoadOptions{DeviceChoice::Cpu, {}});
        double accuracy = 0;
        const std::vector<Expected> expected = independentMetrics(*model, probes, accuracy);
        REQUIRE(expected.size() == 4);
        for (int k = 0; k < 4; ++k) {
            const auto& row = rows[static_cast<std::size_t>(1 + (e - 1) * 4 + k)];
            INFO("head row " << k);
            REQUIRE(row.size() == 14);
            CHECK(std::stoi(row[0]) == e);
            CHECK(std::stoi(row[1]) == 2 * e);
            CHECK(std::stod(row[2]) > 0);  // the epoch's mean training loss
            CHECK(std::stod(row[3]) == Approx(accuracy).margin(1e-9));
            CHECK(row[4] == "self");
            CHECK(std::stod(row[7]) == Approx(expected[k].entropy).epsilon(1e-6));
            CHECK(std::stod(row[9]) == Approx(expected[k].distance).epsilon(1e-6));
            CHECK(std::stod(row[10]) == Approx(expected[k].similarity).epsilon(1e-6));
            CHECK(std::stod(row[12]) == Approx(expected[k].layerSimilarity).epsilon(1e-6));
            // A trained dot model's heads are neither one-hot, uniform nor copies of each other here.
            CHECK(row[13].empty());
        }
    }
    // Read back (the GUI's curves): the measured epochs, head by head, to the CSV's 9 digits.
    const std::vector<EpochMonitor> back = readMonitorCsv(out / "monitors.csv");
    REQUIRE(back.size() == 3);
    for (std::size_t e = 0; e < 3; ++e) {
        CHECK(back[e].epoch == epochs[e].epoch);
        CHECK(back[e].step == epochs[e].step);
        CHECK(back[e].loss == Approx(epochs[e].loss).epsilon(1e-8));
        REQUIRE(back[e].heads.size() == epochs[e].heads.size());
        for (std::size_t h = 0; h < back[e].heads.size(); ++h) {
            CHECK(back[e].heads[h].layer == epochs[e].heads[h].layer);
            CHECK(back[e].heads[h].head == epochs[e].heads[h].head);
            CHECK(back[e].heads[h].entropy == Approx(epochs[e].heads[h].entropy).epsilon(1e-8));
            CHECK(back[e].heads[h].layerSimilarity == Approx(epochs[e].heads[h].layerSimilarity).epsilon(1e-8));
        }
    }
    std::ofstream(out / "bad.csv") << "epoch,step\n1\n";
    CHECK_THROWS_WITH(readMonitorCsv(out / "bad.csv"), Catch::Contains("bad.csv: line 2 has 1 fields"));
}

TEST_CASE("collapsed and duplicated heads are flagged", "[monitors]") {
    // A causal window of 1 keeps only the query itself: every row one-hot (entropy 0 = log 1) and
    // every head the identity map, so each head is collapsed and duplicates the other.
    const auto out = freshDir("monitors-flags");
    TrainOptions o = tiny(AttentionKind::Local, out);
    o.sparse.window = 1;
    o.steps = 2;
    std::vector<EpochMonitor> epochs;
    trainMonitored(o, out / "monitors.csv", epochs, builtinProbes(BuiltinTask::Sentiment, 4));
    REQUIRE(epochs.size() == 1);
    for (const HeadMonitor& h : epochs[0].heads) {
        CHECK(h.entropy == 0);
        CHECK(h.maxSimilarity == Approx(1.0));
        CHECK(h.flags == "collapsed-peaked+duplicated");
    }
    const auto rows = readCsv(out / "monitors.csv");
    REQUIRE(rows.size() == 5);
    CHECK(rows[1][13] == "collapsed-peaked+duplicated");
}

}  // namespace test_training_monitors
