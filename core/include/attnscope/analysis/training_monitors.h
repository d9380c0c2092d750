// Training monitors (issue 36): at the end of every epoch of a built-in training run, the saved
// checkpoint is run on fixed probe inputs and each head's attention is measured, so collapsed
// and duplicated heads show while training. Written per epoch to a CSV (writeMonitorCsv).
//
// Per head, averaged over the probe inputs (maps as Trace::map gives them, MapVariant::Native):
//   entropy          mean row entropy, nats (meanRowEntropy)
//   max_entropy      mean over rows of log(number of keys the row may see): a uniform row's entropy
//   distance         mean attention distance in tokens (meanAttentionDistance)
//   similarity       mean cosine similarity of the head's map (flattened) with each other head of
//                    its layer; max_similarity the largest of them
// Per layer, layer_similarity is the mean over its pairs of heads. Flags: "collapsed-peaked" when
// entropy < 0.05 · max_entropy + 0.01 (near 0), "collapsed-uniform" when entropy > 0.95 · max_entropy
// (near log n), "duplicated" when max_similarity > 0.95.
#pragma once

#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"

#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

// An input of the probe set and what the model should answer: the reversed string (seq2seq,
// output tokens joined) or the class name (classifier).
struct ProbeExample {
    std::string input;
    std::string expected;
};

// The probe set of a built-in task: `count` held-out examples from a fixed stream (heldOutExamples).
std::vector<ProbeExample> builtinProbes(BuiltinTask task, int count = 32);

struct HeadMonitor {
    std::string block;
    int layer = 0, head = 0;
    double entropy = 0, maxEntropy = 0, distance = 0, similarity = 0, maxSimilarity = 0, layerSimilarity = 0;
    std::string flags;  // "", or flags joined by '+'
};

struct EpochMonitor {
    int epoch = 0, step = 0;
    double loss = 0;
    double accuracy = 0;  // on the probe set: exact output (seq2seq) or label (classifier)
    double kl = -1;       // distillation runs: EpochEnd::kl (not in the CSV); -1 otherwise
    std::vector<HeadMonitor> heads;
};

// Measures a model on the probe set (loss left 0).
EpochMonitor measureModel(const Model& model, const std::vector<ProbeExample>& probes);

// The CSV: a header, then one row per epoch and head:
// epoch,step,loss,accuracy,block,layer,head,entropy,max_entropy,distance,similarity,max_similarity,
// layer_similarity,flags
void writeMonitorCsv(const std::filesystem::path& file, const std::vector<EpochMonitor>& epochs);
// The CSV read back (the GUI's curves): epochs in file order, each with its heads in row order.
// Throws attnscope::Error naming the file and what is wrong.
std::vector<EpochMonitor> readMonitorCsv(const std::filesystem::path& file);

// trainBuiltin with the monitors: every epoch's checkpoint measured on `probes` (empty: 32 of the task's
// heldOutExamples), the CSV rewritten after each epoch (atomically) at `csv`, `onEpoch` (optional)
// told. Returns the result and fills `epochs`.
TrainResult trainMonitored(TrainOptions options, const std::filesystem::path& csv, std::vector<EpochMonitor>& epochs,
                           std::vector<ProbeExample> probes = {},
                           const std::function<void(const EpochMonitor&)>& onEpoch = {});

}  // namespace attnscope
