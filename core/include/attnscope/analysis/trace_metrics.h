// Analyses over a whole Trace: per-head metrics of every block, a layer's maps, rollout and flow
// of a block, head-to-head similarity and KL between two map variants of a head. They read the
// captured Q/K through Trace::map, so masks are those the model used. Torch stays out.
#pragma once

#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/rollout.h"
#include "attnscope/attention/trace.h"
#include "attnscope/runtime/progress.h"

#include <string>
#include <vector>

namespace attnscope {

// Mean row KL(map under `p` ‖ map under `q`) of one head: "KL between variants".
double variantKl(const Trace& trace, int block, int layer, int head, const MapOptions& p, const MapOptions& q);

// ---- Per-head metrics ---------------------------------------------------------------------
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
};

struct HeadMetrics {
    std::string block;
    int layer = 0, head = 0;
    double entropy = 0;        // meanRowEntropy, nats
    double meanDistance = 0;   // meanAttentionDistance, tokens
    double firstToken = 0;     // attentionToKeys({0})
    double separator = 0;      // attentionToKeys(separator columns); 0 when the keys have none
    PatternScores scores;
    PatternClass pattern = PatternClass::Mixed;
    double klDotLinear = 0;    // see MetricsOptions::compareLinear
};

// Key columns of a block whose labels are separators.
std::vector<int> separatorColumns(const BlockInfo& block, const std::vector<std::string>& labels);

// One entry per head of every block, blocks in Trace order, then layer, then head.
std::vector<HeadMetrics> headMetrics(const Trace& trace, const MetricsOptions& options = {});

// Every map of one layer of a block, heads in order.
std::vector<HeadMap> layerMaps(const Trace& trace, int block, int layer, const MapOptions& options = {});

// Rollout / flow of a self-attention block from its head-averaged maps, all layers. Throws
// attnscope::Error for a block whose maps are not square (cross-attention).
HeadMap blockRollout(const Trace& trace, int block, const MapOptions& options = {}, double residual = 0.5);
HeadMap blockFlow(const Trace& trace, int block, const MapOptions& options = {}, const FlowOptions& flow = {});

// Head-to-head similarity over every head of a block: k = layers·heads maps, index l·heads + h.
std::vector<double> blockSimilarity(const Trace& trace, int block, const MapOptions& options = {});

}  // namespace attnscope
