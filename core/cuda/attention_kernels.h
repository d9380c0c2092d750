// CUDA kernels over raw device pointers (no LibTorch, no Qt), so they compile with any CUDA
// toolkit. Launched on the legacy default stream; callers pass contiguous float32 tensors.
#pragma once

namespace attnscope::cuda {

// out[i, j] = softmax_j(scale · q_i·k_j + mask_ij) for one head, fused: scores, row max, exp,
// sum and normalisation in one kernel, one block per query row.
// q [n, d], k [m, d], out [n, m], row-major, device pointers. causal masks j > i + (m - n).
// scale already includes 1/temperature. Throws std::runtime_error on a launch error.
void scaledSoftmaxRows(const float* q, const float* k, float* out, int n, int m, int d, float scale, bool causal);

}  // namespace attnscope::cuda
