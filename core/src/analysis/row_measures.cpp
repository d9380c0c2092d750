#include "row_measures.h"

#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>

namespace attnscope {

RowMeasures::RowMeasures(int rows, int cols, unsigned want, const std::vector<int>& keys, const PatternThresholds& t)
    : rows_(rows), cols_(cols), want_(want), t_(t) {
    if (want_ & Keys) {
        isKey_.assign(static_cast<std::size_t>(std::max(cols, 0)), 0);
        for (int k : keys)
            if (k >= 0 && k < cols) isKey_[static_cast<std::size_t>(k)] = 1;
    }
    if (want_ & Patterns) column_.assign(static_cast<std::size_t>(std::max(cols, 0)), 0.0);
}

void RowMeasures::addRow(int i, const float* p, int lo, int hi, const float* q) {
    const int w = std::max(0, hi - lo);
    if (std::all_of(p, p + w, [](float v) { return v == 0.0f; })) return;  // no distribution: skipped
    ++used_;
    const int a = i + (cols_ - rows_);  // the key aligned with query i (metrics.h)
    if (want_ & Entropy) {
        double h = 0;
        for (int j = 0; j < w; ++j)
            if (p[j] > 0) h -= p[j] * std::log(static_cast<double>(p[j]));
        entropy_ += h;
    }
    if (want_ & Distance) {
        double d = 0;
        for (int j = 0; j < w; ++j) d += static_cast<double>(p[j]) * std::abs(lo + j - a);
        distance_ += d;
    }
    if (want_ & Keys) {
        double s = 0;
        for (int j = 0; j < w; ++j)
            if (isKey_[static_cast<std::size_t>(lo + j)]) s += p[j];
        keys_ += s;
    }
    if ((want_ & Kl) && q) {
        double total = 0;
        for (int j = 0; j < w; ++j) {
            const double x = p[j];
            if (x > 0) total += x * std::log(x / std::max(static_cast<double>(q[j]), kKlFloor));
        }
        kl_ += std::max(total, 0.0);
    }
    if (want_ & Patterns) {
        const auto value = [&](int j) { return j >= lo && j < hi ? static_cast<double>(p[j - lo]) : 0.0; };
        if (a >= 0 && a < cols_) ++diagRows_, diagonal_ += value(a);
        if (a >= 1 && a <= cols_) ++prevRows_, previous_ += value(a - 1);
        for (int j = 0; j < w; ++j) column_[static_cast<std::size_t>(lo + j)] += p[j];
        double near = 0;
        for (int j = std::max({0, a - t_.localRadius, lo}); j <= std::min({cols_ - 1, a + t_.localRadius, hi - 1}); ++j)
            near += p[j - lo];
        local_ += near;
        // The row's sparseKeys largest values; the keys outside [lo, hi) are zeros, which only
        // matter when the row has fewer than sparseKeys stored values, and then add nothing.
        scratch_.assign(p, p + w);
        const int k = std::min(t_.sparseKeys, w);
        std::partial_sort(scratch_.begin(), scratch_.begin() + k, scratch_.end(), std::greater<float>());
        double top = 0;
        for (int j = 0; j < k; ++j) top += scratch_[static_cast<std::size_t>(j)];
        sparse_ += top;
    }
}

void RowMeasures::addMap(const HeadMap& p, const HeadMap* q) {
    for (int r = 0; r < p.rows; ++r) {
        const std::size_t offset = static_cast<std::size_t>(r) * p.cols;
        addRow(r, p.values.data() + offset, 0, p.cols, q ? q->values.data() + offset : nullptr);
    }
}

void RowMeasures::merge(const RowMeasures& o) {
    used_ += o.used_, diagRows_ += o.diagRows_, prevRows_ += o.prevRows_;
    entropy_ += o.entropy_, distance_ += o.distance_, keys_ += o.keys_, kl_ += o.kl_;
    diagonal_ += o.diagonal_, previous_ += o.previous_, local_ += o.local_, sparse_ += o.sparse_;
    for (std::size_t j = 0; j < column_.size() && j < o.column_.size(); ++j) column_[j] += o.column_[j];
}

namespace {
double meanOf(double total, long long count) { return count ? total / static_cast<double>(count) : 0.0; }
}  // namespace

double RowMeasures::entropy() const { return meanOf(entropy_, used_); }
double RowMeasures::distance() const { return meanOf(distance_, used_); }
double RowMeasures::keyShare() const { return meanOf(keys_, used_); }
double RowMeasures::kl() const { return meanOf(kl_, used_); }

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
