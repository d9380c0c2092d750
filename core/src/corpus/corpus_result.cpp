// Corpus results: spreads, and heads.json / heads.csv / pruning.csv written and read back.
#include "attnscope/corpus/corpus_result.h"

#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/analysis/metrics.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/head_table.h"
#include "io/json_util.h"
#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace attnscope {

namespace {

using nlohmann::json;

json spreadJson(const Spread& s) { return {{"mean", s.mean}, {"std", s.std}}; }

Spread readSpread(const json& j) { return {j.at("mean").get<double>(), j.at("std").get<double>()}; }

json headRefJson(const HeadRef& h) { return {{"block", h.block}, {"layer", h.layer}, {"head", h.head}}; }

HeadRef readHeadRef(const json& j) {
    return {j.at("block").get<std::string>(), j.at("layer").get<int>(), j.at("head").get<int>()};
}

bool isDetector(const std::string& key) { return key.rfind("det_", 0) == 0; }

}  // namespace

const std::vector<std::string>& corpusStatKeys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (const HeadMetricInfo& m : headMetricList())
            if (std::string(m.key) != "kl_dot_linear") k.push_back(m.key);
        return k;
    }();
    return keys;
}

StatSpread HeadSummary::stat(const std::string& key) const {
    const auto it = stats.find(key);
    return it == stats.end() ? StatSpread{} : it->second;
}

Spread spreadOf(const std::vector<double>& values) {
    Spread s;
    if (values.empty()) return s;
    for (double v : values) s.mean += v;
    s.mean /= static_cast<double>(values.size());
    double sq = 0;
    for (double v : values) sq += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(sq / static_cast<double>(values.size()));
    return s;
}

void setSinkRate(CorpusResult& result, double threshold) {
    int withStats = 0, sinks = 0;
    for (const HeadSummary& h : result.heads)
        if (h.hasStats) {
            ++withStats;
            const StatSpread st = h.stat("sink");
            sinks += st.examples > 0 && st.spread.mean > threshold;
        }
    result.sinkThreshold = threshold;
    result.sinkHeads = sinks;
    result.sinkRate = withStats ? static_cast<double>(sinks) / withStats : 0.0;
}

std::string headName(const HeadRef& head) {
    return (head.block.empty() ? "" : head.block + ":") + std::to_string(head.layer) + ":" + std::to_string(head.head);
}

void writeCorpusResult(const CorpusResult& r, const std::filesystem::path& dir) {
    json j = {{"format", "attnscope-corpus"},
              {"version", 2},
              {"model", r.model},
              {"output", r.outputKind},
              {"metric", r.metricName},
              {"importance", r.importanceName},
              {"examples", r.examples},
              {"base_metric", r.baseMetric},
              {"order", r.orderKind}};
    if (std::any_of(r.heads.begin(), r.heads.end(), [](const HeadSummary& h) { return h.hasStats; }))
        j["sinks"] = {{"threshold", r.sinkThreshold}, {"rate", r.sinkRate}, {"heads", r.sinkHeads}};
    j["heads"] = json::array();
    for (const HeadSummary& h : r.heads) {
        json e = headRefJson(h.head);
        if (h.hasStats) {
            json stats = json::object();
            for (const auto& [key, st] : h.stats) {
                stats[key] = spreadJson(st.spread);
                stats[key]["examples"] = st.examples;
            }
            e["stats"] = stats;
            json shares = json::object();
            for (int c = 0; c < kPatternClasses; ++c)
                shares[patternName(static_cast<PatternClass>(c))] = h.patternShare[c];
            e["patterns"] = shares;
        }
        if (h.hasImportance) {
            e["importance"] = spreadJson(h.importance);
            e["output_change"] = spreadJson(h.change);
            e["label_prob_drop"] = spreadJson(h.labelProbDrop);
            e["masked_metric"] = h.maskedMetric;
        }
        j["heads"].push_back(e);
    }
    j["prune_order"] = json::array();
    for (const HeadRef& h : r.pruneOrder) j["prune_order"].push_back(headRefJson(h));
    j["pruning"] = json::array();
    for (const PruneStep& s : r.pruning) {
        json e = {{"k", s.k}, {"metric", spreadJson(s.metric)}, {"output_change", spreadJson(s.change)}};
        if (s.k > 0) e["head"] = headRefJson(s.head);
        j["pruning"].push_back(e);
    }
    j["bad_lines"] = json::array();
    for (const BadLine& b : r.badLines) j["bad_lines"].push_back({{"line", b.line}, {"reason", b.reason}});
    writeFileAtomically(dir / "heads.json", j.dump(1) + "\n");

    // Every statistic's mean and std; detectors also the examples they exist in (StatSpread).
    std::vector<std::string> columns;
    for (const std::string& key : corpusStatKeys()) {
        columns.insert(columns.end(), {key + "_mean", key + "_std"});
        if (isDetector(key)) columns.push_back(key + "_examples");
    }
    for (int c = 0; c < kPatternClasses; ++c)
        columns.push_back(std::string("share_") + patternName(static_cast<PatternClass>(c)));
    columns.insert(columns.end(), {"importance_mean", "importance_std", "output_change_mean", "output_change_std",
                                   "label_prob_drop_mean", "label_prob_drop_std", "masked_metric"});
    HeadTable table(columns);
    for (const HeadSummary& h : r.heads) {
        // A head without statistics or importance (hasStats, hasImportance) leaves those cells empty.
        const auto stat = [&](double v) { return h.hasStats ? exactNumberText(v) : std::string(); };
        const auto imp = [&](double v) { return h.hasImportance ? exactNumberText(v) : std::string(); };
        std::vector<std::string> cells;
        for (const std::string& key : corpusStatKeys()) {
            const StatSpread st = h.stat(key);
            cells.insert(cells.end(), {stat(st.spread.mean), stat(st.spread.std)});
            if (isDetector(key)) cells.push_back(h.hasStats ? std::to_string(st.examples) : "");
        }
        for (double share : h.patternShare) cells.push_back(stat(share));
        for (const Spread& s : {h.importance, h.change, h.labelProbDrop})
            cells.insert(cells.end(), {imp(s.mean), imp(s.std)});
        cells.push_back(imp(h.maskedMetric));
        table.addRow(h.head.block, h.head.layer, h.head.head, std::move(cells));
    }
    table.write(dir / "heads.csv");

    if (!r.pruning.empty()) {
        std::ostringstream p;
        p << "k,head,metric_mean,metric_std,output_change_mean,output_change_std\n";
        for (const PruneStep& s : r.pruning)
            p << s.k << "," << (s.k > 0 ? headName(s.head) : "") << "," << exactNumberText(s.metric.mean) << ","
              << exactNumberText(s.metric.std) << "," << exactNumberText(s.change.mean) << ","
              << exactNumberText(s.change.std) << "\n";
        writeFileAtomically(dir / "pruning.csv", p.str());
    }
}

CorpusResult readCorpusResult(const std::filesystem::path& dir) {
    const std::filesystem::path file = dir / "heads.json";
    const json j = readJsonObject(file);
    CorpusResult r;
    try {
        if (j.value("format", "") != "attnscope-corpus") throw Error("\"format\" is not attnscope-corpus");
        const int version = j.value("version", 0);
        if (version < 1 || version > 2)
            throw Error("\"version\" " + std::to_string(version) + " is not 1 or 2 (a newer AttnScope wrote it?)");
        r.model = j.at("model").get<std::string>();
        r.outputKind = j.at("output").get<std::string>();
        r.metricName = j.at("metric").get<std::string>();
        r.importanceName = j.at("importance").get<std::string>();
        r.examples = j.at("examples").get<int>();
        r.baseMetric = j.at("base_metric").get<double>();
        r.orderKind = j.at("order").get<std::string>();
        for (const json& e : j.at("heads")) {
            HeadSummary h;
            h.head = readHeadRef(e);
            if (e.contains("stats")) {
                h.hasStats = true;
                for (const auto& [key, st] : e.at("stats").items())
                    h.stats[key] = {readSpread(st), st.at("examples").get<int>()};
            } else if (e.contains("entropy")) {  // version 1: four statistics over every example
                h.hasStats = true;
                for (const char* key : {"entropy", "mean_distance", "first_token", "separator"})
                    h.stats[key] = {readSpread(e.at(key)), r.examples};
            }
            if (h.hasStats) {
                for (int c = 0; c < kPatternClasses; ++c)
                    h.patternShare[c] = e.at("patterns").at(patternName(static_cast<PatternClass>(c))).get<double>();
            }
            if (e.contains("importance")) {
                h.hasImportance = true;
                h.importance = readSpread(e.at("importance"));
                h.change = readSpread(e.at("output_change"));
                h.labelProbDrop = readSpread(e.at("label_prob_drop"));
                h.maskedMetric = e.at("masked_metric").get<double>();
            }
            r.heads.push_back(h);
        }
        for (const json& e : j.at("prune_order")) r.pruneOrder.push_back(readHeadRef(e));
        for (const json& e : j.at("pruning")) {
            PruneStep s;
            s.k = e.at("k").get<int>();
            if (s.k > 0) s.head = readHeadRef(e.at("head"));
            s.metric = readSpread(e.at("metric"));
            s.change = readSpread(e.at("output_change"));
            r.pruning.push_back(s);
        }
        for (const json& e : j.at("bad_lines"))
            r.badLines.push_back({e.at("line").get<int>(), e.at("reason").get<std::string>()});
        if (j.contains("sinks")) {  // written since the sink statistic exists
            r.sinkThreshold = j.at("sinks").at("threshold").get<double>();
            r.sinkRate = j.at("sinks").at("rate").get<double>();
            r.sinkHeads = j.at("sinks").at("heads").get<int>();
        }
    } catch (const json::exception& e) {
        throw Error(file.string() + ": " + e.what());
    } catch (const Error& e) {
        throw Error(file.string() + ": " + e.what());
    }
    return r;
}

}  // namespace attnscope
