// The visible part of a rows x cols heat map and how the wheel, a drag, a rubber band and the
// keys change it. Data coordinates as in CellGeometry: cell centres on integers, the whole map
// spans -0.5 .. n - 0.5 on each axis. Plain struct, tested without a GUI.
#pragma once

struct MapZoom {
    int rows = 0;  // queries
    int cols = 0;  // keys
    double keyLower = -0.5, keyUpper = 0.5;
    double queryLower = -0.5, queryUpper = 0.5;

    static MapZoom whole(int rows, int cols);
    bool isWhole() const;

    // Zoomed by factor (> 1 in, < 1 out) keeping the data point (key, query) where it is on
    // screen; never narrower than a few cells nor wider than the map, and kept inside it.
    MapZoom zoomedAt(double key, double query, double factor) const;
    // Moved by (dKey, dQuery) data units, stopping at the map's edges.
    MapZoom panned(double dKey, double dQuery) const;
    // The rectangle between two data points (a rubber band), widened to whole cells.
    MapZoom toRect(double key0, double query0, double key1, double query1) const;

    // The cells at least partly visible: rows [rowBegin, rowEnd) x keys [colBegin, colEnd).
    int rowBegin() const;
    int rowEnd() const;
    int colBegin() const;
    int colEnd() const;
    // On-screen size of a cell when the visible range fills `pixels`.
    double cellWidth(double pixels) const { return pixels / (keyUpper - keyLower); }
    double cellHeight(double pixels) const { return pixels / (queryUpper - queryLower); }

    bool operator==(const MapZoom& o) const {
        return rows == o.rows && cols == o.cols && keyLower == o.keyLower && keyUpper == o.keyUpper &&
               queryLower == o.queryLower && queryUpper == o.queryUpper;
    }
};

// Cells at least this many pixels wide are drawn crisp with their tokens as tick labels.
constexpr double kReadableCellPixels = 4.0;
// The narrowest zoom, in cells, on each axis (or the whole axis when it has fewer).
constexpr int kMinZoomCells = 4;
