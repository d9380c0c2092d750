// The query–key space (AttentionViz, Yeh et al. 2023): the queries and keys of one head, or of
// every head of a layer, projected jointly to 2-D by PCA.
//
// Points are the vectors the Trace keeps (after q/k norms and rotary). Before the projection
// each head's keys are translated so that their centroid equals that head's query centroid
// (AttentionViz's translation): q·(k − k̄ + q̄) = q·k + q·(q̄ − k̄) changes every logit of a row by
// the same amount, so the softmax, i.e. the map, is unchanged, and the two clouds share a centre.
// With every head of a layer and grouped-query attention, each query head gets its own copy of
// its group's keys (translated to its own queries).
//
// PCA: the points are centred on their joint mean and the two leading right singular vectors of
// that [points, head_dim] matrix (LibTorch's SVD, double precision) are the axes; each axis's
// sign is fixed so that its largest-magnitude entry is positive, so the picture is reproducible.
#pragma once

#include "attnscope/attention/trace.h"

#include <vector>

namespace attnscope {

struct QkSpaceOptions {
    int head = -1;              // a query head, or -1 for every head of the layer
    bool translateKeys = true;  // AttentionViz's key translation (see above)
};

// Points in this order: for each head taken (ascending), its queries (positions 0..n-1), then
// its keys (0..m-1).
struct QkSpace {
    int block = 0, layer = 0;
    int dim = 0;                   // head dimension
    std::vector<float> x, y;       // [points] coordinates on the two principal axes
    std::vector<int> position;     // [points] query row or key column
    std::vector<int> head;         // [points] the query head the point belongs to
    std::vector<bool> isKey;       // [points]
    std::vector<double> axes;      // [2, dim] the principal axes (unit vectors), row-major
    std::vector<double> mean;      // [dim] the joint mean the points were centred on
    double explained[2] = {0, 0};  // fraction of the total variance along each axis

    int points() const { return static_cast<int>(x.size()); }
};

// Throws attnscope::Error on an index out of range or an additive layer (its captured
// projections are no query and key vectors).
QkSpace qkSpace(const Trace& trace, int block, int layer, const QkSpaceOptions& options = {});

}  // namespace attnscope
