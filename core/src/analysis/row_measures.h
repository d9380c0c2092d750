// The one implementation of the per-map measures of metrics.h (entropy, distance, share of
// attention on given keys, pattern scores, KL), as sums over a map's rows. Rows arrive one at a
// time in any order: a whole HeadMap's rows, or a Trace's row blocks (forEachRowBlock) on
// several workers, one RowMeasures each, merged at the end. So a head's measures never need its
// full n×n map. Plain C++.
#pragma once

#include "attnscope/analysis/metrics.h"

#include <vector>

namespace attnscope {

class RowMeasures {
public:
    enum Want : unsigned { Entropy = 1, Distance = 2, Keys = 4, Patterns = 8, Kl = 16, All = 31 };

    // A map of rows × cols. `keys`: the columns attentionToKeys sums (out-of-range and repeated
    // ones are dropped); `want`: which sums to keep (the others stay 0).
    RowMeasures(int rows, int cols, unsigned want, const std::vector<int>& keys = {}, const PatternThresholds& t = {});

    // Row i: p[0 .. hi - lo) are its values on keys [lo, hi), every other value is 0; q, when
    // given, holds the same cells of a second map (KL(p ‖ q)). A row that is all zero is skipped.
    void addRow(int i, const float* p, int lo, int hi, const float* q = nullptr);
    // Every row of a HeadMap (q: a map of the same shape, or null).
    void addMap(const HeadMap& p, const HeadMap* q = nullptr);
    // Adds another accumulator of the same map (other workers' rows).
    void merge(const RowMeasures& other);

    double entropy() const;   // meanRowEntropy
    double distance() const;  // meanAttentionDistance
    double keyShare() const;  // attentionToKeys
    double kl() const;        // meanRowKl
    PatternScores patterns() const;

private:
    int rows_, cols_;
    unsigned want_;
    PatternThresholds t_;
    std::vector<char> isKey_;
    std::vector<float> scratch_;  // a row's values for the top-k of the sparse score
    long long used_ = 0, diagRows_ = 0, prevRows_ = 0;
    double entropy_ = 0, distance_ = 0, keys_ = 0, kl_ = 0;
    double diagonal_ = 0, previous_ = 0, local_ = 0, sparse_ = 0;
    std::vector<double> column_;  // per key: sum over used rows (the global score)
};

}  // namespace attnscope
