// The one implementation of the per-map measures of metrics.h (entropy, distance, share of
// attention on given keys, pattern scores, KL), as sums over a map's rows. Rows arrive in blocks
// in any order: a whole HeadMap's rows, or a Trace's row blocks (forEachRowBlock). So a head's
// measures never need its full n×n map. Torch stays out of this header (the .cpp takes its logarithms with the
// vectorised log of runtime/vector_math.h, one call per block).
#pragma once

#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/trace_metrics.h"

#include <string>
#include <vector>

namespace attnscope {

class RowMeasures {
public:
    enum Want : unsigned {
        Entropy = 1,
        Distance = 2,
        Keys = 4,
        Patterns = 8,
        Kl = 16,
        FirstKey = 32,
        Sink = 64,
        All = 127
    };

    // A map of rows × cols. `keys`: the columns attentionToKeys sums (out-of-range and repeated
    // ones are dropped); `want`: which sums to keep (the others stay 0).
    RowMeasures(int rows, int cols, unsigned want, const std::vector<int>& keys = {}, const PatternThresholds& t = {});

    // Rows [first, first + count): row first + r has p[r·(hi - lo) .. (r + 1)·(hi - lo)) on keys
    // [lo, hi) and 0 on every other key; q, when given, holds the same cells of a second map
    // (KL(p ‖ q)). lp, when given, holds log p of the same cells (a softmax's own terms: no
    // logarithm is taken per cell then). A row that is all zero is skipped.
    void addRows(int first, int count, const float* p, int lo, int hi, const float* q = nullptr,
                 const float* lp = nullptr);
    void addRow(int i, const float* p, int lo, int hi, const float* q = nullptr) { addRows(i, 1, p, lo, hi, q); }
    // Every row of a HeadMap (q: a map of the same shape, or null).
    void addMap(const HeadMap& p, const HeadMap* q = nullptr);

    double entropy() const;     // meanRowEntropy
    double distance() const;    // meanAttentionDistance
    double keyShare() const;    // attentionToKeys
    double firstShare() const;  // attentionToKeys(map, {0}) (FirstKey)
    double sink() const;        // HeadMetrics::sink: key 0's share over the rows at positions >= 1 (Sink)
    double kl() const;          // meanRowKl
    PatternScores patterns() const;
    // One head's HeadMetrics from these sums (klDotLinear left 0; the separator share 0 when the
    // keys have no separator).
    HeadMetrics headMetrics(const std::string& block, int layer, int head, bool separators) const;

private:
    void addPatterns(int i, const float* p, int lo, int hi);

    int rows_, cols_;
    unsigned want_;
    PatternThresholds t_;
    std::vector<int> keys_;           // sorted, unique, inside [0, cols)
    std::vector<float> logP_, logQ_;  // a row's log p and log q (scratch)
    std::vector<float> top_;          // topSum's scratch (a row's group maxima)
    long long used_ = 0, diagRows_ = 0, prevRows_ = 0, sinkRows_ = 0;
    double entropy_ = 0, distance_ = 0, keyShare_ = 0, first_ = 0, sink_ = 0, kl_ = 0;
    double diagonal_ = 0, previous_ = 0, local_ = 0, sparse_ = 0;
    std::vector<double> column_;  // per key: sum over used rows (the global score)
};

}  // namespace attnscope
