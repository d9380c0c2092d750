// Interventions that re-run a model: propagated temperature and head masking (through
// RunOptions), the output change they cause, and pruning heads by importance.
// Torch-free; works for every family through Model::forward and Trace.
#pragma once

#include "attnscope/models/model.h"
#include "attnscope/runtime/progress.h"
#include "attnscope/attention/trace.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

struct TokenProbability {
    std::int64_t id = 0;
    std::string label;
    double probability = 0;
};

// How a model's output changed between two runs on the same input.
//   next-token (decoder LMs): softmax of the next-token logits; kl = KL(original ‖ changed).
//   class (classifiers): the class probabilities; kl likewise.
//   sequence (encoder-decoder): the generated outputs; kl = 0, changedPositions counts the
//     positions where the two outputs differ (a length difference counts every extra position).
//     On a forced target (Trace::targetLogProbs) also the log-probabilities of the target's
//     tokens in each run and meanLogProbChange, the mean |changed − original| over them.
//   hidden (encoders without a task head: BERT family, ViT; Trace::finalHidden): per
//     token, the cosine distance 1 − cos(original_t, changed_t) of the final hidden states;
//     meanCosineDistance is their mean over tokens (the magnitude), maxCosineDistance the largest,
//     at token mostChangedToken (mostChangedLabel: its display label). kl = 0; sameTop is true
//     when no token's distance exceeds 1e-6. A zero vector has cosine 1 with another zero vector
//     and 0 with anything else.
struct OutputChange {
    // "next-token", "class", "sequence", "hidden", "similarity" (image–text models) or "none"
    std::string kind;
    double kl = 0;                                          // nats
    std::vector<TokenProbability> originalTop, changedTop;  // next-token: top-k of each run
    std::vector<std::string> classLabels;
    std::vector<double> originalProbabilities, changedProbabilities;  // class
    std::vector<std::string> originalOutput, changedOutput;           // sequence
    int changedPositions = 0;
    std::vector<double> originalTargetLogProbs, changedTargetLogProbs;  // sequence on a forced target
    double meanLogProbChange = 0;
    std::vector<double> cosineDistances;  // hidden: one per token
    double meanCosineDistance = 0, maxCosineDistance = 0;
    double originalLogit = 0, changedLogit = 0;  // similarity: the image–text logit (image_text.h) of each run
    int mostChangedToken = -1;
    std::string mostChangedLabel;
    bool sameTop = true;  // the most likely token / class / the whole sequence is unchanged

    // One number for ranking: kl for distributions, changedPositions / max length for sequences
    // (meanLogProbChange on a forced target), meanCosineDistance for hidden states, |Δ logit| for
    // the image–text similarity.
    double magnitude() const;
};

// The k most likely next tokens of a decoder LM's trace (softmax of its next-token logits),
// labelled by model.tokenLabels; empty when the trace has no next-token logits.
std::vector<TokenProbability> nextTokenTop(const Trace& trace, const Model& model, int k = 5);

// Throws attnscope::Error when the two traces are not outputs of one model on one input.
OutputChange compareOutputs(const Trace& original, const Trace& changed, int topK = 5);

// "L:H,L:H" or "BLOCK:L:H" entries -> HeadRefs (block "" = every block). Throws
// attnscope::Error naming the malformed entry.
std::vector<HeadRef> parseHeadList(const std::string& text);
// Comma-separated layer indices "0,2" -> {0, 2}; throws attnscope::Error naming the bad entry.
std::vector<int> parseLayerList(const std::string& text);

// Checks heads and layers against a Trace's blocks; throws attnscope::Error naming the first
// out-of-range entry (an unknown block, a layer or head out of range).
void validateHeads(const Trace& trace, const std::vector<HeadRef>& heads);
void validateLayers(const Trace& trace, const std::vector<int>& layers);

// Runs the model again with options and reports the change against the original run.
struct Rerun {
    std::shared_ptr<const Trace> trace;
    OutputChange change;
};
Rerun rerun(const Model& model, const Trace& original, const RunOptions& options, int topK = 5);

// ---- Prune by importance --------------------------------------------------------------------
enum class Importance {
    Entropy,       // a head is the more important the lower its mean row entropy (focused heads)
    OutputChange,  // the output change when this head alone is masked (one forward per head)
};
struct HeadScore {
    HeadRef head;
    double score = 0;  // Entropy: -entropy; OutputChange: OutputChange::magnitude()
};
// Every head of every block, most important first (ties keep block, layer, head order).
std::vector<HeadScore> rankHeads(const Model& model, const Trace& original, Importance importance,
                                 const Progress& progress = {});

struct PruneResult {
    std::vector<HeadScore> ranking;
    std::vector<HeadRef> masked;
    std::shared_ptr<const Trace> trace;
    OutputChange change;
};
// Masks the `count` most important heads (leastImportant: the `count` least important) on top
// of base.maskHeads and re-runs. Throws for count < 0 or more heads than the model has.
// base.progress, if set, reports the ranking; topK is passed to the output change.
PruneResult pruneByImportance(const Model& model, const Trace& original, Importance importance, int count,
                              bool leastImportant = false, const RunOptions& base = {}, int topK = 5);

}  // namespace attnscope
