// ALTI contributions (Ferrando et al. 2022) as issue 31 defines them, from what a Trace recorded
// with RunOptions::captureValues. Per layer, head-summed with the residual, with
// f_h(x̃_j) = (x̃_j W_V^h + b_V^h) W_O^h and α_hij the map the model used (value_norm.h):
//   pre-norm (and the attention branch of parallel blocks: GPT-NeoX, GPT-J, Falcon, Phi):
//     T_i(x_j) = Σ_h α_hij f_h(x̃_j) + [i = j](x_i + b_O),  y_i = Σ_j T_i(x_j) = x_i + attn_i
//   post-norm (BERT family, OPT's post-LN variant): t_ij = Σ_h α_hij f_h(x_j) + [i = j](x_i + b_O),
//     y_i = LN(Σ_j t_ij) linearised at token i's own statistics:
//     T_i(x_j) = γ ⊙ (t_ij − mean(t_ij)) / σ_i + [i = j] β,  σ_i = sqrt(var(Σ_j t_ij) + ε)
//     (RMSNorm: no mean, σ_i = sqrt(mean((Σ_j t_ij)²) + ε), no β)
//   sandwich norm (Gemma-2/3, OLMo-2: a norm on the attention output before the residual add),
//     linearised at token i's own scale as direct logit attribution does:
//     T_i(x_j) = g ⊙ Σ_h α_hij f_h(x̃_j) / rms_i + [i = j](x_i + g ⊙ b_O / rms_i)
//     with g the norm's effective scale (Gemma: 1 + γ) and rms_i that of the block's attention
//     output at i (Σ_j Σ_h α_hij f_h(x̃_j) + b_O), so Σ_j T_i(x_j) is exactly y_i = x_i + norm(attn_i)
//   The biases (b_O, β) go to the token itself; σ_i uses the norm's biased variance.
//   c_ij = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁),  C[i, j] = c_ij / Σ_k c_ik (a row with Σ = 0 stays 0)
//   rollout: R⁰ = C⁰, Rˡ = Cˡ · Rˡ⁻¹.
// T5 (RMS, pre-norm, no biases) is the pre-norm form. Encoder–decoder decoder and cross blocks
// mix two streams and are refused.
//
// Cost and memory, per layer of n queries, m keys, H heads, width E: the head outputs
// f_h(x̃_j) as [m, H, E] float32 (m = 4,096, H = 12, E = 768: 151 MB), then blocks of 64 query
// rows on every core, each holding its α [H, 64, keys] and results [64, keys]; T_i(x_j) is
// formed in registers, for one key and 8 query rows at a time (no [rows, keys, E] tensor): H·E
// multiply-adds per pair the query sees (GPT-2 small at 512 tokens: about the forward's own CPU
// time; docs/benchmarks.md). The map is float32, its sums in float64 per row; the terms of
// ‖y_i − T_i(x_j)‖₁ are float32 (C within 1e-5 of a float64 evaluation in the tests). Computed
// on the CPU whatever the trace's device. Torch stays out.
#pragma once

#include "attnscope/attention/trace.h"

#include <functional>

namespace attnscope {

// Whether every layer of block b recorded what ALTI reads (the values, the residual, b_O and
// the norm): RunOptions::captureValues on the decoder families, the encoders (BERT family,
// ViT, T5 and BART-family encoders) and the built-in models' encoder ('self', 'encoder') blocks.
bool hasAltiInputs(const Trace& trace, int block);

// C of one layer: [queries, keys], rows summing to 1. Throws attnscope::Error naming what is
// missing on a Trace without the recorded values and residuals, or on a block that mixes two
// streams (encoder–decoder cross and decoder blocks), or on an index out of range.
HeadMap altiMap(const Trace& trace, int block, int layer);
// R of one layer: Cˡ · … · C⁰ (computes every C up to that layer).
HeadMap altiRolloutMap(const Trace& trace, int block, int layer);
// Rˡ = Cˡ · previous, previous being Rˡ⁻¹ (ignored for layer 0): one step of the rollout.
HeadMap altiRolloutStep(const Trace& trace, int block, int layer, const HeadMap& previous);
// Every layer's R in order, layer(l, Rˡ): one C and one [n, n] product per layer (float32).
void altiRollout(const Trace& trace, int block, const std::function<void(int, const HeadMap&)>& layer);

}  // namespace attnscope
