// The attention lab on a Trace: the map the lab shows for a head (the model's own, a recomputed
// variant, an additive fit or the hybrid) and its KL from the dot map, and the additive fit
// itself. FAVOR+ and the linear feature maps are MapOptions of the Trace. Torch stays out of
// this header.
//
// All functions work on any Trace, whatever the family: they read the captured Q/K through
// Trace::map, so causal and padding masks are those the model used.
#pragma once

#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/attention/trace.h"
#include "attnscope/runtime/progress.h"

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
    HeadMap map;                    // the fitted additive map, every query
    double initialKl = 0;           // mean KL(P ‖ A) before the first step, nats
    double finalKl = 0;             // after the last step
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

// ---- The lab's map of a head ---------------------------------------------------------------
// Native: the model's own map (its layer's kind); Dot / Linear: the map recomputed from the
// head's q, k in that form; Additive: the layer's own map on an additive layer, else the head's
// additive fit; Hybrid: gate · additive + (1 - gate) · dot; Local / TopK / Lsh: the head's own
// logits softmaxed over the kept keys (MapVariant of the same names, options in map.sparse).
enum class LabVariant { Native, Dot, Linear, Additive, Hybrid, Local, TopK, Lsh };

struct VariantSpec {
    LabVariant variant = LabVariant::Native;
    MapOptions map;     // temperature, and the feature map / features / seed of Linear
    double gate = 0.5;  // Hybrid
};

// True when the variant needs an additive fit of the head: Additive or Hybrid on a layer that
// is not additive itself.
bool variantNeedsFit(const BlockInfo& block, LabVariant variant);

struct LabMap {
    HeadMap map;
    // Mean row KL(dot map at the same temperature ‖ map), nats; < 0 when not asked for or when
    // the map is the dot map itself (Native on a dot layer, Dot).
    double klFromDot = -1;
};

// The map the lab shows for one head. `fit` is the head's additive fit where variantNeedsFit
// (attnscope::Error "this head has no additive fit yet" when null); ignored otherwise.
LabMap labMap(const Trace& trace, int block, int layer, int head, const VariantSpec& spec,
              const AdditiveFit* fit = nullptr, bool withKlFromDot = false);

}  // namespace attnscope
