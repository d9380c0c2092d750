// Pixel <-> cell mapping of a heat map drawn like a matrix: cell centres sit on integer data
// coordinates (key = column on x, query = row on y), query 0 at the top. Plain struct, no
// QCustomPlot, so it is tested without a GUI.
#pragma once

#include <QPointF>
#include <QRectF>

#include <optional>

struct Cell {
    int query = 0;  // row
    int key = 0;    // column
    bool operator==(const Cell& o) const { return query == o.query && key == o.key; }
};

struct CellGeometry {
    QRectF area;             // the axis rect in widget pixels
    double keyLower = -0.5;  // x-axis range shown (data coordinates), left to right
    double keyUpper = 0.5;
    double queryLower = -0.5;  // y-axis range shown; lower is at the top (reversed axis)
    double queryUpper = 0.5;
    int rows = 0;  // queries
    int cols = 0;  // keys

    // The whole-matrix range for rows x cols cells, filling area.
    static CellGeometry fitted(const QRectF& area, int rows, int cols);

    // The cell under a pixel, or nothing outside the area or the matrix.
    std::optional<Cell> cellAt(const QPointF& pixel) const;
    // The pixel at a cell's centre.
    QPointF cellCenter(const Cell& cell) const;
    // A cell's size in pixels (width, height).
    QPointF cellSize() const;
};
