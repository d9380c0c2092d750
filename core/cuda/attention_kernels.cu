#include "attention_kernels.h"

#include <cuda_runtime.h>

#include <cfloat>
#include <string>

namespace attnscope::cuda {

namespace {

constexpr int kThreads = 256;

__device__ float blockReduceMax(float v, float* shared) {
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? shared[lane] : -FLT_MAX;
    if (warp == 0)
        for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    v = shared[0];
    __syncthreads();
    return v;
}

__device__ float blockReduceSum(float v, float* shared) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? shared[lane] : 0.f;
    if (warp == 0)
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    v = shared[0];
    __syncthreads();
    return v;
}

// The softmax tail both row kernels share: outRow[j] holds the scores of the keys j <= lastKey
// that `keyAllowed` (when given) admits; their max over the block is rowMax. Exponentiates,
// normalises and writes 0 to every other key of the row (a row with no admitted key is all 0).
__device__ void softmaxRowInPlace(float* outRow, int m, int lastKey, const unsigned char* keyAllowed, float rowMax,
                                  float* reduce) {
    float localSum = 0.f;
    for (int j = threadIdx.x; j <= lastKey; j += blockDim.x) {
        if (keyAllowed && !keyAllowed[j]) continue;
        const float e = __expf(outRow[j] - rowMax);
        outRow[j] = e;
        localSum += e;
    }
    const float sum = blockReduceSum(localSum, reduce);
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    for (int j = threadIdx.x; j < m; j += blockDim.x) {
        const bool allowed = j <= lastKey && (!keyAllowed || keyAllowed[j]);
        outRow[j] = allowed ? outRow[j] * inv : 0.f;
    }
}

// One block per query row. The row's scores are written to `out` first and rescaled in place,
// so no [n, m] temporary exists beyond the output itself.
__global__ void scaledSoftmaxRowsKernel(const float* __restrict__ q, const float* __restrict__ k,
                                        float* __restrict__ out, int n, int m, int d, float scale, bool causal) {
    __shared__ float qRow[kMaxHeadDim];
    __shared__ float reduce[32];
    const int row = blockIdx.x;
    for (int c = threadIdx.x; c < d; c += blockDim.x) qRow[c] = q[static_cast<size_t>(row) * d + c];
    __syncthreads();

    const int lastKey = causal ? min(m - 1, row + (m - n)) : m - 1;
    float* outRow = out + static_cast<size_t>(row) * m;
    float localMax = -FLT_MAX;
    for (int j = threadIdx.x; j <= lastKey; j += blockDim.x) {
        const float* kRow = k + static_cast<size_t>(j) * d;
        float dot = 0.f;
        for (int c = 0; c < d; ++c) dot = fmaf(qRow[c], kRow[c], dot);
        dot *= scale;
        outRow[j] = dot;
        localMax = fmaxf(localMax, dot);
    }
    softmaxRowInPlace(outRow, m, lastKey, nullptr, blockReduceMax(localMax, reduce), reduce);
}

// Additive (Bahdanau) scores fused with the softmax: one block per query row; the row's
// projected query and v sit in shared memory, each thread scores keys j = tid, tid + blockDim...
// as Σ_w v_w tanh(qa_iw + ka_jw), then softmaxRowInPlace.
__global__ void additiveSoftmaxRowsKernel(const float* __restrict__ qa, const float* __restrict__ ka,
                                          const float* __restrict__ v, const unsigned char* __restrict__ keyAllowed,
                                          float* __restrict__ out, int n, int m, int w, float invTemperature,
                                          bool causal) {
    __shared__ float qRow[kMaxHeadDim];
    __shared__ float vShared[kMaxHeadDim];
    __shared__ float reduce[32];
    const int row = blockIdx.x;
    for (int c = threadIdx.x; c < w; c += blockDim.x) {
        qRow[c] = qa[static_cast<size_t>(row) * w + c];
        vShared[c] = v[c];
    }
    __syncthreads();

    const int lastKey = causal ? min(m - 1, row + (m - n)) : m - 1;
    float* outRow = out + static_cast<size_t>(row) * m;
    float localMax = -FLT_MAX;
    for (int j = threadIdx.x; j <= lastKey; j += blockDim.x) {
        if (keyAllowed && !keyAllowed[j]) continue;
        const float* kRow = ka + static_cast<size_t>(j) * w;
        float score = 0.f;
        for (int c = 0; c < w; ++c) score = fmaf(vShared[c], tanhf(qRow[c] + kRow[c]), score);
        score *= invTemperature;
        outRow[j] = score;
        localMax = fmaxf(localMax, score);
    }
    softmaxRowInPlace(outRow, m, lastKey, keyAllowed, blockReduceMax(localMax, reduce), reduce);
}

// Causal linear attention with running prefix sums: one block per (head, value column c),
// thread t owns feature t of S_c = Σ_{j<=i} φ(k_j)_t v_jc and z = Σ_{j<=i} φ(k_j)_t and walks the
// sequence once. out_ic = φ(q_i)·S_c / φ(q_i)·z (0 when the denominator is 0). O(n·f·dv) work.
__global__ void causalLinearAttentionKernel(const float* __restrict__ phiQ, const float* __restrict__ phiK,
                                            const float* __restrict__ v, float* __restrict__ out, int n, int f,
                                            int dv) {
    __shared__ float reduce[32];
    const int h = blockIdx.x, c = blockIdx.y, t = threadIdx.x;
    const float* q = phiQ + static_cast<size_t>(h) * n * f;
    const float* k = phiK + static_cast<size_t>(h) * n * f;
    const float* vh = v + static_cast<size_t>(h) * n * dv;
    float* o = out + static_cast<size_t>(h) * n * dv;
    float s = 0.f, z = 0.f;
    for (int i = 0; i < n; ++i) {
        const float kf = t < f ? k[static_cast<size_t>(i) * f + t] : 0.f;
        const float qf = t < f ? q[static_cast<size_t>(i) * f + t] : 0.f;
        s = fmaf(kf, vh[static_cast<size_t>(i) * dv + c], s);
        z += kf;
        const float num = blockReduceSum(qf * s, reduce);
        const float den = blockReduceSum(qf * z, reduce);
        if (t == 0) o[static_cast<size_t>(i) * dv + c] = den > 0.f ? num / den : 0.f;
    }
}

std::string launchError() {
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess)
        return std::string("CUDA kernel launch failed: ") + cudaGetErrorString(err);
    return {};
}

}  // namespace

std::string scaledSoftmaxRows(const float* q, const float* k, float* out, int n, int m, int d, float scale,
                              bool causal) {
    if (d < 0 || d > kMaxHeadDim)
        return "CUDA scaled softmax: head dimension " + std::to_string(d) + " is outside the kernel's 0.." +
               std::to_string(kMaxHeadDim);
    if (n <= 0 || m <= 0) return {};
    scaledSoftmaxRowsKernel<<<n, kThreads>>>(q, k, out, n, m, d, scale, causal);
    return launchError();
}

std::string additiveSoftmaxRows(const float* qa, const float* ka, const float* v, const unsigned char* keyAllowed,
                                float* out, int n, int m, int w, float invTemperature, bool causal) {
    if (w < 0 || w > kMaxHeadDim)
        return "CUDA additive softmax: width " + std::to_string(w) + " is outside the kernel's 0.." +
               std::to_string(kMaxHeadDim);
    if (n <= 0 || m <= 0) return {};
    additiveSoftmaxRowsKernel<<<n, kThreads>>>(qa, ka, v, keyAllowed, out, n, m, w, invTemperature, causal);
    return launchError();
}

std::string causalLinearAttention(const float* phiQ, const float* phiK, const float* v, float* out, int heads, int n,
                                  int f, int dv) {
    if (f < 1 || f > kMaxLinearFeatures)
        return "CUDA causal linear attention: " + std::to_string(f) + " features, outside the kernel's 1.." +
               std::to_string(kMaxLinearFeatures);
    if (heads <= 0 || n <= 0 || dv <= 0) return {};
    const int threads = ((f + 31) / 32) * 32;
    causalLinearAttentionKernel<<<dim3(heads, dv), threads>>>(phiQ, phiK, v, out, n, f, dv);
    return launchError();
}

}  // namespace attnscope::cuda
