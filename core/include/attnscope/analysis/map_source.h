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
    ScoreC2C,        // DeBERTa's score terms before the softmax (attention/score_terms.h):  per head
    ScoreC2P,        //   content to content, content to position, position to content;
    ScoreP2C,        //   the three sum to the head's scores
};
inline constexpr MapSource kMapSources[] = {MapSource::Weights,  MapSource::ValueNorm,   MapSource::ValueNormLayer,
                                            MapSource::Alti,     MapSource::AltiRollout, MapSource::GradWeighted,
                                            MapSource::Relevance, MapSource::ScoreC2C,    MapSource::ScoreC2P,
                                            MapSource::ScoreP2C};

// "weights", "value-norm", "value-norm-layer", "alti", "alti-rollout", "grad-weighted",
// "relevance", "score-c2c", "score-c2p", "score-p2c": the CLI's and the workspace file's name.
const char* sourceName(MapSource source);
// What the GUI's Show selector says: "Weights", "Value-weighted", "Value-weighted (layer)",
// "ALTI", "ALTI rollout", "Gradient × attention", "Relevance", "Score: content → content (c2c)", …
const char* sourceLabel(MapSource source);
// The source of that name; throws attnscope::Error naming the accepted ones otherwise.
MapSource parseMapSource(const std::string& name);

// Whether the source has one map per head (else one per layer, written with heads = 1).
// DeBERTa's score terms: which of ScoreTerms' terms (0 c2c, 1 c2p, 2 p2c), or -1 for another source.
inline int scoreTermOf(MapSource s) {
    return s == MapSource::ScoreC2C ? 0 : s == MapSource::ScoreC2P ? 1 : s == MapSource::ScoreP2C ? 2 : -1;
}
inline bool scoreTermSource(MapSource s) { return scoreTermOf(s) >= 0; }
inline bool perHeadSource(MapSource s) {
    return s == MapSource::Weights || s == MapSource::ValueNorm || s == MapSource::GradWeighted || scoreTermSource(s);
}
// Whether its values can be negative (a diverging colour map centred at 0).
inline bool signedSource(MapSource s) { return s == MapSource::GradWeighted || scoreTermSource(s); }
// Whether it needs a backward pass through the model (a target to explain), not the Trace alone.
inline bool gradientSource(MapSource s) { return s == MapSource::GradWeighted || s == MapSource::Relevance; }
// What a forward must record for the source's maps (RunOptions): the value vectors (value-norm,
// value-norm-layer, ALTI and its rollout) or the score terms (score-*). The weights need neither,
// and the gradient sources run the model again.
inline bool sourceNeedsValues(MapSource s) {
    return s != MapSource::Weights && !gradientSource(s) && !scoreTermSource(s);
}
inline bool sourceNeedsTerms(MapSource s) { return scoreTermSource(s); }
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
