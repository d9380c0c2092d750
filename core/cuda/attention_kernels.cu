#include "attention_kernels.h"

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>
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

// Row softmax in place over scores the caller computed (q kᵀ by cuBLAS): one block per row.
// Pass 1 reads the row once for its max and sum together (online: each thread keeps a running
// max and a sum rescaled whenever the max grows, then the block combines the pairs); pass 2
// reads it again (from L2: a row is m·4 bytes) and writes the probabilities, 0 past the causal
// limit. Float4 loads and stores when rows are 16-byte aligned (m % 4 == 0).
__device__ void combineMaxSum(float& mx, float& sum, float otherMx, float otherSum) {
    const float top = fmaxf(mx, otherMx);
    if (top == -INFINITY) return;  // both empty
    sum = sum * __expf(mx - top) + otherSum * __expf(otherMx - top);
    mx = top;
}

__device__ void accumulate(float& mx, float& sum, float x) {
    if (x > mx) {
        sum = sum * __expf(mx - x) + 1.f;
        mx = x;
    } else {
        sum += __expf(x - mx);
    }
}

template <bool Vec4>
__global__ void softmaxRowsInPlaceKernel(float* __restrict__ scores, int n, int m, float scale, bool causal) {
    __shared__ float shMax[32], shSum[32];
    const int row = blockIdx.x;
    const int lastKey = causal ? min(m - 1, row + (m - n)) : m - 1;
    float* s = scores + static_cast<size_t>(row) * m;
    float mx = -INFINITY, sum = 0.f;
    if (Vec4) {
        const float4* s4 = reinterpret_cast<const float4*>(s);
        for (int j4 = threadIdx.x; 4 * j4 <= lastKey; j4 += blockDim.x) {
            const float4 v = s4[j4];
            const float x[4] = {v.x, v.y, v.z, v.w};
            for (int e = 0; e < 4; ++e)
                if (4 * j4 + e <= lastKey) accumulate(mx, sum, x[e] * scale);
        }
    } else {
        for (int j = threadIdx.x; j <= lastKey; j += blockDim.x) accumulate(mx, sum, s[j] * scale);
    }
    // Block reduction of the (max, sum) pairs: within each warp, then across warps.
    for (int offset = 16; offset > 0; offset /= 2)
        combineMaxSum(mx, sum, __shfl_xor_sync(0xffffffffu, mx, offset), __shfl_xor_sync(0xffffffffu, sum, offset));
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    if (lane == 0) shMax[warp] = mx, shSum[warp] = sum;
    __syncthreads();
    mx = lane < warps ? shMax[lane] : -INFINITY;
    sum = lane < warps ? shSum[lane] : 0.f;
    for (int offset = 16; offset > 0; offset /= 2)
        combineMaxSum(mx, sum, __shfl_xor_sync(0xffffffffu, mx, offset), __shfl_xor_sync(0xffffffffu, sum, offset));
    // Every lane of warp 0 holds the row's pair; lanes of the other warps computed the same.
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    if (Vec4) {
        float4* s4 = reinterpret_cast<float4*>(s);
        for (int j4 = threadIdx.x; 4 * j4 < m; j4 += blockDim.x) {
            float4 v = 4 * j4 <= lastKey ? s4[j4] : make_float4(0.f, 0.f, 0.f, 0.f);
            float* x = &v.x;
            for (int e = 0; e < 4; ++e) x[e] = 4 * j4 + e <= lastKey ? __expf(x[e] * scale - mx) * inv : 0.f;
            s4[j4] = v;
        }
    } else {
        for (int j = threadIdx.x; j < m; j += blockDim.x) s[j] = j <= lastKey ? __expf(s[j] * scale - mx) * inv : 0.f;
    }
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

std::string softmaxRowsInPlace(float* scores, int n, int m, float scale, bool causal) {
    if (n <= 0 || m <= 0) return {};
    if (m % 4 == 0 && reinterpret_cast<std::uintptr_t>(scores) % 16 == 0)
        softmaxRowsInPlaceKernel<true><<<n, kThreads>>>(scores, n, m, scale, causal);
    else
        softmaxRowsInPlaceKernel<false><<<n, kThreads>>>(scores, n, m, scale, causal);
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
