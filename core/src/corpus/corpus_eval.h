// Per-example work of a corpus run (private to core/src/corpus): the unmasked runs of an example,
// the outcome of one masked set of heads, and the JSONL record files a run appends to.
#pragma once

#include "attnscope/attention/run_options.h"
#include "attnscope/corpus/corpus_data.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

class Model;
class Trace;

// The unmasked runs of one example. main: what statistics and output changes are measured on
// (encoder-decoders with a target: decoder forced along the target); greedy: encoder-decoders with
// a target only, the greedy decoding the exact match is scored on.
struct Originals {
    std::shared_ptr<const Trace> main, greedy;
};
Originals runOriginals(const Model& model, const CorpusExample& example, int maxNewTokens);

// "class", "sequence", "next-token" or "hidden"; throws attnscope::Error for a model whose output
// the corpus analyses cannot compare.
std::string outputKind(const Trace& trace);

struct Outcome {
    double metric = 0;     // the task metric (corpus_run.h)
    double change = 0;     // OutputChange::magnitude against the unmasked run
    double labelProb = 0;  // p(true label), classifiers with a label
};
// The outcome with `masked` heads masked (empty: the unmasked model itself, no re-run).
Outcome evaluate(const Model& model, const CorpusExample& example, const Originals& originals,
                 const std::vector<HeadRef>& masked);

// Every head of the trace, blocks in order, then layer, then head (HeadRef names the block).
std::vector<HeadRef> traceHeads(const Trace& trace);

// A JSONL file of records keyed by an integer field ("i": example index, "k": greedy step),
// appended one line per record and flushed, so an interrupted run keeps what it finished. Opening
// reads the complete records and drops a half-written last line.
class RecordFile {
public:
    RecordFile(std::filesystem::path path, std::string key);
    const std::map<int, nlohmann::json>& records() const { return records_; }
    bool has(int key) const { return records_.count(key) > 0; }
    void append(const nlohmann::json& record);
    // Replaces the file with these records in key order (merges).
    static void writeAll(const std::filesystem::path& path, const std::map<int, nlohmann::json>& records);

private:
    std::filesystem::path path_;
    std::string key_;
    std::map<int, nlohmann::json> records_;
};

}  // namespace attnscope
