// The lab's variant in the whole-model views: the pooled thumbnail and the per-head metrics of
// every head under one VariantSpec (lab.h), so the overview and the Model tab show the kind of
// attention the lab shows (dot, additive, linear, hybrid) rather than only the model's own.
//
// Native, Dot and Linear maps (and Additive on an additive layer, which is the layer's own map)
// come straight from the Trace: Trace::pooledMap and headMetrics with that MapVariant, so a dot
// map on the CPU is never held whole. Additive on another layer needs the head's additive fit,
// and Hybrid mixes two full maps: those read labMap's map of the head. Torch stays out.
#pragma once

#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/lab/lab.h"

#include <memory>
#include <vector>

namespace attnscope {

// The additive fit of one head (what Additive and Hybrid draw on a layer that is not additive).
struct HeadFit {
    int block = 0, layer = 0, head = 0;
    std::shared_ptr<const AdditiveFit> fit;  // shared: the GUI's workers read it while the lab keeps it
};

// The fit of (block, layer, head) among fits, or null.
const AdditiveFit* fitOf(const std::vector<HeadFit>& fits, int block, int layer, int head);

// True when labMap can draw a head of this block under the variant with this fit: false only for
// Additive / Hybrid on a layer that is not additive and a head without a fit.
bool labMapAvailable(const BlockInfo& block, LabVariant variant, const AdditiveFit* fit);

// labMap(trace, block, layer, head, spec, fit).map folded into the bins of `pool` exactly as
// Trace::pooledMap folds a map (same bins, same pooling). Throws attnscope::Error like labMap
// (an index out of range, "no additive fit yet") and like Trace::pooledMap (a rectangle outside
// the map, bins < 1).
HeadMap labPooledMap(const Trace& trace, int block, int layer, int head, const PoolRequest& pool,
                     const VariantSpec& spec, const AdditiveFit* fit = nullptr);

// The same rectangle and bins of a whole map (what labPooledMap does for Additive and Hybrid).
HeadMap poolHeadMap(const HeadMap& map, const PoolRequest& pool);

// Per-head metrics (headMetrics' fields and order) of the maps labMap draws under spec; spec.map
// replaces options.map. Heads that have no map under spec (labMapAvailable false) are left out,
// so under Additive on a dot-product model only the fitted heads appear. klDotLinear is
// headMetrics' (the head's dot map against its linear map at spec's temperature, whatever the
// variant). When every block's map comes from the Trace this is headMetrics itself; otherwise
// each head's map is measured whole. progress counts every head, left out or not.
std::vector<HeadMetrics> labHeadMetrics(const Trace& trace, const VariantSpec& spec, const std::vector<HeadFit>& fits,
                                        MetricsOptions options = {});

}  // namespace attnscope
