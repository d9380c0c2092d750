#include "attnscope/analysis/gradient_sources.h"

#include "attnscope/runtime/error.h"

namespace attnscope {

// Scaffold: the gradient-sources helper replaces this file.
HeadMap GradientMaps::map(MapSource, int, int) const {
    throw Error("gradient sources: not implemented on this branch");
}
GradientMaps gradientSources(const Model&, const GradientInput&, const GradientTarget&, const RunOptions&,
                             const Progress&) {
    throw Error("gradient sources: not implemented on this branch");
}

}  // namespace attnscope
