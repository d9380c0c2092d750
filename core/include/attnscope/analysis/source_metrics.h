// Per-head metrics on the maps of any map source (issue 31's `metrics --source`): the source
// only changes the map provider, so sources computed elsewhere (the gradient sources, from the
// model) plug in with a provider of their own. Torch stays out of this header.
#pragma once

#include "attnscope/analysis/map_source.h"
#include "attnscope/analysis/trace_metrics.h"

#include <functional>
#include <vector>

namespace attnscope {

// A layer's (per-layer sources) or a head's (per-head sources) map: [queries, keys] row-major.
// Per-layer sources are asked with head -1.
using MapProvider = std::function<HeadMap(int block, int layer, int head)>;

// sourceMap for a Trace-based source (weights, value-norm, value-norm-layer, alti,
// alti-rollout). Asked in order (layer by layer of a block), alti-rollout carries Rˡ⁻¹ to the
// next layer, so a block costs one C and one product per layer; asked out of order it starts
// again from layer 0. The provider refers to `trace`, which must outlive it.
MapProvider traceMapProvider(const Trace& trace, MapSource source);

// The blocks of `trace` (indices, in order) whose maps of `source` can be computed: every block
// for the weights; those that recorded the values (value-norm, value-norm-layer) or ALTI's inputs
// (alti, alti-rollout: not an encoder–decoder's decoder and cross blocks, which mix two streams);
// block 0 for the gradient sources (the block GradientMaps covers). Where no block is covered it
// throws the attnscope::Error sourceMap gives for the first block (what was not recorded, and why).
std::vector<int> sourceCoveredBlocks(const Trace& trace, MapSource source);

// HeadMetrics of each map `maps` gives for the blocks `blocks` (indices into trace.blocks(), in
// that order): per-head sources one entry per head, per-layer sources one per layer with
// head = -1. Entropy, distance, first-token, sink, separator and pattern scores are metrics.h's
// HeadMap measures, computed as headMetrics computes them for the weights (options.thresholds,
// options.separatorLabels). Sources that are not probabilities (unitRangeSource false: raw
// norms, gradients) have each row divided by its sum of absolute values first (|x| / Σ_j |x_ij|;
// all-zero rows stay 0), so the measures say where a query's mass goes. klDotLinear is NaN (not
// defined for these maps); detectors are left unset.
// progress: (maps done, maps).
std::vector<HeadMetrics> sourceHeadMetrics(const Trace& trace, MapSource source, const MapProvider& maps,
                                           const std::vector<int>& blocks, const MetricsOptions& options = {});

}  // namespace attnscope
