#include "attnscope/analysis/metrics.h"

#include "attnscope/runtime/error.h"
#include "row_measures.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnscope {

void checkMapShape(const HeadMap& map, const char* what) {
    if (map.rows >= 0 && map.cols >= 0 &&
        map.values.size() == static_cast<std::size_t>(map.rows) * static_cast<std::size_t>(map.cols))
        return;
    throw Error(std::string(what) + ": a map of " + std::to_string(map.rows) + "x" + std::to_string(map.cols) +
                " needs " +
                (map.rows >= 0 && map.cols >= 0 ? std::to_string(static_cast<long long>(map.rows) * map.cols)
                                                : std::string("R·C >= 0")) +
                " values, it holds " + std::to_string(map.values.size()));
}

double meanRowEntropy(const HeadMap& map) {
    checkMapShape(map, "mean row entropy");
    RowMeasures m(map.rows, map.cols, RowMeasures::Entropy);
    m.addMap(map);
    return m.entropy();
}

namespace {

// KL(p ‖ q) over n entries, in double whatever the element type (float maps, double
// distributions): the one implementation behind klDivergence and meanRowKl.
template <class T>
double kl(const T* p, const T* q, std::size_t n) {
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double a = p[i];
        if (a > 0) total += a * std::log(a / std::max(static_cast<double>(q[i]), kKlFloor));
    }
    return std::max(total, 0.0);
}

}  // namespace

double klDivergence(const std::vector<double>& p, const std::vector<double>& q) {
    if (p.size() != q.size())
        throw Error("KL divergence needs distributions of the same length, got " + std::to_string(p.size()) + " and " +
                    std::to_string(q.size()));
    return kl(p.data(), q.data(), p.size());
}

double meanRowKl(const HeadMap& p, const HeadMap& q) {
    checkMapShape(p, "KL divergence");
    checkMapShape(q, "KL divergence");
    if (p.rows != q.rows || p.cols != q.cols)
        throw Error("KL divergence needs maps of the same shape, got " + std::to_string(p.rows) + "x" +
                    std::to_string(p.cols) + " and " + std::to_string(q.rows) + "x" + std::to_string(q.cols));
    RowMeasures m(p.rows, p.cols, RowMeasures::Kl);
    m.addMap(p, &q);
    return m.kl();
}

}  // namespace attnscope
