// How a map source (attnscope/analysis/map_source.h) is shown, on screen and in exports alike
// (the window and `attnscope-cli export --workspace`): what it needs, its title and its colours.
// Colours:
//   probability-like sources (weights, ALTI, ALTI rollout): the user's colour map over 0..1;
//   raw norms and relevance: the user's colour map over the shown values' own range (min..max);
//   signed sources (gradient × attention): the diverging RdBu map over [-m, m], m = max |value|,
//   so that 0 is white at the middle of the bar (linear: a log scale cannot place signs).
#pragma once

#include "figure/colormaps.h"

#include "attnscope/analysis/map_source.h"

#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

namespace attnscope {
class Trace;
struct GradientTarget;
}  // namespace attnscope

// Whether a gradient target of this trace's model is a class index (classifiers and ViT with a
// head: the trace has class labels), else a vocabulary id (decoder language models).
bool classTarget(const attnscope::Trace& trace);
// The gradient sources' target from a saved one (none = the model's choice).
attnscope::GradientTarget gradientTarget(const attnscope::Trace& trace, std::optional<std::int64_t> target);

struct SourceColors {
    Colormap colormap = Colormap::Viridis;
    ColorScale scale;
};

// The colours of a source whose shown values span [minValue, maxValue] (ignored for the
// probability-like sources), given the user's colour map and scale.
SourceColors sourceColors(attnscope::MapSource source, Colormap chosen, ColorScaleType type, double minValue,
                          double maxValue);
// The same over the finite values given (one map, or every map of an overview).
SourceColors sourceColors(attnscope::MapSource source, Colormap chosen, ColorScaleType type,
                          const std::vector<float>& values);

// The colour bar's caption: "attention", "α·‖f(x)‖", "‖Σ α f(x)‖", "contribution", "∂s/∂α · α",
// "relevance".
QString sourceValueName(attnscope::MapSource source);
// " · Value-weighted" for a title (empty for the weights, the default).
QString sourceTitleSuffix(attnscope::MapSource source);
