// Colour maps and colour scales shared by the interactive views and the exported figures, so a
// figure has exactly the colours the window shows.
//
// The gradients are sampled from the published 256-entry tables of matplotlib's viridis, cividis
// and magma (17 evenly spaced stops, linear interpolation in RGB between them); gray runs from
// black to white. QCustomPlot 2.1 has no gradient presets for these.
#pragma once

#include <QColor>
#include <QGradientStops>
#include <QImage>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace attnscope {
struct HeadMap;
}

// RdBu (diverging: blue < 0, white at the middle, red > 0) is what signed maps are drawn in
// (figure/sourceview.h); it is not one of the choices the user picks from (colormapNames).
enum class Colormap { Viridis, Cividis, Magma, Gray, RdBu };

QString colormapName(Colormap map);                          // "viridis", ..., "rdbu"
std::optional<Colormap> parseColormap(const QString& name);  // case-insensitive; nothing if unknown
QStringList colormapNames();                                 // the user's choices, in enum order

// Colour at t in [0, 1] (clamped): linear RGB interpolation between the stops.
QColor colormapColor(Colormap map, double t);
// The stops as positions in [0, 1] (for QLinearGradient colour bars).
QGradientStops colormapStops(Colormap map);

enum class ColorScaleType { Linear, Log };

// Maps a value to [0, 1]: linear over [lo, hi], or log10 over [logFloor · hi, hi] (values below
// the floor, zeros included, get the lowest colour). Attention weights use the default [0, 1];
// raw norms their own range and signed maps [-m, m] (rangedScale, figure/sourceview.h).
struct ColorScale {
    ColorScaleType type = ColorScaleType::Linear;
    double logFloor = 1e-4;  // relative to hi
    double lo = 0.0, hi = 1.0;

    double lower() const;
    double upper() const { return hi; }
    double position(double value) const;
    // The value drawn at position p in [0, 1] (inverse of position()).
    double valueAt(double p) const;
    // Tick values for a colour bar: five from lo to hi (0, 0.25, …, 1), or the decades from the
    // floor to hi (1e-4 … 1).
    QList<double> ticks() const;
};

// A scale over the values' range [lo, hi] (log: up to hi). A degenerate range (a constant map)
// is widened so the colour bar stays readable; non-finite bounds give [0, 1].
ColorScale rangedScale(ColorScaleType type, double lo, double hi);

// "0.25", "10⁻⁴": a colour bar tick label.
QString tickLabel(const ColorScale& scale, double value);

// A map as an image, one pixel per cell, coloured like the views (the overview's thumbnails, the
// figures' large maps, the tests). maxSide > 0: larger maps are pooled (the mean over square
// blocks of cells) to at most maxSide pixels a side. The same as pooledImage(poolMap(...)).
QImage mapImage(const attnscope::HeadMap& map, Colormap colormap, const ColorScale& scale, int maxSide = 0);

// The values mapImage colours: row-major, width × height (0 × 0 for an empty map).
struct PooledMap {
    int width = 0;
    int height = 0;
    std::vector<double> values;
};
PooledMap poolMap(const attnscope::HeadMap& map, int maxSide);
QImage pooledImage(const PooledMap& pooled, Colormap colormap, const ColorScale& scale);
