// The attention lab on a Trace: variants of a pretrained head's map (FAVOR+ is a MapOptions
// feature map; additive fit and the hybrid live here), per-head metrics for a whole Trace,
// rollout and flow of a block, and KL between variants. Torch stays out of this header.
//
// All functions work on any Trace, whatever the family: they read the captured Q/K through
// Trace::map, so causal and padding masks are those the model used.
#pragma once

#include "attnscope/metrics.h"
#include "attnscope/progress.h"
#include "attnscope/rollout.h"
#include "attnscope/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {

// ---- Additive attention fitted to a pretrained head ------------------------------------------
//
// The head's dot-product map P (MapVariant::Dot at `temperature`) is the target. The fit learns
// W_q [width, d], W_k [width, d] and v [width] so that A_ij = softmax_j(vᵀ tanh(W_q q_i + W_k k_j)
// + mask) minimises mean over queries of KL(P_i ‖ A_i) on the current input, with Adam (full
// batch, manual gradients, no [n, n, width] tensor). q, k are the head's captured, unscaled
// vectors. Deterministic for a given seed (own RNG; initial W ~ N(0, 1/d), v ~ N(0, 1/width)).
struct AdditiveFitOptions {
    int width = 32;
    int steps = 300;
    double learningRate = 0.05;
    double temperature = 1.0;  // of the target map
    std::uint64_t seed = 0;
    // Queries used for the fit: all when the input has at most this many, else this many evenly
    // spaced ones (the returned map and KL always cover every query).
    int maxQueries = 256;
    Progress progress;  // (steps done, steps); returning false throws attnscope::Cancelled
};

struct AdditiveFit {
    HeadMap map;            // the fitted additive map, every query
    double initialKl = 0;   // mean KL(P ‖ A) before the first step, nats
    double finalKl = 0;     // after the last step
    std::vector<double> klHistory;  // on the fitted queries, one per step (before the step)
    int width = 0, headDim = 0;
    std::vector<float> wq, wk, v;  // [width, d], [width, d], [width], row-major
};

// Throws attnscope::Error for an index out of range, a layer that is not dot-product, or
// options out of range (width, steps >= 1; learning rate, temperature > 0).
AdditiveFit fitAdditive(const Trace& trace, int block, int layer, int head, const AdditiveFitOptions& options = {});

// Hybrid: g·a + (1 - g)·b entry-wise (the seeds' gated mix, g = gate in [0, 1]); rows of two
// probability maps stay probability rows. Throws for different shapes or g outside [0, 1].
HeadMap mixMaps(const HeadMap& a, const HeadMap& b, double gate);

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
