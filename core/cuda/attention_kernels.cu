#include "attention_kernels.h"

#include <cuda_runtime.h>

#include <cfloat>
#include <stdexcept>
#include <string>

namespace attnscope::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxHeadDim = 512;

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
    const float rowMax = blockReduceMax(localMax, reduce);
    float localSum = 0.f;
    for (int j = threadIdx.x; j <= lastKey; j += blockDim.x) {
        const float e = __expf(outRow[j] - rowMax);
        outRow[j] = e;
        localSum += e;
    }
    const float inv = 1.f / blockReduceSum(localSum, reduce);
    for (int j = threadIdx.x; j < m; j += blockDim.x) outRow[j] = j <= lastKey ? outRow[j] * inv : 0.f;
}

}  // namespace

void scaledSoftmaxRows(const float* q, const float* k, float* out, int n, int m, int d, float scale, bool causal) {
    if (d > kMaxHeadDim) throw std::runtime_error("head dimension " + std::to_string(d) + " exceeds the kernel's 512");
    if (n == 0 || m == 0) return;
    scaledSoftmaxRowsKernel<<<n, kThreads>>>(q, k, out, n, m, d, scale, causal);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess)
        throw std::runtime_error(std::string("CUDA kernel launch failed: ") + cudaGetErrorString(err));
}

}  // namespace attnscope::cuda
