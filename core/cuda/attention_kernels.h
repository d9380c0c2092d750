// CUDA kernels over raw device pointers (no LibTorch, no Qt), so they compile with any CUDA
// toolkit. Launched on the legacy default stream; callers pass contiguous float32 tensors.
//
// Errors: this folder is below runtime (core/README.md), so it cannot throw attnscope::Error.
// Each launcher returns an empty string on success, else one line saying what failed (a size
// above the kernel's limit, checked before anything touches the GPU, or a launch error); the
// caller throws attnscope::Error with it. Callers check the limits below first and take the
// generic LibTorch path beyond them.
#pragma once

#include <string>

namespace attnscope::cuda {

constexpr int kMaxHeadDim = 512;          // additive width: shared memory per row
constexpr int kMaxLinearFeatures = 1024;  // feature count of causalLinearAttention: threads per block

// scores[i, j] = softmax_j(scale · scores[i, j] + mask_ij) in place for one head: scores [n, m],
// row-major, device pointer, holding q_i·k_j (the caller's matrix product). causal masks
// j > i + (m - n) (written as 0). scale already includes 1/temperature. Reads each row twice
// (the second time mostly from L2) and writes it once.
[[nodiscard]] std::string softmaxRowsInPlace(float* scores, int n, int m, float scale, bool causal);

// out[i, j] = softmax_j(invTemperature · Σ_w v_w tanh(qa_iw + ka_jw) + mask_ij), fused, one block
// per query row, no [n, m, w] temporary. qa [n, w], ka [m, w], v [w], out [n, m]; keyAllowed
// [m] (1 = allowed) or null; causal masks j > i + (m - n). A row with no allowed key is all 0.
[[nodiscard]] std::string additiveSoftmaxRows(const float* qa, const float* ka, const float* v,
                                              const unsigned char* keyAllowed, float* out, int n, int m, int w,
                                              float invTemperature, bool causal);

// Causal linear attention output for `heads` heads: out[h, i] = Σ_{j<=i} (φq_i·φk_j) v_j /
// Σ_{j<=i} φq_i·φk_j, by prefix sums in O(n·f·dv). phiQ, phiK [heads, n, f] (features >= 0,
// f <= 1024), v and out [heads, n, dv]. A row whose denominator is 0 is 0.
[[nodiscard]] std::string causalLinearAttention(const float* phiQ, const float* phiK, const float* v, float* out,
                                                int heads, int n, int f, int dv);

}  // namespace attnscope::cuda
