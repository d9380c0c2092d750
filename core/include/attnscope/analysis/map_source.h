// What a map shows (issue 31): the attention weights, or a source derived from them and the
// values, the residual stream or the gradient. One list for the CLI (`--source`), the GUI's
// Show selector and the workspace file. Torch stays out of this header.
#pragma once

#include "attnscope/attention/trace.h"

#include <string>

namespace attnscope {

enum class MapSource {
    Weights,         // α, the attention weights                                  per head
    ValueNorm,       // α_hij · ‖f_h(x̃_j)‖₂ (analysis/value_norm.h)               per head
    ValueNormLayer,  // ‖Σ_h α_hij f_h(x̃_j)‖₂ (analysis/value_norm.h)            per layer
    Alti,            // ALTI contributions C[l, i, j] (analysis/alti.h)           per layer
    AltiRollout,     // R^l = C^l · R^(l−1) (analysis/alti.h)                     per layer
    GradWeighted,    // (∂s/∂α_hij) · α_hij, signed (analysis/gradient_sources.h) per head
    Relevance,       // Chefer et al.'s rollout of mean_h max(G, 0) (same header) per layer
};
inline constexpr MapSource kMapSources[] = {MapSource::Weights,  MapSource::ValueNorm,   MapSource::ValueNormLayer,
                                            MapSource::Alti,     MapSource::AltiRollout, MapSource::GradWeighted,
                                            MapSource::Relevance};

// "weights", "value-norm", "value-norm-layer", "alti", "alti-rollout", "grad-weighted",
// "relevance": the CLI's and the workspace file's name.
const char* sourceName(MapSource source);
// What the GUI's Show selector says: "Weights", "Value-weighted", "Value-weighted (layer)",
// "ALTI", "ALTI rollout", "Gradient × attention", "Relevance".
const char* sourceLabel(MapSource source);
// The source of that name; throws attnscope::Error naming the accepted ones otherwise.
MapSource parseMapSource(const std::string& name);

// Whether the source has one map per head (else one per layer, written with heads = 1).
inline bool perHeadSource(MapSource s) {
    return s == MapSource::Weights || s == MapSource::ValueNorm || s == MapSource::GradWeighted;
}
// Whether its values can be negative (a diverging colour map centred at 0).
inline bool signedSource(MapSource s) { return s == MapSource::GradWeighted; }
// Whether it needs a backward pass through the model (a target to explain), not the Trace alone.
inline bool gradientSource(MapSource s) { return s == MapSource::GradWeighted || s == MapSource::Relevance; }
// Whether it is a probability-like map in [0, 1] (weights, ALTI and its rollout: rows sum to 1);
// the others are raw norms or gradients with their own range.
inline bool unitRangeSource(MapSource s) {
    return s == MapSource::Weights || s == MapSource::Alti || s == MapSource::AltiRollout;
}

// A Trace-based source's map of one layer (and head, for per-head sources; ignored otherwise):
// [queries, keys] row-major. Weights: Trace::map with default options. Throws attnscope::Error for
// a gradient source (computed by analysis/gradient_sources.h from the model, not from a Trace),
// for indices out of range, and where the Trace did not record what the source needs (naming it).
HeadMap sourceMap(const Trace& trace, MapSource source, int block, int layer, int head);

}  // namespace attnscope
