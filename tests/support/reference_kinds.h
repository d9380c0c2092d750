// Independent double-precision references of the attention kinds of issue 36 (local, top-k,
// Reformer LSH, cosFormer, relative position bias, learned gate), written from their definitions
// in core/include/attnscope/attention/trace.h with plain loops: nothing is shared with core.
// Maps are row-major n×m; `allowed` is the layer's own mask (true = the query may see the key).
#pragma once

#include <cstdint>
#include <vector>

namespace attnscope::testing {

using KeepMask = std::vector<char>;  // n×m, 1 = kept

// softmax of logits over the keys both kept and allowed; other entries 0; a row with none is 0.
std::vector<double> softmaxKeptRef(const std::vector<double>& logits, const KeepMask& keep, int n, int m);

// query i at position p = i + m - n: causal keeps p - W < j <= p, two-sided |p - j| < W.
KeepMask localKeepRef(int n, int m, int window, bool twoSided);
// The k largest allowed logits per row, ties to the lower key index.
KeepMask topkKeepRef(const std::vector<double>& logits, const KeepMask& allowed, int n, int m, int k);

// The rotations core draws: SplitMix64 seeded with seed ^ 0x4C5348, Box-Muller normals in
// [round][row][column] order; [rounds, d, buckets / 2].
std::vector<double> lshRotationsRef(int d, int buckets, int rounds, std::uint64_t seed);
// Reformer's sets for one sequence of n hash vectors x [n, d] (see core's lshKeep): buckets by
// argmax([xR; -xR]), sort by (bucket, position), chunks of `chunk` (0: ceil(n / buckets)), own
// chunk and the one before (cyclic), union over rounds, then causal and self-exclusion.
KeepMask lshKeepRef(const std::vector<double>& x, int n, int d, int buckets, int rounds, int chunk, std::uint64_t seed,
                    bool causal);
// The bucket of each position in one round (for tests of the hashing itself).
std::vector<int> lshBucketsRef(const std::vector<double>& x, int n, int d, int buckets, int round,
                               const std::vector<double>& rotations);

// cosFormer: relu(q_i)·relu(k_j)·cos(π/2·(i - j)/M), M = max(n, m), normalised over allowed keys.
std::vector<double> cosMapRef(const std::vector<double>& q, const std::vector<double>& k, int n, int m, int d,
                              const KeepMask& allowed);

// Hedgehog's learned feature map: u = W x + b (W [f, d] row-major, b [f]),
// φ(x) = [softmax(u), softmax(−u)] (2f values).
std::vector<double> hedgehogFeaturesRef(const std::vector<double>& x, const std::vector<double>& w,
                                        const std::vector<double>& b, int d, int f);
// The learned linear map: A_ij = φq(q_i)·φk(k_j) over allowed keys, rows normalised; q [n, d], k [m, d].
std::vector<double> hedgehogMapRef(const std::vector<double>& q, const std::vector<double>& k, int n, int m, int d,
                                   const std::vector<double>& wq, const std::vector<double>& bq,
                                   const std::vector<double>& wk, const std::vector<double>& bk, int f,
                                   const KeepMask& allowed);

}  // namespace attnscope::testing
