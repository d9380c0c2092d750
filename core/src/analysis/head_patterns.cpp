// Positional measures, pattern classes and similarity of attention maps (see metrics.h).
#include "attnscope/runtime/error.h"
#include "attnscope/analysis/metrics.h"
#include "row_measures.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>

namespace attnscope {

double meanAttentionDistance(const HeadMap& map) {
    checkMapShape(map, "mean attention distance");
    RowMeasures m(map.rows, map.cols, RowMeasures::Distance);
    m.addMap(map);
    return m.distance();
}

double attentionToKeys(const HeadMap& map, const std::vector<int>& keys) {
    checkMapShape(map, "attention to keys");
    RowMeasures m(map.rows, map.cols, RowMeasures::Keys, keys);
    m.addMap(map);
    return m.keyShare();
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
    RowMeasures m(map.rows, map.cols, RowMeasures::Patterns, {}, t);
    m.addMap(map);
    return m.patterns();
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
