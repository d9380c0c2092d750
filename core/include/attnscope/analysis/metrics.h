// Measures on attention maps. Plain C++ on HeadMap (no torch), so ui code can call them.
// Entropies and divergences are in nats. Every "mean over rows" skips rows that are all zero
// (queries that see no key, e.g. padding), and a map with no such row gives 0.
//
// Rows and columns: row i is query i, column j key j. For maps whose keys and queries are
// different sequences of different lengths (cross-attention, a decoder with a cached prefix)
// query i is aligned with key a_i = i + (cols - rows), the position the causal mask uses; for
// self-attention a_i = i.
#pragma once

#include "attnscope/attention/trace.h"

#include <vector>

namespace attnscope {

// Every function taking a HeadMap (here, rollout.h, lab.h, ui's figures) first checks that it
// holds rows × cols values with rows, cols >= 0; otherwise it throws attnscope::Error
// "<what>: a map of RxC needs R·C values, it holds N" instead of reading past the values.
void checkMapShape(const HeadMap& map, const char* what);

// Mean over rows of -Σ_j p_ij log p_ij (0·log 0 = 0). Rows that are all zero are skipped.
double meanRowEntropy(const HeadMap& map);

// The one KL divergence (maps, next-token and class distributions all use it):
// KL(p ‖ q) = Σ_i p_i log(p_i / max(q_i, kKlFloor)), terms with p_i = 0 being 0, and a sum that
// rounding takes below 0 (nearly equal distributions) clamped to 0.
//
// Why 1e-300: the floor is only there so that q_i = 0 where p_i > 0 (a masked key, an underflowed
// softmax), whose true KL is infinite, gives a large finite value (about 690 nats per unit of p on
// that entry) instead of inf. It must not change any q_i a model can actually produce: 1e-300 is
// below every positive float (float32 maps are never clamped but at exact zeros) and below any
// double probability that carries weight, while p_i / 1e-300 still cannot overflow. A floor such
// as 1e-12 would cap log(p/q) at about 28 and so understate the KL wherever q is legitimately
// smaller (a sharpened map, a next-token probability of 1e-15).
inline constexpr double kKlFloor = 1e-300;

// KL(p ‖ q) in nats over two distributions of the same length. Throws attnscope::Error when the
// lengths differ.
double klDivergence(const std::vector<double>& p, const std::vector<double>& q);

// Mean over rows of klDivergence(p_i, q_i). Rows where p is all zero are skipped. Throws
// attnscope::Error when the shapes differ.
double meanRowKl(const HeadMap& p, const HeadMap& q);

// Mean attention distance in tokens: mean over rows of Σ_j p_ij |j - a_i|.
double meanAttentionDistance(const HeadMap& map);

// Share of attention on the given key columns: mean over rows of Σ_{j in keys} p_ij. Columns
// outside the map and repeated columns count once / not at all. {0} gives "attention to the first
// token"; the separator positions give "attention to the separator".
double attentionToKeys(const HeadMap& map, const std::vector<int>& keys);

// Pattern classes of a head, tested in this order; the first whose rule holds wins.
//   Diagonal       D >= diagonal     D = mean over rows of p_{i, a_i}            (rows with 0 <= a_i < cols)
//   PreviousToken  P >= previous     P = mean over rows of p_{i, a_i - 1}        (rows with 1 <= a_i <= cols)
//   Global         G >= global       G = max_j (mean over rows of p_ij): one key column takes most of
//                                        every query's attention (first token, [CLS], [SEP])
//   Local          W >= local        W = mean over rows of Σ_{|j - a_i| <= localRadius} p_ij
//   Sparse         S >= sparse       S = mean over rows of the sum of the row's sparseKeys largest
//                  and cols >= 2·sparseKeys + 2    values: each query picks a few keys anywhere
//   Mixed          none of the above (broad or unstructured attention)
// In a causal map the first rows see fewer than sparseKeys keys and count as concentrated; with
// n tokens they shift S by at most sparseKeys/n.
enum class PatternClass { Diagonal, PreviousToken, Global, Local, Sparse, Mixed };
const char* patternName(PatternClass pattern);  // "diagonal", "previous-token", "global", "local", "sparse", "mixed"

struct PatternThresholds {
    double diagonal = 0.5;
    double previous = 0.5;
    double global = 0.5;
    double local = 0.8;
    int localRadius = 2;
    double sparse = 0.8;
    int sparseKeys = 3;
};

struct PatternScores {
    double diagonal = 0;  // D
    double previous = 0;  // P
    double global = 0;    // G
    int globalKey = 0;    // the column j that gives G
    double local = 0;     // W
    double sparse = 0;    // S
};

PatternScores patternScores(const HeadMap& map, const PatternThresholds& thresholds = {});
PatternClass classifyPattern(const PatternScores& scores, int cols, const PatternThresholds& thresholds = {});
PatternClass classifyPattern(const HeadMap& map, const PatternThresholds& thresholds = {});

// Cosine similarity of two maps seen as vectors, Σ a_ij b_ij / (‖a‖ ‖b‖), over the positions both
// maps have: the leading min(rows) × min(cols) entries, so a decoder's map can be compared with
// an encoder's over the shared positions. 0 when either part is all zero.
double mapCosine(const HeadMap& a, const HeadMap& b);

// Head-to-head similarity: k maps -> row-major k×k matrix of mapCosine, symmetric.
std::vector<double> similarityMatrix(const std::vector<HeadMap>& maps);

}  // namespace attnscope
