// Corpus analysis: per-head statistics, head importance and pruning curves over a whole corpus
// file, written to a run folder that can be resumed, sharded and merged.
//
// Per example (one forward, then one re-run per masked set) the run records
//   stats       every head's statistics of the metric list (corpus_result.h corpusStatKeys:
//               entropy, mean distance, attention to the first token and to separators, the
//               pattern scores and class from analysis/trace_metrics.h, and the previous-token,
//               duplicate-token, induction and first-token detectors of analysis/detectors.h on
//               the example's own ids);
//   importance  per head, the output change when that head alone is masked (lab/interventions.h:
//               OutputChange::magnitude — KL of next-token / class distributions, mean
//               |Δ log p| of a forced target, hidden-state cosine distance), the probability of
//               the true label under the mask (classifiers with labels) and the task metric;
//   pruning     the task metric and output change after masking the k least important heads,
//               k = 0 … all heads.
// Task metric: labelled classifiers: accuracy; encoder-decoders with a target: exact match of the
// greedy output; otherwise agreement with the unmasked model (same top next token, same class,
// same sequence) or, for encoders, the mean hidden-state cosine similarity 1 − distance.
//
// Run folder: run.json (what the values depend on), stats.jsonl / pruning.jsonl / greedy.jsonl
// (one record per example or step, appended as they finish, so an interrupted run resumes), and
// the results heads.json, heads.csv, pruning.csv (corpus_result.h). Results are deterministic:
// examples are processed one at a time and aggregated in index order, so shards merged give
// exactly the numbers of one run.
#pragma once

#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/corpus/corpus_data.h"
#include "attnscope/corpus/corpus_result.h"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace attnscope {

class Model;

enum class PruneOrder { Importance, Greedy };

struct CorpusOptions {
    CorpusReadOptions read;
    int maxTokens = 0;          // 0: the model's maximum positions
    int subsetBegin = 0;        // examples [subsetBegin, subsetEnd) of the prepared corpus
    int subsetEnd = -1;         // -1: to the end
    int shard = 0, shards = 1;  // this run takes the examples whose index % shards == shard
    bool stats = true, importance = true, pruning = true;
    PruneOrder order = PruneOrder::Importance;
    // The pruning order, least important first, from a merged importance run (heads.json's
    // prune_order); empty: from this run's own importance. Sharded pruning needs it.
    std::vector<HeadRef> fixedOrder;
    int maxNewTokens = 32;  // greedy decoding limit for encoder-decoders
    PatternThresholds thresholds;
    std::vector<std::string> separatorLabels = MetricsOptions{}.separatorLabels;
    // (phase, examples or steps done, total); returning false stops with attnscope::Cancelled,
    // leaving the records done so far for a resume. phase: "stats", "importance", "pruning",
    // "greedy".
    std::function<bool(const std::string& phase, long long done, long long total)> progress;
};

struct CorpusRunSummary {
    CorpusResult result;
    int examples = 0;  // in this run's slice
    int computed = 0;  // examples (or greedy steps) computed now
    int resumed = 0;   // taken from an earlier, interrupted run's records
};

// Runs the analyses on the model over the file and writes the folder (created when missing; an
// existing file there is refused: "--out PATH: not a folder ..."). A
// folder that holds a run with other settings (another model, file, maximum, subset or shard) is
// refused with attnscope::Error naming the setting. Throws attnscope::Error for bad lines under
// BadLinePolicy::Refuse ("FILE:LINE: reason"), for pruning without an order source, for greedy
// pruning over shards; attnscope::Cancelled when progress says stop.
CorpusRunSummary runCorpus(const Model& model, const std::filesystem::path& data, const std::filesystem::path& outDir,
                           const CorpusOptions& options);

// Combines the folders of the shards 0 … N−1 of one run (each exactly once, same settings) into
// outDir: records and results identical to those of one unsharded run. Throws attnscope::Error
// naming the folder that is missing, repeated or differs, the run.json field that is missing,
// mistyped or out of range, or the record line ("FILE:LINE: ...") that is not a complete record
// of its shard; and when outDir is one of the shard folders (it would rewrite what it reads).
CorpusResult mergeCorpus(const std::vector<std::filesystem::path>& shardDirs, const std::filesystem::path& outDir);

}  // namespace attnscope
