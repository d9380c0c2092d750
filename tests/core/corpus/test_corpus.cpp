// Corpus analyses (core/corpus) on the built-in models: statistics and importance against
// per-example runs of the existing metrics and interventions, the pruning curve's end points,
// shard + merge and resume against one run, bad lines by line number.
#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/corpus/corpus_run.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <optional>
#include <sstream>

namespace test_corpus {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::string slurp(const std::filesystem::path& f) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// n held-out sentences of the sentiment grammar as JSONL with labels.
std::filesystem::path sentimentCorpus(const std::string& name, int n, std::vector<SentimentExample>* out = nullptr) {
    const auto dir = freshDir(name);
    TaskData data(7, Split::HeldOut);
    std::ofstream f(dir / "corpus.jsonl");
    for (int i = 0; i < n; ++i) {
        const SentimentExample e = data.sentiment();
        f << "{\"text\": \"" << e.text << "\", \"label\": \"" << (e.positive ? "positive" : "negative") << "\"}\n";
        if (out) out->push_back(e);
    }
    return dir / "corpus.jsonl";
}

const std::shared_ptr<const Model>& sentiment() {
    static const auto m = Model::load("builtin:sentiment-dot", LoadOptions{DeviceChoice::Cpu, {}});
    return m;
}

std::vector<HeadRef> allHeads(const Trace& t) {
    std::vector<HeadRef> heads;
    for (const BlockInfo& b : t.blocks())
        for (int l = 0; l < b.layers; ++l)
            for (int h = 0; h < b.heads; ++h) heads.push_back({b.name, l, h});
    return heads;
}

int argmax(const std::vector<float>& v) { return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin()); }

}  // namespace

TEST_CASE("corpus statistics and importance equal per-example metrics and masked re-runs", "[corpus]") {
    std::vector<SentimentExample> ex;
    const auto file = sentimentCorpus("corpus-stats", 6, &ex);
    const auto& model = *sentiment();
    const auto out = freshDir("corpus-stats-out");
    CorpusOptions o;
    o.pruning = false;
    const CorpusRunSummary s = runCorpus(model, file, out, o);
    REQUIRE(s.result.examples == 6);
    REQUIRE(s.result.metricName == "accuracy");
    REQUIRE(s.result.importanceName == "p(true label) drop");

    std::vector<std::shared_ptr<const Trace>> traces;
    for (const auto& e : ex) traces.push_back(model.forward(model.encodeText(e.text)));
    const auto heads = allHeads(*traces[0]);
    REQUIRE(s.result.heads.size() == heads.size());
    for (std::size_t h = 0; h < heads.size(); ++h) {
        const HeadSummary& got = s.result.heads[h];
        CHECK(got.head.block == heads[h].block);
        const int b = traces[0]->blockIndex(heads[h].block);
        // Reference: the HeadMap measures (metrics.h) on each example's map, then mean and std in double.
        std::vector<double> ent, first, prev, drop, masked;
        std::array<int, kPatternClasses> classes{};
        for (std::size_t e = 0; e < ex.size(); ++e) {
            const HeadMap map = traces[e]->map(b, heads[h].layer, heads[h].head);
            ent.push_back(meanRowEntropy(map));
            first.push_back(attentionToKeys(map, {0}));
            prev.push_back(patternScores(map).previous);
            ++classes[static_cast<int>(classifyPattern(map))];
            RunOptions mask;
            mask.maskHeads = {heads[h]};
            const Rerun r = rerun(model, *traces[e], mask);
            const int label = ex[e].positive ? 1 : 0;
            REQUIRE(traces[e]->classLabels()[label] == (ex[e].positive ? "positive" : "negative"));
            drop.push_back(traces[e]->classProbabilities()[label] - r.trace->classProbabilities()[label]);
            masked.push_back(argmax(r.trace->classProbabilities()) == label ? 1.0 : 0.0);
        }
        double m = 0, sq = 0;
        for (double v : ent) m += v / ent.size();
        for (double v : ent) sq += (v - m) * (v - m) / ent.size();
        CHECK(got.stat("entropy").spread.mean == Approx(m).epsilon(1e-5));
        CHECK(got.stat("entropy").spread.std == Approx(std::sqrt(sq)).margin(1e-5));
        CHECK(got.stat("entropy").examples == 6);
        double fm = 0, pm = 0;
        for (double v : first) fm += v / first.size();
        for (double v : prev) pm += v / prev.size();
        CHECK(got.stat("first_token").spread.mean == Approx(fm).epsilon(1e-5));
        CHECK(got.stat("previous").spread.mean == Approx(pm).epsilon(1e-5));
        for (int c = 0; c < kPatternClasses; ++c) CHECK(got.patternShare[c] == Approx(classes[c] / 6.0));
        double dm = 0, mm = 0;
        for (double v : drop) dm += v / drop.size();
        for (double v : masked) mm += v / masked.size();
        CHECK(got.importance.mean == Approx(dm).margin(1e-9));
        CHECK(got.labelProbDrop.mean == Approx(dm).margin(1e-9));
        CHECK(got.maskedMetric == Approx(mm));
    }
    // The files read back to the same result.
    const CorpusResult back = readCorpusResult(out);
    REQUIRE(back.heads.size() == heads.size());
    CHECK(back.heads[1].importance.mean == s.result.heads[1].importance.mean);
    CHECK(back.heads[1].stat("entropy").spread.std == s.result.heads[1].stat("entropy").spread.std);
    CHECK(back.heads[1].stats.size() == corpusStatKeys().size());
    CHECK(slurp(out / "heads.csv").rfind("block,layer,head,entropy_mean", 0) == 0);
}

namespace {

// A detector score (TransformerLens's Σ A⊙D over the rows with a target, divided by those rows'
// mass) written out in double from the map and the ids; nullopt when no row has a target.
std::optional<double> detectorReference(const HeadMap& a, const std::vector<std::int64_t>& ids,
                                        const std::string& kind) {
    const int n = a.rows;
    double hit = 0, mass = 0;
    bool any = false;
    for (int i = 0; i < n; ++i) {
        double rowHit = 0, rowMass = 0;
        bool target = false;
        for (int j = 0; j < n; ++j) {
            bool d = false;
            if (kind == "previous") d = j == i - 1;
            if (kind == "first") d = j == 0 && i >= 1;
            if (kind == "duplicate") d = j < i && ids[j] == ids[i];
            if (kind == "induction") d = j >= 1 && j <= i && ids[j - 1] == ids[i];
            rowMass += a.at(i, j);
            if (d) rowHit += a.at(i, j), target = true;
        }
        if (target) hit += rowHit, mass += rowMass, any = true;
    }
    if (!any) return std::nullopt;
    return hit / mass;
}

}  // namespace

TEST_CASE("corpus detector scores equal per-example detectors, over the examples that have a target", "[corpus]") {
    // ids lines: two without a repeated token (no duplicate / induction target), three with.
    const std::vector<std::vector<std::int64_t>> lines = {
            {5, 9, 12, 7, 20}, {4, 8, 4, 8, 15, 4}, {6, 11, 14, 3, 10, 13}, {7, 7, 9, 7}, {12, 5, 18, 12, 5, 18, 9}};
    const auto dir = freshDir("corpus-detectors");
    {
        std::ofstream f(dir / "ids.jsonl");
        for (const auto& l : lines) {
            f << "{\"ids\": [";
            for (std::size_t i = 0; i < l.size(); ++i) f << (i ? ", " : "") << l[i];
            f << "]}\n";
        }
    }
    const auto& model = *sentiment();
    CorpusOptions o;
    o.importance = o.pruning = false;
    const CorpusRunSummary s = runCorpus(model, dir / "ids.jsonl", dir / "out", o);
    REQUIRE(s.result.examples == 5);
    std::vector<std::shared_ptr<const Trace>> traces;
    for (const auto& l : lines) traces.push_back(model.forward(l));
    const auto heads = allHeads(*traces[0]);
    REQUIRE(s.result.heads.size() == heads.size());
    const std::vector<std::pair<std::string, std::string>> kinds = {{"det_previous_token", "previous"},
                                                                    {"det_first_token", "first"},
                                                                    {"det_duplicate_token", "duplicate"},
                                                                    {"det_induction", "induction"}};
    for (std::size_t h = 0; h < heads.size(); ++h) {
        const int b = traces[0]->blockIndex(heads[h].block);
        for (const auto& [key, kind] : kinds) {
            std::vector<double> v;
            for (std::size_t e = 0; e < lines.size(); ++e)
                if (auto x = detectorReference(traces[e]->map(b, heads[h].layer, heads[h].head), lines[e], kind))
                    v.push_back(*x);
            double m = 0, sq = 0;
            for (double x : v) m += x / v.size();
            for (double x : v) sq += (x - m) * (x - m) / v.size();
            INFO(headName(heads[h]) << " " << key);
            const StatSpread got = s.result.heads[h].stat(key);
            CHECK(got.examples == static_cast<int>(v.size()));
            CHECK(got.spread.mean == Approx(m).epsilon(1e-5));
            CHECK(got.spread.std == Approx(std::sqrt(sq)).margin(1e-6));
        }
        // Duplicate / induction exist only where a token repeats: three of the five lines.
        CHECK(s.result.heads[h].stat("det_induction").examples == 3);
        CHECK(s.result.heads[h].stat("det_previous_token").examples == 5);
    }
    // heads.json / heads.csv carry them: read back exactly, a CSV column with the counts.
    const CorpusResult back = readCorpusResult(dir / "out");
    CHECK(back.heads[2].stat("det_induction").spread.mean == s.result.heads[2].stat("det_induction").spread.mean);
    CHECK(back.heads[2].stat("det_induction").examples == 3);
    const std::string csv = slurp(dir / "out" / "heads.csv");
    CHECK(csv.find(",det_induction_mean,det_induction_std,det_induction_examples,") != std::string::npos);
}

TEST_CASE("corpus reads a version 1 heads.json (four statistics, no detectors)", "[corpus]") {
    const auto dir = freshDir("corpus-v1");
    std::ofstream(dir / "heads.json")
            << R"({"format": "attnscope-corpus", "version": 1, "model": "builtin:sentiment-dot", "output": "class",
              "metric": "accuracy", "importance": "p(true label) drop", "examples": 4, "base_metric": 0.75, "order": "",
              "heads": [{"block": "self", "layer": 0, "head": 1, "entropy": {"mean": 1.5, "std": 0.25},
                         "mean_distance": {"mean": 2, "std": 0.5}, "first_token": {"mean": 0.125, "std": 0},
                         "separator": {"mean": 0, "std": 0},
                         "patterns": {"diagonal": 0, "previous-token": 0.25, "global": 0.75, "local": 0, "sparse": 0, "mixed": 0}}],
              "prune_order": [], "pruning": [], "bad_lines": []})";
    const CorpusResult r = readCorpusResult(dir);
    REQUIRE(r.heads.size() == 1);
    CHECK(r.heads[0].stat("entropy").spread.mean == 1.5);
    CHECK(r.heads[0].stat("mean_distance").spread.std == 0.5);
    CHECK(r.heads[0].stat("entropy").examples == 4);
    CHECK(r.heads[0].stat("det_induction").examples == 0);
    CHECK(r.heads[0].patternShare[2] == 0.75);
    std::ofstream(dir / "heads.json") << R"({"format": "attnscope-corpus", "version": 3})";
    CHECK_THROWS_WITH(readCorpusResult(dir), Catch::Contains("heads.json") && Catch::Contains("version"));
}

TEST_CASE("corpus pruning curve: nothing pruned is the model's accuracy, all pruned the fully masked model's",
          "[corpus]") {
    std::vector<SentimentExample> ex;
    const auto file = sentimentCorpus("corpus-prune", 8, &ex);
    const auto& model = *sentiment();
    const CorpusRunSummary s = runCorpus(model, file, freshDir("corpus-prune-out"), {});
    const auto& curve = s.result.pruning;
    std::vector<HeadRef> heads;
    double own = 0, none = 0;
    for (const auto& e : ex) {
        const auto t = model.forward(model.encodeText(e.text));
        heads = allHeads(*t);
        const int label = e.positive ? 1 : 0;
        own += (argmax(t->classProbabilities()) == label) / 8.0;
        RunOptions all;
        all.maskHeads = heads;
        none += (argmax(rerun(model, *t, all).trace->classProbabilities()) == label) / 8.0;
    }
    REQUIRE(curve.size() == heads.size() + 1);
    CHECK(curve.front().k == 0);
    CHECK(curve.front().metric.mean == Approx(own));
    CHECK(curve.front().change.mean == 0.0);
    CHECK(curve.back().metric.mean == Approx(none));
    CHECK(s.result.baseMetric == Approx(own));
    // The order is ascending importance, and step k masks the k-th head of it.
    for (std::size_t k = 1; k < curve.size(); ++k)
        CHECK(headName(curve[k].head) == headName(s.result.pruneOrder[k - 1]));

    SECTION("greedy: the first step keeps the best single-head-masked metric") {
        CorpusOptions g;
        g.order = PruneOrder::Greedy;
        const CorpusRunSummary gs = runCorpus(model, file, freshDir("corpus-greedy-out"), g);
        REQUIRE(gs.result.pruning.size() == heads.size() + 1);
        CHECK(gs.result.orderKind == "greedy");
        double best = 0;
        for (const auto& h : s.result.heads) best = std::max(best, h.maskedMetric);
        CHECK(gs.result.pruning[1].metric.mean == Approx(best));
        CHECK(gs.result.pruning.back().metric.mean == Approx(none));
    }
}

TEST_CASE("corpus shards merged equal one run, in two stages (importance, then pruning by the merged order)",
          "[corpus]") {
    const auto file = sentimentCorpus("corpus-shards", 7);
    const auto& model = *sentiment();
    const auto one = freshDir("corpus-one");
    runCorpus(model, file, one, {});
    std::vector<std::filesystem::path> dirs;
    for (int k = 0; k < 3; ++k) {
        CorpusOptions o;
        o.shard = k;
        o.shards = 3;
        o.pruning = false;
        dirs.push_back(freshDir("corpus-shard-" + std::to_string(k)));
        runCorpus(model, file, dirs.back(), o);
    }
    const auto stage1 = freshDir("corpus-merged-1");
    const CorpusResult m1 = mergeCorpus(dirs, stage1);
    CHECK(m1.examples == 7);
    for (int k = 0; k < 3; ++k) {
        CorpusOptions o;
        o.shard = k;
        o.shards = 3;
        o.stats = o.importance = false;
        o.fixedOrder = m1.pruneOrder;
        runCorpus(model, file, dirs[k], o);
    }
    const auto merged = freshDir("corpus-merged-2");
    mergeCorpus(dirs, merged);
    for (const char* name : {"heads.json", "heads.csv", "pruning.csv"}) {
        INFO(name);
        CHECK(slurp(merged / name) == slurp(one / name));
    }
    CHECK(slurp(merged / "importance.jsonl") == slurp(one / "importance.jsonl"));

    SECTION("a missing or repeated shard is named") {
        REQUIRE_THROWS_WITH(mergeCorpus({dirs[0], dirs[1]}, freshDir("corpus-bad-merge")),
                            Catch::Contains("shard 2/3 is missing"));
        REQUIRE_THROWS_WITH(mergeCorpus({dirs[0], dirs[0], dirs[1]}, freshDir("corpus-bad-merge")),
                            Catch::Contains("given twice"));
    }
    SECTION("sharded pruning without an order is refused") {
        CorpusOptions o;
        o.shards = 2;
        REQUIRE_THROWS_WITH(runCorpus(model, file, freshDir("corpus-noorder"), o), Catch::Contains("--order"));
    }
}

TEST_CASE("corpus resume after an interrupted run equals one run", "[corpus]") {
    const auto file = sentimentCorpus("corpus-resume", 6);
    const auto& model = *sentiment();
    const auto one = freshDir("corpus-resume-one");
    runCorpus(model, file, one, {});
    const auto dir = freshDir("corpus-resume-cut");
    CorpusOptions cut;
    cut.progress = [](const std::string& phase, long long done, long long) {
        return !(phase == "pruning" && done == 4);
    };
    REQUIRE_THROWS_AS(runCorpus(model, file, dir, cut), Cancelled);
    REQUIRE_FALSE(std::filesystem::exists(dir / "heads.json"));
    {  // a record half written when the process died
        std::ofstream f(dir / "pruning.jsonl", std::ios::app);
        f << "{\"i\": 4, \"v\": [[1";
    }
    const CorpusRunSummary s = runCorpus(model, file, dir, {});
    CHECK(s.resumed == 6 + 4);  // importance done, 4 of 6 pruned
    CHECK(s.computed == 2);
    for (const char* name : {"heads.json", "heads.csv", "pruning.csv", "pruning.jsonl"}) {
        INFO(name);
        CHECK(slurp(dir / name) == slurp(one / name));
    }
    SECTION("a folder of another run is refused, naming the setting") {
        CorpusOptions other;
        other.maxTokens = 12;
        REQUIRE_THROWS_WITH(runCorpus(model, file, dir, other), Catch::Contains("another max_tokens"));
    }
}

TEST_CASE("corpus bad lines are refused or skipped with their line numbers", "[corpus]") {
    const auto dir = freshDir("corpus-bad");
    {
        std::ofstream f(dir / "bad.jsonl");
        f << "{\"text\": \"the film was good\", \"label\": \"positive\"}\n"
          << "{\"text\": \"the film was bad\"\n"  // 2: not JSON
          << "{\"label\": \"negative\"}\n"        // 3: no text
          << "\n"                                 // 4: blank, ignored
          << "{\"text\": \"the film was not very good but the plot was really great\", \"label\": 1}\n"  // 5: 13 tokens
          << "{\"text\": \"a great movie\", \"label\": \"happy\"}\n"  // 6: unknown label
          << "{\"text\": \"the cast was dull\", \"label\": 0}\n";
    }
    const auto& model = *sentiment();
    CorpusOptions o;
    o.maxTokens = 8;
    REQUIRE_THROWS_WITH(runCorpus(model, dir / "bad.jsonl", dir / "out", o), Catch::Contains("bad.jsonl:2: not JSON"));
    o.read.badLines = BadLinePolicy::Skip;
    o.pruning = false;
    const CorpusRunSummary s = runCorpus(model, dir / "bad.jsonl", dir / "out", o);
    CHECK(s.result.examples == 2);
    REQUIRE(s.result.badLines.size() == 4);
    CHECK(s.result.badLines[0].line == 2);
    CHECK(s.result.badLines[1].line == 3);
    CHECK_THAT(s.result.badLines[1].reason, Catch::Contains("no \"text\" or \"ids\""));
    CHECK(s.result.badLines[2].line == 5);
    CHECK_THAT(s.result.badLines[2].reason, Catch::Contains("more than the maximum of 8"));
    CHECK(s.result.badLines[3].line == 6);
    CHECK_THAT(s.result.badLines[3].reason, Catch::Contains("label 'happy' is not one of negative, positive"));
}

TEST_CASE("corpus on the reverse model scores exact match of the greedy output against the target", "[corpus]") {
    const auto& model = Model::load("builtin:reverse-dot", LoadOptions{DeviceChoice::Cpu, {}});
    const auto dir = freshDir("corpus-reverse");
    TaskData data(3, Split::HeldOut);
    std::vector<std::string> sources;
    {
        std::ofstream f(dir / "rev.jsonl");
        for (int i = 0; i < 5; ++i) {
            sources.push_back(data.reverseSource());
            const std::string target(sources.back().rbegin(), sources.back().rend());
            // the last target is wrong on purpose: exact match must say so
            f << "{\"text\": \"" << sources.back() << "\", \"target\": \"" << (i == 4 ? target + "0" : target)
              << "\"}\n";
        }
    }
    CorpusOptions o;
    o.stats = false;
    const CorpusRunSummary s = runCorpus(*model, dir / "rev.jsonl", dir / "out", o);
    CHECK(s.result.metricName == "exact match");
    double own = 0;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto t = model->forward(model->encodeText(sources[i]));
        std::string got;
        for (const auto& tok : t->outputTokens()) got += tok;
        own += (i < 4 && got == std::string(sources[i].rbegin(), sources[i].rend())) / 5.0;
    }
    CHECK(s.result.baseMetric == Approx(own));
    CHECK(s.result.pruning.front().metric.mean == Approx(own));
    CHECK(own <= 0.8);
}

TEST_CASE("corpus folder with both curves reports the order its last pruning pass asked for", "[corpus]") {
    const auto file = sentimentCorpus("corpus-orders", 5);
    const auto& model = *sentiment();
    const auto out = freshDir("corpus-orders-out");
    const CorpusResult byImportance = runCorpus(model, file, out, {}).result;
    REQUIRE(byImportance.orderKind == "importance");
    CorpusOptions greedy;
    greedy.stats = greedy.importance = false;
    greedy.order = PruneOrder::Greedy;
    const CorpusResult again = runCorpus(model, file, out, greedy).result;
    const CorpusResult alone = runCorpus(model, file, freshDir("corpus-orders-greedy"), greedy).result;
    CHECK(again.orderKind == "greedy");
    CHECK(readCorpusResult(out).orderKind == "greedy");
    REQUIRE(again.pruning.size() == alone.pruning.size());
    for (std::size_t k = 0; k < alone.pruning.size(); ++k) {
        CHECK(headName(again.pruning[k].head) == headName(alone.pruning[k].head));
        CHECK(again.pruning[k].metric.mean == alone.pruning[k].metric.mean);
    }
    CHECK(again.heads[0].hasImportance);  // the folder's other records stay in the result
    // Back to the importance order: its records are resumed, the curve is the first one again.
    CorpusOptions importance;
    importance.stats = importance.importance = false;
    importance.fixedOrder = byImportance.pruneOrder;
    const CorpusRunSummary back = runCorpus(model, file, out, importance);
    CHECK(back.computed == 0);
    CHECK(back.result.orderKind == "importance");
    CHECK(slurp(out / "pruning.csv").find(headName(byImportance.pruning[1].head)) != std::string::npos);
    for (std::size_t k = 0; k < byImportance.pruning.size(); ++k)
        CHECK(back.result.pruning[k].metric.mean == byImportance.pruning[k].metric.mean);
}

}  // namespace test_corpus
