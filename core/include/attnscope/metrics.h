// Measures on attention maps. Plain C++ on HeadMap (no torch), so ui code can call them.
// Entropies and divergences are in nats.
#pragma once

#include "attnscope/trace.h"

namespace attnscope {

// Mean over rows of -Σ_j p_ij log p_ij (0·log 0 = 0). Rows that are all zero are skipped.
double meanRowEntropy(const HeadMap& map);

// Mean over rows of KL(p_i ‖ q_i) = Σ_j p_ij log(p_ij / q_ij), q clamped below at 1e-12 so that a
// zero in q where p is positive gives a large finite value. Rows where p is all zero are skipped.
// Throws attnscope::Error when the shapes differ.
double meanRowKl(const HeadMap& p, const HeadMap& q);

}  // namespace attnscope
