// Positional measures, pattern classes and similarity of attention maps (see metrics.h).
#include "attnscope/runtime/error.h"
#include "attnscope/analysis/metrics.h"
#include "map_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>

namespace attnscope {

namespace {

// Mean over non-empty rows i (for which `use(i)` holds) of f(i).
double rowMean(const HeadMap& m, const std::function<bool(int)>& use, const std::function<double(int)>& f) {
    double total = 0;
    int count = 0;
    for (int i = 0; i < m.rows; ++i) {
        if (!use(i) || rowIsZero(m, i)) continue;
        total += f(i);
        ++count;
    }
    return count ? total / count : 0.0;
}

int aligned(const HeadMap& m, int i) { return i + (m.cols - m.rows); }

}  // namespace

double meanAttentionDistance(const HeadMap& map) {
    checkMapShape(map, "mean attention distance");
    return rowMean(map, [](int) { return true; }, [&](int i) {
        double d = 0;
        const int a = aligned(map, i);
        for (int j = 0; j < map.cols; ++j) d += map.at(i, j) * std::abs(j - a);
        return d;
    });
}

double attentionToKeys(const HeadMap& map, const std::vector<int>& keys) {
    checkMapShape(map, "attention to keys");
    std::set<int> cols;
    for (int k : keys)
        if (k >= 0 && k < map.cols) cols.insert(k);
    return rowMean(map, [](int) { return true; }, [&](int i) {
        double s = 0;
        for (int j : cols) s += map.at(i, j);
        return s;
    });
}

const char* patternName(PatternClass pattern) {
    switch (pattern) {
        case PatternClass::Diagonal: return "diagonal";
        case PatternClass::PreviousToken: return "previous-token";
        case PatternClass::Global: return "global";
        case PatternClass::Local: return "local";
        case PatternClass::Sparse: return "sparse";
        case PatternClass::Mixed: return "mixed";
    }
    return "?";
}

PatternScores patternScores(const HeadMap& map, const PatternThresholds& t) {
    checkMapShape(map, "pattern scores");
    PatternScores s;
    s.diagonal = rowMean(map, [&](int i) { const int a = aligned(map, i); return a >= 0 && a < map.cols; },
                         [&](int i) { return map.at(i, aligned(map, i)); });
    s.previous = rowMean(map, [&](int i) { const int a = aligned(map, i); return a >= 1 && a <= map.cols; },
                         [&](int i) { return map.at(i, aligned(map, i) - 1); });
    int rows = 0;
    std::vector<double> column(static_cast<std::size_t>(map.cols), 0.0);
    for (int i = 0; i < map.rows; ++i) {
        if (rowIsZero(map, i)) continue;
        ++rows;
        for (int j = 0; j < map.cols; ++j) column[j] += map.at(i, j);
    }
    if (rows > 0) {
        const auto best = std::max_element(column.begin(), column.end());
        s.globalKey = static_cast<int>(best - column.begin());
        s.global = *best / rows;
    }
    s.local = rowMean(map, [](int) { return true; }, [&](int i) {
        const int a = aligned(map, i);
        double w = 0;
        for (int j = std::max(0, a - t.localRadius); j <= std::min(map.cols - 1, a + t.localRadius); ++j) w += map.at(i, j);
        return w;
    });
    std::vector<float> row(static_cast<std::size_t>(map.cols));
    s.sparse = rowMean(map, [](int) { return true; }, [&](int i) {
        const float* p = map.values.data() + static_cast<std::size_t>(i) * map.cols;
        row.assign(p, p + map.cols);
        const int k = std::min(t.sparseKeys, map.cols);
        std::partial_sort(row.begin(), row.begin() + k, row.end(), std::greater<float>());
        double top = 0;
        for (int j = 0; j < k; ++j) top += row[j];
        return top;
    });
    return s;
}

PatternClass classifyPattern(const PatternScores& s, int cols, const PatternThresholds& t) {
    if (s.diagonal >= t.diagonal) return PatternClass::Diagonal;
    if (s.previous >= t.previous) return PatternClass::PreviousToken;
    if (s.global >= t.global) return PatternClass::Global;
    if (s.local >= t.local) return PatternClass::Local;
    if (s.sparse >= t.sparse && cols >= 2 * t.sparseKeys + 2) return PatternClass::Sparse;
    return PatternClass::Mixed;
}

PatternClass classifyPattern(const HeadMap& map, const PatternThresholds& t) {
    return classifyPattern(patternScores(map, t), map.cols, t);
}

double mapCosine(const HeadMap& a, const HeadMap& b) {
    checkMapShape(a, "map cosine");
    checkMapShape(b, "map cosine");
    const int rows = std::min(a.rows, b.rows), cols = std::min(a.cols, b.cols);
    double dot = 0, na = 0, nb = 0;
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
            const double x = a.at(i, j), y = b.at(i, j);
            dot += x * y;
            na += x * x;
            nb += y * y;
        }
    if (na <= 0 || nb <= 0) return 0.0;
    return dot / std::sqrt(na * nb);
}

std::vector<double> similarityMatrix(const std::vector<HeadMap>& maps) {
    const std::size_t k = maps.size();
    std::vector<double> out(k * k, 0.0);
    for (std::size_t a = 0; a < k; ++a)
        for (std::size_t b = a; b < k; ++b) out[a * k + b] = out[b * k + a] = mapCosine(maps[a], maps[b]);
    return out;
}

}  // namespace attnscope
