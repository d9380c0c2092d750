// Per-head attention distillation of a pretrained model (Hedgehog, Zhang et al. 2024, "The
// Hedgehog & the Porcupine"; issue 36, docs/kinds.md): for each head of the chosen layers of one
// block, learned feature maps φ_q, φ_k (RunOptions' LearnedFeatureMap:
// φ(x) = [softmax(W x + b), softmax(−(W x + b))], W [d, d], one map for queries and one for keys
// per head) are fitted so that the linear map
//   A_ij = φ_q(q_i)·φ_k(k_j) / Σ_{j' allowed} φ_q(q_i)·φ_k(k_j')   (causal where the model is)
// matches the head's own softmax map P (the model's logits: scale, caps, biases, mask), by
// minimising the mean over query rows of KL(P_i ‖ A_i) over the training inputs, with Adam
// through LibTorch's autograd. Initialisation: W = I, b = 0 (the untrained map). Each step takes
// `batch` training inputs in an order drawn from `seed`; the result is deterministic for a seed.
//
// Reported per head, on the evaluation inputs (the held-out ones, else the training ones): the
// mean row KL (analysis/metrics.h's one KL; rows of all inputs weighted alike) of the elu+1
// linear map (MapVariant::Linear), the untrained learned map and the fitted map; and the output
// change (interventions.h's compareOutputs) when the fitted heads, and when the untrained ones,
// replace the originals in a forward (RunOptions::linearHeads).
#pragma once

#include "attnscope/attention/run_options.h"
#include "attnscope/attention/trace.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/progress.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

struct HedgehogOptions {
    std::string block;        // "" = the model's first block ("self" for decoders, "encoder" for BERT)
    std::vector<int> layers;  // empty = every layer of the block
    int steps = 200;
    double learningRate = 0.01;
    int batch = 8;  // training inputs per step (all when there are fewer)
    std::uint64_t seed = 0;
    // Progress over steps, then over the evaluation inputs; returning false throws Cancelled.
    Progress progress;
};

// Mean output change over the evaluation inputs, one forward each with the replaced heads.
struct OutputChangeSummary {
    std::string kind;          // OutputChange::kind ("next-token", "class", "hidden", "sequence")
    double meanKl = 0;         // next-token / class: mean KL(original ‖ replaced), nats
    double top1Agreement = 0;  // share of inputs whose most likely token / class (hidden: every token
                               // within 1e-6 cosine distance; sequence: the output) is unchanged
    double meanMagnitude = 0;  // mean OutputChange::magnitude()
    int inputs = 0;
};

struct HedgehogResult {
    std::string block;
    std::vector<int> layers;  // the distilled layers, in order
    int heads = 0, dim = 0;
    int trainInputs = 0, evalInputs = 0;
    bool heldOut = false;  // the evaluation inputs are held out (else they are the training ones)
    // [layers.size() · heads], layer-major: the mean row KL(P ‖ map) in nats on the evaluation
    // inputs, of the elu+1 map, the untrained learned map and the fitted one; trainKl the fitted
    // map's on the training inputs.
    std::vector<double> klElu, klInitial, klFitted, trainKl;
    std::vector<double> lossHistory;  // the training loss (mean KL over heads and rows) per step, before it
    std::vector<LinearHead> fitted;   // one per (layer, head), layer-major
    OutputChangeSummary changeFitted, changeInitial;
    double trainSeconds = 0, evalSeconds = 0;
};

// inputs: token ids, one sequence per text (at least 1; the model's input limits apply). Inputs
// i with i % 5 == 4 are held out for evaluation when there are at least 5. Throws
// attnscope::Error for no inputs, an unknown block, a layer out of range, a block whose layers are
// not dot-product attention, options out of range (steps, batch >= 1; learning rate finite, > 0),
// and the model's errors.
HedgehogResult distilHeads(const Model& model, const std::vector<std::vector<std::int64_t>>& inputs,
                           const HedgehogOptions& options = {});

// The learned linear map of one head of a Trace (what the forward uses when `head` replaces it).
// Throws attnscope::Error for an index out of range, a non-dot layer or feature maps whose width
// is not the head's.
HeadMap hedgehogMap(const Trace& trace, int block, int layer, int head, const LinearHead& maps);

// The untrained maps of a head of width d: W = I, b = 0.
LinearHead identityLinearHead(const HeadRef& head, int dim);

// Files: DIR/feature_maps.npy float32 [layers, heads, 2, d, d + 1]: per head and side (0 queries,
// 1 keys) the rows [W | b]; DIR/feature_maps.json: {"block", "layers": [...], "heads", "dim"}.
// readFeatureMaps returns the LinearHeads (layer-major); it throws attnscope::Error naming the
// file for a missing or malformed one.
void writeFeatureMaps(const std::filesystem::path& dir, const HedgehogResult& result);
std::vector<LinearHead> readFeatureMaps(const std::filesystem::path& dir);

// The whole result as `attnscope-cli distil --per-head` writes it into DIR: the feature maps
// above; kl.npy float32 [3, layers, heads] (rows: klElu, klInitial, klFitted), kl_train.npy
// [layers, heads] (trainKl), loss.csv (step,loss: lossHistory) and report.json (the options, the
// counts, the mean KLs, both output changes, the seconds; `teacher` names the model).
// hedgehogReportFiles() lists the file names. readHedgehogReport reads it all back (fitted
// included); it throws attnscope::Error naming the file for a missing or malformed one.
std::vector<std::string> hedgehogReportFiles();
void writeHedgehogReport(const std::filesystem::path& dir, const HedgehogResult& result, const HedgehogOptions& options,
                         const std::string& teacher);
HedgehogResult readHedgehogReport(const std::filesystem::path& dir);

}  // namespace attnscope
