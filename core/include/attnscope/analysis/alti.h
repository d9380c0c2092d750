// ALTI contributions (Ferrando et al. 2022) as issue 31 defines them, from what a Trace recorded
// with RunOptions::captureValues. Per layer, head-summed with the residual:
//   pre-norm:  T_i(x_j) = Σ_h α_hij f_h(x̃_j) + [i = j](x_i + b_O),  y_i = Σ_j T_i(x_j)
//   post-norm: t_ij as above with x̃ = x, y_i = LN(Σ_j t_ij) linearised at token i's statistics:
//              T_i(x_j) = γ ⊙ (t_ij − mean(t_ij)) / σ_i + [i = j] β
//   c_ij = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁),  C[i, j] = c_ij / Σ_k c_ik
//   rollout: R⁰ = C⁰, Rˡ = Cˡ · Rˡ⁻¹.
#pragma once

#include "attnscope/attention/trace.h"

namespace attnscope {

// C of one layer: [queries, keys], rows summing to 1. Throws attnscope::Error naming what is
// missing on a Trace without the recorded values and residuals, or on a block that mixes two
// streams (encoder–decoder cross and decoder blocks).
HeadMap altiMap(const Trace& trace, int block, int layer);
// R of one layer: Cˡ · … · C⁰.
HeadMap altiRolloutMap(const Trace& trace, int block, int layer);

}  // namespace attnscope
