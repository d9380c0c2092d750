// Row helpers shared by the per-map measures (metrics.cpp, head_patterns.cpp). Plain C++.
#pragma once

#include "attnscope/attention/trace.h"

#include <algorithm>
#include <cstddef>

namespace attnscope {

// A row with no allowed key (all zeros) carries no distribution; the measures skip it.
inline bool rowIsZero(const HeadMap& m, int r) {
    const float* row = m.values.data() + static_cast<std::size_t>(r) * m.cols;
    return std::all_of(row, row + m.cols, [](float v) { return v == 0.0f; });
}

}  // namespace attnscope
