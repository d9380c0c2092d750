// The attention kinds beyond dot, additive and linear, as exact map definitions shared by
// Trace::map (lab variants on any head, the built-in layers' own maps) and the built-in networks
// (training and inference), so that a map recomputed from a Trace is the one the layer used.
//
// The sparse kinds (local, top-k, LSH) keep a subset of the keys a query may see and softmax the
// layer's own logits over it; a kept-out key gets exactly 0. Keep masks are bool tensors
// [..., n, m] (true = kept) on the logits' device. Leading dimensions (batch, heads) broadcast.
#pragma once

#include "attention_ops.h"
#include "attnscope/attention/trace.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace attnscope {

// Throws attnscope::Error naming the option when a SparseOptions value is out of range for `variant`.
void checkSparseOptions(MapVariant variant, const SparseOptions& options);

// Local window over n queries and m keys, query i at position p = i + (m - n) (as the causal
// mask places it): causal keeps p - W < j <= p, two-sided keeps |p - j| < W. [n, m].
at::Tensor localKeep(std::int64_t n, std::int64_t m, int window, bool twoSided, const at::TensorOptions& options);

// Top-k of logits [..., n, m] (masked keys -inf): the k largest finite logits per row, ties to the
// lower key index (a stable descending sort); rows with fewer finite logits keep all of them.
at::Tensor topkKeep(const at::Tensor& logits, int keep);

// Reformer's LSH rotations, [rounds, d, buckets / 2] float32 on the CPU, N(0, 1) entries from
// core's own generator in that order (round, row, column): fixed by (d, buckets, rounds, seed).
at::Tensor lshRotations(std::int64_t d, int buckets, int rounds, std::uint64_t seed);

// Reformer LSH attention sets for a self-attention of n positions with hash vectors x [..., n, d]
// (shared-QK: a position's query). Per round r: bucket h_r(x_i) = argmax([x_i R_r; -x_i R_r]) (first
// maximum); positions sorted by (bucket, position); the sorted order cut into chunks of C
// (options.chunk, or ceil(len / buckets)); position i keeps the keys of its chunk and of the chunk
// before it (the first chunk's predecessor is the last, as in Reformer). Keys kept in any round are
// kept once (the paper's duplicate correction makes the rounds' mixture the softmax over the union).
// Then causal (keys j <= i only) and self-exclusion: a position keeps itself only when it keeps no
// other key. lengths: optional [...] long, the real length of each sequence (positions >= length
// are padding: hashed after every real position, never kept). Returns bool [..., n, n].
at::Tensor lshKeep(const at::Tensor& x, const SparseOptions& options, bool causal, const at::Tensor& lengths = {});

// softmax over the kept keys of logits [..., n, m] (masked keys may be -inf); 0 elsewhere, and a
// row with no kept finite logit is all 0.
at::Tensor softmaxKept(const at::Tensor& logits, const at::Tensor& keep);

// The keep mask of one sparse variant on one head's logits [n, m] (masked keys -inf); hash
// vectors x [n, d] for Lsh. Throws for an out-of-range option or Lsh with n != m.
at::Tensor sparseKeep(MapVariant variant, const SparseOptions& options, const at::Tensor& logits, const at::Tensor& x,
                      bool causal);

// cosFormer features [.., n, 2f] for x [.., n, f] at row positions 0..n-1: [relu(x)·cos(π i / 2M),
// relu(x)·sin(π i / 2M)], so that φq_i·φk_j = relu(q_i)·relu(k_j)·cos(π/2·(i - j)/M).
at::Tensor cosFeatures(const at::Tensor& x, std::int64_t M);
// The cosFormer map of one head: q [n, d], k [m, d], M = max(n, m), rows normalised over allowed keys.
at::Tensor cosProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask);

// Shaw et al. relative position bias: table [H, 2K + 1] (entry K + r is distance r = j - i clipped
// to [-K, K], query i at position i + (m - n)) -> [H, n, m].
at::Tensor relativeBias(const at::Tensor& table, std::int64_t n, std::int64_t m);

// Learned gate per query g = σ(q·w_h + b_h): q [..., H, n, d], w [H, d], b [H] -> [..., H, n].
at::Tensor learnedGate(const at::Tensor& q, const at::Tensor& w, const at::Tensor& b);

}  // namespace attnscope
