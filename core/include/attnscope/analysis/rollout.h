// Attention rollout and attention flow (Abnar & Zuidema, "Quantifying Attention Flow in
// Transformers", ACL 2020). Plain C++ on HeadMap (no torch).
//
// Input: one square n×n map per layer, layer 0 first, usually the mean over the layer's heads
// (averageHeads). The residual connection is modelled as in the paper:
//     Â_l = residual·I + (1 - residual)·A_l, each row renormalised to sum 1
// (residual = 0.5 is the paper's choice; a row of A_l that is all zero becomes the identity row).
#pragma once

#include "attnscope/runtime/progress.h"
#include "attnscope/attention/trace.h"

#include <string>
#include <vector>

namespace attnscope {

// Throws attnscope::Error "<what>: residual must be in [0, 1]" unless it is (NaN is not).
void checkRolloutResidual(double residual, const std::string& what = "attention rollout");

// Entry-wise mean of maps of one shape. Throws attnscope::Error for no maps or mixed shapes.
HeadMap averageHeads(const std::vector<HeadMap>& heads);

// Rollout R = Â_{L-1} · … · Â_1 · Â_0. Row i: how much the top-layer position i draws from
// input token j; rows sum to 1. Throws attnscope::Error for no layers, a non-square map, maps
// of different sizes or residual outside [0, 1].
HeadMap attentionRollout(const std::vector<HeadMap>& layers, double residual = 0.5);

struct FlowOptions {
    double residual = 0.5;
    // Top-layer positions (rows) to compute; empty = all. Rows not asked for stay zero.
    std::vector<int> rows;
    Progress progress;  // (max-flow problems solved, total); returning false throws Cancelled
};

// Attention flow: the graph has a node (l, i) for each level l = 0..L and position i (level 0 =
// input tokens, level L = the last layer's output) and an edge (l+1, i) -> (l, j) of capacity
// Â_l[i][j]. flow[i][j] = the maximum flow from (L, i) to (0, j), computed exactly (up to
// floating point) with Dinic's algorithm on the nodes that lie on some path between the two.
// Rows are not normalised (the paper leaves them as flow values; each is at most 1).
// Cost: one max-flow per (row, key) pair, each on at most L·n² arcs, so about n⁴ overall; one
// core. Measured (docs/benchmarks.md): 12 layers of 64 tokens take 0.07 s CPU for a causal model
// and 0.75 s for a bidirectional one, 32 tokens 6 ms / 55 ms; beyond ~100 tokens ask for a few
// rows. Memory: O(L·n²) arcs plus n reachability sets of (L+1)·n bytes.
HeadMap attentionFlow(const std::vector<HeadMap>& layers, const FlowOptions& options = {});

}  // namespace attnscope
