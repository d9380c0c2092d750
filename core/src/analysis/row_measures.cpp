#include "row_measures.h"

#include "attnscope/runtime/error.h"
#include "runtime/vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>

namespace attnscope {

namespace {

// One row's sums, in double: Σ|p| (zero iff the row is all zero), Σ p·log p, Σ p·|key - a| and
// Σ p·(log p - log max(q, kKlFloor)), the last three over p > 0 only.
struct RowSums {
    double mass = 0, plogp = 0, distance = 0, kl = 0;
};

// The per-cell work of a row in one pass over its cells, in chunks of 16: each cell's terms in
// float (one rounding, ~6e-8 relative), each chunk's 16 lanes added into double lanes, so the
// compiler vectorises the sums without reordering any lane's additions. Compiled for AVX-512,
// AVX2 and baseline x86-64 and picked at load time (GCC's target_clones), since the library is
// built for baseline x86-64. lp / lq: log p and log q per cell as vmath::logInto gives them (-inf at
// 0). `base`: key lo - a, so cell j lies at distance |base + j|.
template <bool WithKl>
ATTNSCOPE_CLONES RowSums rowSums(const float* p, const float* lp, const float* q, const float* lq, int w, int base) {
    constexpr int L = 16;
    const float floorLog = static_cast<float>(std::log(kKlFloor));
    double mass[L] = {}, plogp[L] = {}, dist[L] = {}, kl[L] = {};
    int j = 0;
    for (; j + L <= w; j += L) {
        float m[L], e[L], d[L], k[L];
        for (int l = 0; l < L; ++l) {
            const float x = p[j + l], logx = lp[j + l];
            m[l] = std::fabs(x);
            e[l] = x > 0 ? x * logx : 0.0f;
            d[l] = x * std::fabs(static_cast<float>(base + j + l));
            // max(q, kKlFloor) as metrics.h defines it; a NaN q stays NaN.
            const float logq = WithKl && !(q[j + l] <= 0) ? lq[j + l] : floorLog;
            k[l] = WithKl && x > 0 ? x * (logx - logq) : 0.0f;
        }
        for (int l = 0; l < L; ++l) mass[l] += m[l], plogp[l] += e[l], dist[l] += d[l], kl[l] += k[l];
    }
    RowSums s;
    for (; j < w; ++j) {
        const double x = p[j];
        s.mass += std::fabs(x);
        if (x > 0) s.plogp += x * lp[j];
        s.distance += x * std::fabs(static_cast<double>(base + j));
        if (WithKl && x > 0)
            s.kl += x * (static_cast<double>(lp[j]) - (!(q[j] <= 0) ? static_cast<double>(lq[j]) : std::log(kKlFloor)));
    }
    for (int l = 0; l < L; ++l) s.mass += mass[l], s.plogp += plogp[l], s.distance += dist[l], s.kl += kl[l];
    return s;
}

// Sum of the k largest of p[0, w), added largest first (what a partial sort then a sum gives).
// top: scratch for the sort.
double sortedTopSum(const float* p, int w, int k, std::vector<float>& top) {
    top.assign(p, p + w);
    std::partial_sort(top.begin(), top.begin() + k, top.end(), std::greater<float>());
    double sum = 0;
    for (int j = 0; j < k; ++j) sum += top[static_cast<std::size_t>(j)];
    return sum;
}

// The same sum without a sort, for K <= 8: each of 16 lanes keeps its K largest values in K
// vectors, updated branch-free by a min/max insertion (K - 1 minima and K maxima per 16 values).
// The row's K largest are among the lanes' (a value with fewer than K larger ones in the row has
// fewer than K in its lane), so the K largest of those 16·K candidates, added largest first, are
// the sorted sum's, bit for bit. A row with a NaN goes to the sort (min/max are not ordered then).
template <int K>
__attribute__((always_inline)) inline double laneTopSum(const float* p, int w, std::vector<float>& top) {
    constexpr int L = 16;
    using F16 = float __attribute__((vector_size(64)));
    using I16 = int __attribute__((vector_size(64)));
    const float lowest = -std::numeric_limits<float>::infinity();
    F16 t[K];
    for (F16& v : t)
        for (int l = 0; l < L; ++l) v[l] = lowest;
    I16 nan = {};
    const auto insert = [&](const F16& v) {
        nan |= v != v;
        for (int i = K - 1; i > 0; --i) {
            const F16 below = t[i - 1] < v ? t[i - 1] : v;  // min(t[i-1], v)
            t[i] = t[i] > below ? t[i] : below;
        }
        t[0] = t[0] > v ? t[0] : v;
    };
    int j = 0;
    for (; j + L <= w; j += L) {
        F16 v;
        __builtin_memcpy(&v, p + j, sizeof v);
        insert(v);
    }
    if (j < w) {
        F16 v;
        for (int l = 0; l < L; ++l) v[l] = j + l < w ? p[j + l] : lowest;
        insert(v);
    }
    bool anyNan = false;
    for (int l = 0; l < L; ++l) anyNan |= nan[l] != 0;
    if (anyNan) return sortedTopSum(p, w, K, top);
    // The K largest of the 16·K candidates, kept sorted by insertion (a partial sort of them
    // cost as much as the scan above: heap upkeep for each candidate that beats the K-th).
    // Lane l's values come in decreasing order, so once one misses the K-th the rest of the lane do.
    float best[K];
    for (float& b : best) b = lowest;
    for (int l = 0; l < L; ++l)
        for (int i = 0; i < K && t[i][l] > best[K - 1]; ++i) {
            int at = K - 1;
            for (; at > 0 && best[at - 1] < t[i][l]; --at) best[at] = best[at - 1];
            best[at] = t[i][l];
        }
    double sum = 0;
    for (int i = 0; i < K; ++i) sum += best[i];
    return sum;
}

// laneTopSum is inlined into each of topSum's clones (AVX-512, AVX2, baseline).
ATTNSCOPE_CLONES double topSum(const float* p, int w, int k, std::vector<float>& top) {
    if (k <= 0) return 0.0;
    if (w < 16 * k) return sortedTopSum(p, w, k, top);  // short rows: a sort is as cheap
    switch (k) {
        case 1: return laneTopSum<1>(p, w, top);
        case 2: return laneTopSum<2>(p, w, top);
        case 3: return laneTopSum<3>(p, w, top);
        case 4: return laneTopSum<4>(p, w, top);
        case 5: return laneTopSum<5>(p, w, top);
        case 6: return laneTopSum<6>(p, w, top);
        case 7: return laneTopSum<7>(p, w, top);
        case 8: return laneTopSum<8>(p, w, top);
        default: return sortedTopSum(p, w, k, top);
    }
}

// dst[j] += src[j] in double (the per-key column sums).
ATTNSCOPE_CLONES void addColumns(double* dst, const float* src, int n) {
    for (int j = 0; j < n; ++j) dst[j] += static_cast<double>(src[j]);
}

// ATTNSCOPE_SCALAR_MEASURES=1: the per-cell double-log loops these sums replaced, kept only as
// the "before" of docs/benchmarks.md (bench --metrics in one binary, one run).
bool scalarMeasuresBaseline() {
    static const bool on = [] {
        const char* s = std::getenv("ATTNSCOPE_SCALAR_MEASURES");
        return s && *s == '1';
    }();
    return on;
}

RowSums scalarRowSums(const float* p, const float* q, int w, int base) {
    RowSums s;
    for (int j = 0; j < w; ++j) s.mass += std::fabs(p[j]);
    for (int j = 0; j < w; ++j)
        if (p[j] > 0) s.plogp += p[j] * std::log(static_cast<double>(p[j]));
    for (int j = 0; j < w; ++j) s.distance += static_cast<double>(p[j]) * std::abs(base + j);
    for (int j = 0; q && j < w; ++j) {
        const double x = p[j];
        if (x > 0) s.kl += x * std::log(x / std::max(static_cast<double>(q[j]), kKlFloor));
    }
    return s;
}

}  // namespace

RowMeasures::RowMeasures(int rows, int cols, unsigned want, const std::vector<int>& keys, const PatternThresholds& t)
    : rows_(rows), cols_(cols), want_(want), t_(t) {
    if (want_ & Keys) {
        for (int k : keys)
            if (k >= 0 && k < cols) keys_.push_back(k);
        std::sort(keys_.begin(), keys_.end());
        keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    }
    if (want_ & Patterns) column_.assign(static_cast<std::size_t>(std::max(cols, 0)), 0.0);
}

void RowMeasures::addRows(int first, int count, const float* p, int lo, int hi, const float* q, const float* lp) {
    const int w = std::max(0, hi - lo);
    if (count <= 0 || w == 0 || !p) return;  // rows that see no key are all zero: skipped
    const std::size_t W = static_cast<std::size_t>(w);
    const bool kl = (want_ & Kl) && q, scalar = scalarMeasuresBaseline(), logs = ((want_ & Entropy) || kl) && !scalar;
    // The logarithms one row at a time, so that they are still in L1 when the row's sums read them.
    const float* given = lp;  // the softmax's own log p, when the caller has them
    if (logs && !given) logP_.resize(W);
    if (kl && !scalar) logQ_.resize(W);
    for (int r = 0; r < count; ++r) {
        const int i = first + r;
        const float* row = p + r * W;
        if (logs && !given) vmath::logInto(row, logP_.data(), w);
        if (kl && !scalar) vmath::logInto(q + r * W, logQ_.data(), w);
        const float* rowLogs = !logs ? row : given ? given + r * W : logP_.data();
        const int a = i + (cols_ - rows_);  // the key aligned with query i (metrics.h)
        const RowSums s = scalar ? scalarRowSums(row, kl ? q + r * W : nullptr, w, lo - a)
                          : kl   ? rowSums<true>(row, rowLogs, q + r * W, logQ_.data(), w, lo - a)
                                 : rowSums<false>(row, rowLogs, nullptr, nullptr, w, lo - a);
        if (s.mass == 0) continue;  // no distribution: skipped
        ++used_;
        if (want_ & Entropy) entropy_ -= s.plogp;
        if (want_ & Distance) distance_ += s.distance;
        if (kl) kl_ += std::max(s.kl, 0.0);
        if (want_ & Keys) {
            double sum = 0;
            for (auto k = std::lower_bound(keys_.begin(), keys_.end(), lo); k != keys_.end() && *k < hi; ++k)
                sum += row[*k - lo];
            keyShare_ += sum;
        }
        if ((want_ & FirstKey) && lo == 0) first_ += row[0];
        if ((want_ & Sink) && a >= 1) ++sinkRows_, sink_ += lo == 0 ? row[0] : 0.0f;
        if (want_ & Patterns) {
            addPatterns(i, row, lo, hi);
            addColumns(column_.data() + lo, row, w);  // while the row is in L1 (the global score)
        }
    }
}

void RowMeasures::addPatterns(int i, const float* p, int lo, int hi) {
    const int w = hi - lo, a = i + (cols_ - rows_);
    const auto value = [&](int j) { return j >= lo && j < hi ? static_cast<double>(p[j - lo]) : 0.0; };
    if (a >= 0 && a < cols_) ++diagRows_, diagonal_ += value(a);
    if (a >= 1 && a <= cols_) ++prevRows_, previous_ += value(a - 1);
    double near = 0;
    for (int j = std::max({0, a - t_.localRadius, lo}); j <= std::min({cols_ - 1, a + t_.localRadius, hi - 1}); ++j)
        near += p[j - lo];
    local_ += near;
    // The row's sparseKeys largest values; the keys outside [lo, hi) are zeros, which only
    // matter when the row has fewer than sparseKeys stored values, and then add nothing.
    const int k = std::min(t_.sparseKeys, w);
    if (scalarMeasuresBaseline()) {
        top_.assign(p, p + w);
        std::partial_sort(top_.begin(), top_.begin() + k, top_.end(), std::greater<float>());
        double sum = 0;
        for (int j = 0; j < k; ++j) sum += top_[static_cast<std::size_t>(j)];
        sparse_ += sum;
        return;
    }
    sparse_ += topSum(p, w, k, top_);
}

void RowMeasures::addMap(const HeadMap& p, const HeadMap* q) {
    // In blocks of rows, so the scratch logs stay small.
    constexpr int Block = 128;
    for (int r = 0; r < p.rows; r += Block) {
        const std::size_t offset = static_cast<std::size_t>(r) * p.cols;
        addRows(r, std::min(Block, p.rows - r), p.values.data() + offset, 0, p.cols,
                q ? q->values.data() + offset : nullptr);
    }
}

namespace {
double meanOf(double total, long long count) { return count ? total / static_cast<double>(count) : 0.0; }
}  // namespace

HeadMetrics RowMeasures::headMetrics(const std::string& block, int layer, int head, bool separators) const {
    HeadMetrics r;
    r.block = block;
    r.layer = layer;
    r.head = head;
    r.entropy = entropy();
    r.meanDistance = distance();
    r.firstToken = firstShare();
    r.sink = sink();
    r.separator = separators ? keyShare() : 0.0;
    r.scores = patterns();
    r.pattern = classifyPattern(r.scores, cols_, t_);
    return r;
}

double RowMeasures::entropy() const { return meanOf(entropy_, used_); }
double RowMeasures::distance() const { return meanOf(distance_, used_); }
double RowMeasures::keyShare() const { return meanOf(keyShare_, used_); }
double RowMeasures::firstShare() const { return meanOf(first_, used_); }
double RowMeasures::kl() const { return meanOf(kl_, used_); }
double RowMeasures::sink() const { return meanOf(sink_, sinkRows_); }

PatternScores RowMeasures::patterns() const {
    PatternScores s;
    s.diagonal = meanOf(diagonal_, diagRows_);
    s.previous = meanOf(previous_, prevRows_);
    if (used_ > 0 && !column_.empty()) {
        const auto best = std::max_element(column_.begin(), column_.end());
        s.globalKey = static_cast<int>(best - column_.begin());
        s.global = *best / static_cast<double>(used_);
    }
    s.local = meanOf(local_, used_);
    s.sparse = meanOf(sparse_, used_);
    return s;
}

}  // namespace attnscope
