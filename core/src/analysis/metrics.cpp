#include "attnscope/analysis/metrics.h"

#include "attnscope/runtime/error.h"
#include "map_rows.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnscope {

void checkMapShape(const HeadMap& map, const char* what) {
    if (map.rows >= 0 && map.cols >= 0 &&
        map.values.size() == static_cast<std::size_t>(map.rows) * static_cast<std::size_t>(map.cols))
        return;
    throw Error(std::string(what) + ": a map of " + std::to_string(map.rows) + "x" + std::to_string(map.cols) + " needs " +
                (map.rows >= 0 && map.cols >= 0 ? std::to_string(static_cast<long long>(map.rows) * map.cols) : std::string("R·C >= 0")) +
                " values, it holds " + std::to_string(map.values.size()));
}

double meanRowEntropy(const HeadMap& map) {
    checkMapShape(map, "mean row entropy");
    double total = 0;
    int rows = 0;
    for (int r = 0; r < map.rows; ++r) {
        if (rowIsZero(map, r)) continue;
        double h = 0;
        for (int c = 0; c < map.cols; ++c) {
            const double p = map.at(r, c);
            if (p > 0) h -= p * std::log(p);
        }
        total += h;
        ++rows;
    }
    return rows ? total / rows : 0.0;
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
    double total = 0;
    int rows = 0;
    for (int r = 0; r < p.rows; ++r) {
        if (rowIsZero(p, r)) continue;
        const std::size_t offset = static_cast<std::size_t>(r) * p.cols;
        total += kl(p.values.data() + offset, q.values.data() + offset, static_cast<std::size_t>(p.cols));
        ++rows;
    }
    return rows ? total / rows : 0.0;
}

}  // namespace attnscope
