// Additive attention logits on the CPU without tanh per element: with E = exp(2x),
//     tanh(a + b) = 1 - 2 / (1 + exp(2a)·exp(2b)),
// so logits_ij = Σ_w v_w - 2 Σ_w v_w / (1 + Ea_iw · Eb_jw) costs a multiply, an add and a divide
// per (i, j, w), vectorised over keys j and split over the cores.
#pragma once

#include <ATen/ATen.h>

namespace attnscope {

// logits [n, m] = Σ_w v_w tanh(qa_iw + ka_jw) for float32 CPU tensors; entries with j beyond
// lastKey(i) = i + (m - n) are left 0 when causal. Returns an undefined tensor when some |qa|
// or |ka| exceeds 20 (where the exponential form would lose the sum's sign), so the caller
// falls back to tanh.
at::Tensor additiveLogitsCpu(const at::Tensor& qa, const at::Tensor& ka, const at::Tensor& v, bool causal);

}  // namespace attnscope
