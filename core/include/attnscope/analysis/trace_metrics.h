// Analyses over a whole Trace: per-head metrics of every block, a layer's maps, rollout and flow
// of a block, head-to-head similarity and KL between two map variants of a head. They read the
// captured Q/K through Trace::map, so masks are those the model used. Torch stays out.
#pragma once

#include "attnscope/analysis/detectors.h"
#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/rollout.h"
#include "attnscope/attention/trace.h"
#include "attnscope/runtime/progress.h"

#include <functional>
#include <string>
#include <vector>

namespace attnscope {

// Mean row KL(map under `p` ‖ map under `q`) of one head: "KL between variants".
double variantKl(const Trace& trace, int block, int layer, int head, const MapOptions& p, const MapOptions& q);

// ---- Per-head metrics ---------------------------------------------------------------------
struct HeadMetrics;

struct MetricsOptions {
    MapOptions map;  // which map the metrics describe (variant, temperature)
    PatternThresholds thresholds;
    // Key labels that count as separators; the default covers BERT, RoBERTa/BART, GPT-2, Llama
    // and the built-in models.
    std::vector<std::string> separatorLabels = {"[SEP]", "</s>", "<|endoftext|>", "<eos>", "<sep>", "[EOS]"};
    // KL(dot ‖ linear with this feature map) per head of dot-product layers (0 for others and
    // when compareLinear is false).
    bool compareLinear = true;
    FeatureMap compareFeatureMap = FeatureMap::Elu;
    Progress progress;  // (heads done, total)
    // Each head's metrics as soon as they are known, in the order headMetrics returns them (the
    // GUI's Metrics tab fills in while the rest are computed). Called on the caller's thread.
    std::function<void(const HeadMetrics&)> onHead;
    int workers = 0;  // threads, each computing whole heads (their rows one block after another); 0 = every core
};

struct HeadMetrics {
    std::string block;
    int layer = 0, head = 0;
    double entropy = 0;       // meanRowEntropy, nats
    double meanDistance = 0;  // meanAttentionDistance, tokens
    double firstToken = 0;    // attentionToKeys({0})
    double separator = 0;     // attentionToKeys(separator columns); 0 when the keys have none
    PatternScores scores;
    PatternClass pattern = PatternClass::Mixed;
    double klDotLinear = 0;  // see MetricsOptions::compareLinear
    // Head detectors on the model's probe (detectors.h); NaN until attachDetectors fills them.
    DetectorScores detectors;
};

// Key columns of a block whose labels are separators.
std::vector<int> separatorColumns(const BlockInfo& block, const std::vector<std::string>& labels);

// One entry per head of every block, blocks in Trace order, then layer, then head. The heads are
// computed on every core (options.workers), each head's map read block of query rows by block
// (forEachRowBlock, with the linear map alongside for klDotLinear), so no head's full map is
// ever held; the values equal those of the HeadMap measures (metrics.h) on trace.map() up to the
// order of the sums, and do not depend on the number of workers.
std::vector<HeadMetrics> headMetrics(const Trace& trace, const MetricsOptions& options = {});

// Every map of one layer of a block, heads in order.
std::vector<HeadMap> layerMaps(const Trace& trace, int block, int layer, const MapOptions& options = {});

// Rollout / flow of a self-attention block from its head-averaged maps, all layers. Throws
// attnscope::Error for a block whose maps are not square (cross-attention). blockRollout holds
// every layer's n×n map: for long inputs use blockRolloutRows.
HeadMap blockRollout(const Trace& trace, int block, const MapOptions& options = {}, double residual = 0.5);
// Rows `rows` (top-layer positions, each in 0..n-1) of blockRollout, in that order: a
// [rows.size(), n] map. The layers are read top down, block of query rows by block (the heads of
// a block on every core), and multiplied into the rows asked for, so memory stays at
// rows.size()·n doubles plus one row block per head (n = 4,096: a few MB, where blockRollout
// needs about 1.5 GB). Cost: every layer's maps once, plus rows.size()·n² multiply-adds per layer.
// progress: (layers done, layers).
HeadMap blockRolloutRows(const Trace& trace, int block, const std::vector<int>& rows, const MapOptions& options = {},
                         double residual = 0.5, const Progress& progress = {});
HeadMap blockFlow(const Trace& trace, int block, const MapOptions& options = {}, const FlowOptions& flow = {});

// Head-to-head similarity over every head of a block: k = layers·heads maps, index l·heads + h.
std::vector<double> blockSimilarity(const Trace& trace, int block, const MapOptions& options = {});

}  // namespace attnscope
