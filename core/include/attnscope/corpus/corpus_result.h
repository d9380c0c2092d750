// The results of a corpus run (corpus_run.h): per-head statistics and importance, the pruning
// curve, their files (heads.json, heads.csv, pruning.csv) and reading them back (the GUI's
// Corpus tab opens a result folder with readCorpusResult).
#pragma once

#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/attention/run_options.h"
#include "attnscope/corpus/corpus_data.h"

#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace attnscope {

// Mean and spread (population standard deviation) over the examples.
struct Spread {
    double mean = 0;
    double std = 0;
};
Spread spreadOf(const std::vector<double>& values);  // two passes, in the given order

inline constexpr int kPatternClasses = 6;  // PatternClass values, in enum order

// The per-head statistics a corpus run records: the keys of the one metric list
// (analysis/head_metric_list.h) except kl_dot_linear (a second map per head, off in corpus runs):
// entropy, mean distance, first token, sink score (left out of examples of one token, which have
// no query after the first), separator, the five pattern scores and the four detectors
// (det_previous_token, det_duplicate_token, det_induction, det_first_token), the detectors
// scored on each example's own ids (traceDetectors), not on the detector probe.
const std::vector<std::string>& corpusStatKeys();

// A statistic over the examples in which it exists: a detector whose pattern has no target in an
// example (duplicate / induction without a repeated token, a head of a block the detectors skip)
// leaves that example out, so `examples` can be below the corpus size (0: mean and std are 0).
struct StatSpread {
    Spread spread;
    int examples = 0;
};

struct HeadSummary {
    HeadRef head;  // block named
    bool hasStats = false;
    std::map<std::string, StatSpread> stats;             // by corpusStatKeys() key (units: the list's)
    std::array<double, kPatternClasses> patternShare{};  // share of examples per PatternClass
    // The statistic `key` (an empty StatSpread when the head has none).
    StatSpread stat(const std::string& key) const;
    bool hasImportance = false;
    Spread importance;        // what the pruning order ranks by (importanceName)
    Spread change;            // OutputChange::magnitude with this head alone masked
    Spread labelProbDrop;     // p(true label) unmasked − masked; 0 without labels
    double maskedMetric = 0;  // the task metric's mean with this head alone masked
};

struct PruneStep {
    int k = 0;      // heads masked
    HeadRef head;   // the k-th head masked (k >= 1)
    Spread metric;  // the task metric over the examples
    Spread change;  // output change against the unmasked model
};

struct CorpusResult {
    std::string model;           // the model's folder or builtin:NAME as given
    std::string outputKind;      // "class", "sequence", "next-token", "hidden"
    std::string metricName;      // "accuracy", "exact match", "top-1 agreement", "agreement", "hidden cosine"
    std::string importanceName;  // "p(true label) drop" or "output change (...)"
    int examples = 0;
    double baseMetric = 0;            // the task metric of the unmasked model
    std::vector<HeadSummary> heads;   // every head, blocks in Trace order, then layer, then head
    std::string orderKind;            // "importance", "greedy" or "" (no pruning)
    std::vector<HeadRef> pruneOrder;  // least important first (from importance; empty without it)
    std::vector<PruneStep> pruning;   // k = 0 … heads; empty without pruning
    std::vector<BadLine> badLines;    // skipped lines of the file
    // Attention sinks over the corpus (with statistics): a head is a sink when its mean sink
    // score over the examples exceeds sinkThreshold; sinkRate is the share of such heads among
    // the heads with statistics (trace_metrics.h's sinkRate, on corpus means).
    double sinkThreshold = kSinkThreshold;
    double sinkRate = 0;
    int sinkHeads = 0;
};

// Sets result.sinkThreshold, sinkHeads and sinkRate from the heads' "sink" statistic.
void setSinkRate(CorpusResult& result, double threshold);

// Writes heads.json, heads.csv and pruning.csv (when there is a curve) into dir, each atomically.
// Numbers are written so that they read back exactly (shortest round-trip form).
void writeCorpusResult(const CorpusResult& result, const std::filesystem::path& dir);

// Reads dir/heads.json (and nothing else: the curve is in it too). Throws attnscope::Error naming
// the file and field.
CorpusResult readCorpusResult(const std::filesystem::path& dir);

// "encoder:1:0" (block omitted when empty).
std::string headName(const HeadRef& head);

}  // namespace attnscope
