#include "views/mapzoom.h"

#include <algorithm>
#include <cmath>

namespace {

// [lower, upper] of width within [-0.5, n - 0.5], no narrower than the minimum, moved inside.
void fit(double& lower, double& upper, int n) {
    const double full = std::max(n, 1);
    const double width = std::clamp(upper - lower, std::min<double>(kMinZoomCells, full), full);
    lower = (lower + upper) / 2 - width / 2;
    // Edges are set exactly (not shifted by differences), so a zoom that reaches them compares equal.
    if (width == full) {
        lower = -0.5, upper = full - 0.5;
    } else if (lower <= -0.5) {
        lower = -0.5, upper = -0.5 + width;
    } else if (lower + width >= full - 0.5) {
        upper = full - 0.5, lower = upper - width;
    } else {
        upper = lower + width;
    }
}

int firstCell(double lower) { return std::max(0, static_cast<int>(std::floor(lower + 0.5))); }
int endCell(double upper, int n) { return std::min(n, static_cast<int>(std::ceil(upper + 0.5))); }

}  // namespace

MapZoom MapZoom::whole(int rows, int cols) {
    MapZoom z;
    z.rows = rows;
    z.cols = cols;
    z.keyLower = z.queryLower = -0.5;
    z.keyUpper = std::max(cols, 1) - 0.5;
    z.queryUpper = std::max(rows, 1) - 0.5;
    return z;
}

bool MapZoom::isWhole() const { return *this == whole(rows, cols); }

MapZoom MapZoom::zoomedAt(double key, double query, double factor) const {
    if (!(factor > 0)) return *this;
    MapZoom z = *this;
    // The point keeps its fraction of the visible range on each axis.
    z.keyLower = key - (key - keyLower) / factor;
    z.keyUpper = key + (keyUpper - key) / factor;
    z.queryLower = query - (query - queryLower) / factor;
    z.queryUpper = query + (queryUpper - query) / factor;
    const double kw = z.keyUpper - z.keyLower, qw = z.queryUpper - z.queryLower;
    fit(z.keyLower, z.keyUpper, cols);
    fit(z.queryLower, z.queryUpper, rows);
    // A clamped width re-centres on the midpoint; put the point back under the cursor instead.
    if (z.keyUpper - z.keyLower != kw) {
        const double w = z.keyUpper - z.keyLower, t = (key - keyLower) / (keyUpper - keyLower);
        z.keyLower = key - t * w, z.keyUpper = z.keyLower + w;
        fit(z.keyLower, z.keyUpper, cols);
    }
    if (z.queryUpper - z.queryLower != qw) {
        const double w = z.queryUpper - z.queryLower, t = (query - queryLower) / (queryUpper - queryLower);
        z.queryLower = query - t * w, z.queryUpper = z.queryLower + w;
        fit(z.queryLower, z.queryUpper, rows);
    }
    return z;
}

MapZoom MapZoom::panned(double dKey, double dQuery) const {
    MapZoom z = *this;
    z.keyLower += dKey, z.keyUpper += dKey;
    z.queryLower += dQuery, z.queryUpper += dQuery;
    fit(z.keyLower, z.keyUpper, cols);
    fit(z.queryLower, z.queryUpper, rows);
    return z;
}

MapZoom MapZoom::toRect(double key0, double query0, double key1, double query1) const {
    MapZoom z = *this;
    z.keyLower = std::floor(std::min(key0, key1) + 0.5) - 0.5;
    z.keyUpper = std::floor(std::max(key0, key1) + 0.5) + 0.5;
    z.queryLower = std::floor(std::min(query0, query1) + 0.5) - 0.5;
    z.queryUpper = std::floor(std::max(query0, query1) + 0.5) + 0.5;
    fit(z.keyLower, z.keyUpper, cols);
    fit(z.queryLower, z.queryUpper, rows);
    return z;
}

int MapZoom::rowBegin() const { return firstCell(queryLower); }
int MapZoom::rowEnd() const { return endCell(queryUpper, rows); }
int MapZoom::colBegin() const { return firstCell(keyLower); }
int MapZoom::colEnd() const { return endCell(keyUpper, cols); }
