// Attention sinks over a corpus: each head's sink statistic is the mean over the examples of its
// sink score (mean α_i0 over rows i >= 1, computed here from the maps), the sink rate the share of
// heads whose mean exceeds 0.3; heads.json carries it and reads it back.
#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/corpus/corpus_run.h"
#include "attnscope/models/model.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace test_corpus_sinks {

using namespace attnscope;
using namespace attnscope::testing;

TEST_CASE("corpus statistics give each head's mean sink score and the model's sink rate", "[corpus][sinks]") {
    const auto model = Model::load("builtin:sentiment-dot", LoadOptions{DeviceChoice::Cpu, {}});
    const std::vector<std::string> texts = {"the film was great", "a dull and boring plot", "good",
                                            "this movie was not bad but really good"};
    const auto dir = freshDir("corpus-sinks");
    {
        std::ofstream f(dir / "corpus.jsonl");
        for (const auto& t : texts) f << "{\"text\": \"" << t << "\"}\n";
    }
    CorpusOptions o;
    o.importance = o.pruning = false;
    const auto out = freshDir("corpus-sinks-out");
    const CorpusRunSummary s = runCorpus(*model, dir / "corpus.jsonl", out, o);
    REQUIRE(s.result.examples == 4);

    std::vector<std::shared_ptr<const Trace>> traces;
    for (const auto& t : texts) traces.push_back(model->forward(model->encodeText(t)));
    int sinks = 0;
    for (const HeadSummary& h : s.result.heads) {
        INFO(h.head.block << " " << h.head.layer << " " << h.head.head);
        const int b = traces[0]->blockIndex(h.head.block);
        std::vector<double> scores;  // examples with a query after the first
        for (const auto& t : traces) {
            const HeadMap map = t->map(b, h.head.layer, h.head.head);
            if (map.rows < 2) continue;
            double sum = 0;
            for (int i = 1; i < map.rows; ++i) sum += map.at(i, 0);
            scores.push_back(sum / (map.rows - 1));
        }
        double mean = 0;
        for (double v : scores) mean += v / scores.size();
        CHECK(h.stat("sink").examples == int(scores.size()));
        CHECK(h.stat("sink").spread.mean == Approx(mean).epsilon(1e-5));
        sinks += h.stat("sink").spread.mean > kSinkThreshold;
    }
    CHECK(s.result.sinkThreshold == kSinkThreshold);
    CHECK(s.result.sinkHeads == sinks);
    CHECK(s.result.sinkRate == Approx(double(sinks) / s.result.heads.size()));

    // heads.json and heads.csv carry them; reading back gives the same.
    std::ifstream in(out / "heads.json");
    const auto j = nlohmann::json::parse(in);
    CHECK(j["sinks"]["rate"].get<double>() == s.result.sinkRate);
    CHECK(j["sinks"]["heads"].get<int>() == sinks);
    CHECK(j["heads"][0]["stats"].contains("sink"));
    std::ifstream csv(out / "heads.csv");
    std::string header;
    std::getline(csv, header);
    CHECK(header.find(",first_token_mean,first_token_std,sink_mean,sink_std,") != std::string::npos);
    const CorpusResult back = readCorpusResult(out);
    CHECK(back.sinkRate == s.result.sinkRate);
    CHECK(back.sinkHeads == s.result.sinkHeads);
    CHECK(back.heads[1].stat("sink").spread.mean == s.result.heads[1].stat("sink").spread.mean);
}

}  // namespace test_corpus_sinks
