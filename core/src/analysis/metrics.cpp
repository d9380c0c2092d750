#include "attnscope/analysis/metrics.h"

#include "attnscope/runtime/error.h"
#include "map_rows.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnscope {

double meanRowEntropy(const HeadMap& map) {
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

double meanRowKl(const HeadMap& p, const HeadMap& q) {
    if (p.rows != q.rows || p.cols != q.cols)
        throw Error("KL divergence needs maps of the same shape, got " + std::to_string(p.rows) + "x" +
                    std::to_string(p.cols) + " and " + std::to_string(q.rows) + "x" + std::to_string(q.cols));
    double total = 0;
    int rows = 0;
    for (int r = 0; r < p.rows; ++r) {
        if (rowIsZero(p, r)) continue;
        double kl = 0;
        for (int c = 0; c < p.cols; ++c) {
            const double a = p.at(r, c);
            if (a > 0) kl += a * std::log(a / std::max(static_cast<double>(q.at(r, c)), 1e-12));
        }
        total += kl;
        ++rows;
    }
    return rows ? total / rows : 0.0;
}

}  // namespace attnscope
