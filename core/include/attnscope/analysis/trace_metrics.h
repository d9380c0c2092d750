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
    // when compareLinear is false; NaN, "not defined", for layers whose logits add what linear
    // attention has no place for: a soft-cap, ALiBi or a position bias, see linearMapRefusal).
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
    // Sink score: the mean over the query rows at positions a_i >= 1 (metrics.h; self-attention:
    // rows 1..n-1) of α_{i,0}, the attention on the first key. Row 0 of a causal map sees only
    // key 0 and would count 1 whatever the head does, so it is left out (firstToken keeps it).
    double sink = 0;
    double separator = 0;  // attentionToKeys(separator columns); 0 when the keys have none
    PatternScores scores;
    PatternClass pattern = PatternClass::Mixed;
    double klDotLinear = 0;  // see MetricsOptions::compareLinear (NaN: not defined for this head)
    // Head detectors on the model's probe (detectors.h); NaN until attachDetectors fills them.
    DetectorScores detectors;
};

// A head is an attention sink when its sink score exceeds this (Xiao et al. 2024; Gu et al. 2024).
inline constexpr double kSinkThreshold = 0.3;
// The sink rate: the share of `heads` whose sink score exceeds `threshold` (0 for no heads).
double sinkRate(const std::vector<HeadMetrics>& heads, double threshold = kSinkThreshold);

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
// attnscope::Error for a block whose maps are not square (cross-attention). blockRollout reads
// the heads' maps block of query rows by block (blockProducts) and holds every layer's head mean
// (layers·n² floats; n = 4,096, 12 layers: 805 MB), then multiplies them (attentionRollout); for
// a few rows of a long input use blockRolloutRows.
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

// Head-to-head similarity over every head of a block: k = layers·heads maps, index l·heads + h;
// the values of similarityMatrix over the block's maps (metrics.h), from their Gram matrix
// (blockProducts) instead of k² pairwise passes.
std::vector<double> blockSimilarity(const Trace& trace, int block, const MapOptions& options = {});

// What blockProducts computes in its one pass over a block's maps.
struct BlockProducts {
    // Gram matrix of the k = layers·heads maps seen as vectors, G_ab = Σ_ij A_a[i,j]·A_b[i,j]
    // (index l·heads + h), row-major k×k, symmetric; empty unless asked for.
    std::vector<double> gram;
    // Per layer, the mean over its heads of the maps (averageHeads of layerMaps, bit for bit);
    // empty unless asked for.
    std::vector<HeadMap> layerMeans;
    // attentionRollout of the layer means, bit for bit; empty unless asked for (self-attention
    // blocks only). Causal blocks never hold their dense means for it: the pass adds them into
    // their lower triangles and multiplies those.
    HeadMap rollout;
};

// What headMetricsAndProducts computes per block beside the Gram matrix.
struct ProductsAsked {
    bool layerMeans = false;  // BlockProducts::layerMeans (attention flow needs them)
    bool rollout = false;     // BlockProducts::rollout, with this residual
    double residual = 0.5;
};

// One pass over every head's map of a block, block of query rows by block: the maps of all
// k heads for the same rows are computed (each head on one of the cores, through
// forEachRowBlock, so each value is Trace::map's) into one [k, rows·keys] float buffer, the Gram
// matrix takes the product of that buffer with its transpose (BLAS, float32, added into doubles
// per row block), and the layer means the sum over each layer's heads. No [k, n, n] tensor
// exists: peak memory is the buffer (k·64·keys floats; 144 heads at 4,096 keys: 151 MB) plus the
// layer means when asked for. The Gram matrix equals the double-precision sums over the cells to
// float32 products' rounding (3.1e-7 relative at most on the Llama shape at 1,024 tokens;
// tests/core/analysis/test_sinks_products.cpp bounds it by 1e-6).
// Throws attnscope::Error on a block out of range or layers of different map shapes.
BlockProducts blockProducts(const Trace& trace, int block, const MapOptions& options, bool gram, bool layerMeans);

// What `metrics --out F.json` needs in one pass over each block's maps: headMetrics (the same
// values, onHead called per block once its heads are done; no progress) and each block's
// blockProducts with the Gram matrix, plus the layer means and the rollout of self-attention
// blocks as asked. Each map is computed once instead of once per analysis.
struct MetricsAndProducts {
    std::vector<HeadMetrics> heads;
    std::vector<BlockProducts> blocks;  // per block of the Trace
};
MetricsAndProducts headMetricsAndProducts(const Trace& trace, const MetricsOptions& options,
                                          const ProductsAsked& asked);

// Cosine similarity from a Gram matrix of k vectors: G_ab / sqrt(G_aa·G_bb), 0 where either
// vector is all zero (what mapCosine gives).
std::vector<double> cosineFromGram(const std::vector<double>& gram);

}  // namespace attnscope
