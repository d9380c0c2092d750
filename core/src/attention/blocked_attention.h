// Dot-product attention on the CPU in blocks of query rows, for the forward pass (attendDot) and
// for one head's map (headProbs). Each block of rows scores only the keys its mask lets it see
// (causal blocks stop at the diagonal, sliding windows start at the window), takes its softmax
// and, in the forward, multiplies by V at once: no [H, n, m] score tensor and no [n, m] mask is
// built. Peak temporary memory is one [rows, m] block per thread. Results equal the unblocked
// computation (softmax(cap(scale·q·k) + slope·j) / T + mask), row by row.
#pragma once

#include "attention_ops.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>

namespace attnscope {

// Keys [lo, hi) that query rows [start, start + len) may see between them (the union of their
// rows under the mask's causal limit and window). n queries, m keys.
struct KeySpan {
    std::int64_t lo = 0, hi = 0;
    std::int64_t size() const { return hi > lo ? hi - lo : 0; }
};
KeySpan keySpan(const MaskSpec& mask, std::int64_t n, std::int64_t m, std::int64_t start, std::int64_t len);

// One head's keys k [m, d] packed for the AVX-512 kernels (dot_kernels.h: 16-key panels from
// key 0), or empty where they do not run (no AVX-512F, not float32, ownKernels off): blockProbs
// then scores through the BLAS. Pack once per head, not per block.
struct PackedKeys {
    at::Tensor panels;  // [panels(m), d, 16]
    bool empty() const { return !panels.defined(); }
};
PackedKeys packKeys(const at::Tensor& k);

// qRows · k[span]ᵀ ([len, span.size()], float32) from packed (packKeys(k), not empty): each sum
// over the dimensions in order. The metrics pass takes the linear map's φ(q)·φ(k) this way (its
// 64-wide products ran at half this kernel's rate through OpenBLAS).
at::Tensor packedRowProducts(const at::Tensor& qRows, const PackedKeys& packed, KeySpan span);

// Probabilities of query rows [start, start + qRows.size(0)) of query head `head` (it picks the
// ALiBi slope) over the keys k[span.lo, span.hi): qRows [len, d], k [m, d] (all the head's keys)
// -> [len, span.size()], masked entries exactly 0, float32 for F16/BF16 inputs. n = all queries.
// The scores come from `packed` (packKeys(k)) when it is not empty. `logs`, when given, is set
// to each probability's logarithm from the softmax's terms (vmath::softmaxRowLogs) where the
// float32 CPU softmax runs, and left undefined elsewhere (the caller takes logs itself).
// `into`, when given for float32 CPU rows, is [len, span.size()] floats the result is written to
// (the tensor returned is over them); elsewhere it is not used.
at::Tensor blockProbs(const at::Tensor& qRows, const at::Tensor& k, const MaskSpec& mask, const ScoreSpec& score,
                      int head, double temperature, std::int64_t n, std::int64_t start, KeySpan span,
                      const PackedKeys& packed = {}, at::Tensor* logs = nullptr, float* into = nullptr);

// How the blocks are shared between the cores. Blas: one block at a time, each matrix product
// on every core through OpenBLAS's threads (softmax on one). Heads / Rows: one worker thread per
// core, OpenBLAS single-threaded meanwhile; worker t takes heads h ≡ t (Heads) or, in every
// head, row blocks b ≡ t (Rows) modulo the worker count. docs/benchmarks.md compares them.
enum class Striping { Blas, Heads, Rows };
struct BlockedConfig {
    std::int64_t rows = 64;  // query rows per block (64: a block of 4,096 keys stays in L2; docs/benchmarks.md)
    Striping striping = Striping::Rows;
    int threads = 0;  // workers for Heads/Rows; 0 = every core
    // The forward's float32 blocks through our AVX-512 kernels (dot_kernels.h) where the CPU has
    // them and the scores are plain (no soft-cap, ALiBi, bias or padding mask; value width a
    // multiple of 16); false: every block through the BLAS.
    bool ownKernels = true;
    // Other devices (deviceBlockedAttend): score cells per block, all heads together; a block of
    // rows is deviceCells / (heads · keys) rows. 2^26: 256 MiB of float32 logits per block.
    std::int64_t deviceCells = std::int64_t{1} << 26;
};
// The process's configuration: the defaults, or ATTNSCOPE_ATTN_STRIPING=blas|heads|rows,
// ATTNSCOPE_ATTN_ROWS=N, ATTNSCOPE_ATTN_KERNELS=blas and ATTNSCOPE_DEVICE_BLOCK_CELLS=N when set
// (read once); setBlockedConfig
// replaces it (tests, benchmarks).
BlockedConfig blockedConfig();
void setBlockedConfig(const BlockedConfig& config);

// attendDot's CPU path: q [H, n, d], k [Hkv, m, d], v [Hkv, m, dv] -> context [H, n, dv] in v's
// dtype; masked heads are zero and not computed. No autograd (callers that need gradients use
// the unblocked path).
at::Tensor blockedAttend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                         const ScoreSpec& score, const LayerRun& run);

// attendDot's path on other devices (a GPU), written with ATen's operations only, so it runs on
// any device (the tests run it on the CPU): blocks of deviceBlockRows(H, n, m) query rows, all
// heads of a block in one batched product over the keys its rows may see (keySpan), the
// block's [len, keys] mask bands, softmax, · V. No [H, n, m] scores and no [n, m] mask; results
// equal attentionProbs over the whole map, row by row, within float rounding.
at::Tensor deviceBlockedAttend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                               const ScoreSpec& score, const LayerRun& run);
// Query rows per block on other devices for `heads` heads over m keys (BlockedConfig::deviceCells), in [1, n].
std::int64_t deviceBlockRows(std::int64_t heads, std::int64_t n, std::int64_t m);

// headProbs' CPU path: q [n, d], k [m, d] -> [n, m] (zeros outside each block's key span).
at::Tensor blockedHeadProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, const ScoreSpec& score,
                            int head, double temperature);

// Runs work(item) for item in [0, count) on `threads` workers (item ≡ worker modulo threads),
// with OpenBLAS single-threaded while they run and the caller's thread-local state (grad and
// inference mode, memory reporting) in each worker;
// the first exception a worker throws is rethrown here. threads <= 1 runs inline.
void stripedForEach(std::int64_t count, int threads, const std::function<void(std::int64_t)>& work);
// Runs work(0) on the caller's thread and work(1) ... work(threads - 1) on new threads with the
// caller's thread-local state, OpenBLAS single-threaded while they run; returns when all have
// returned, rethrowing the first exception (work(0)'s first). threads <= 1 runs work(0) alone.
// stripedForEach is this with a fixed striping; callers that hand out work themselves use it.
void onThreads(int threads, const std::function<void(int)>& work);

// The machine's cores (std::thread::hardware_concurrency, at least 1).
int coreCount();

}  // namespace attnscope
