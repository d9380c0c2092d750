#include "views/cellgeometry.h"

#include <cmath>

CellGeometry CellGeometry::fitted(const QRectF& area, int rows, int cols) {
    CellGeometry g;
    g.area = area;
    g.rows = rows;
    g.cols = cols;
    g.keyLower = -0.5;
    g.keyUpper = cols - 0.5;
    g.queryLower = -0.5;
    g.queryUpper = rows - 0.5;
    return g;
}

std::optional<Cell> CellGeometry::cellAt(const QPointF& pixel) const {
    if (!area.contains(pixel) || area.width() <= 0 || area.height() <= 0) return std::nullopt;
    const double key = keyLower + (pixel.x() - area.left()) / area.width() * (keyUpper - keyLower);
    const double query = queryLower + (pixel.y() - area.top()) / area.height() * (queryUpper - queryLower);
    const int k = static_cast<int>(std::floor(key + 0.5));
    const int q = static_cast<int>(std::floor(query + 0.5));
    if (k < 0 || k >= cols || q < 0 || q >= rows) return std::nullopt;
    return Cell{q, k};
}

QPointF CellGeometry::cellCenter(const Cell& cell) const {
    const double x = area.left() + (cell.key - keyLower) / (keyUpper - keyLower) * area.width();
    const double y = area.top() + (cell.query - queryLower) / (queryUpper - queryLower) * area.height();
    return {x, y};
}

QPointF CellGeometry::cellSize() const {
    return {area.width() / (keyUpper - keyLower), area.height() / (queryUpper - queryLower)};
}
