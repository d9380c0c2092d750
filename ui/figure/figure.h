// Publication figures of attention maps: one or more heat maps side by side (row = query,
// column = key, query 0 on top), token labels on both axes, a colour bar, drawn with QPainter at
// a physical width in inches. Used by the window's File > Export figure… and by
// `attnscope-cli export`, so both write the same picture.
//
// Units: the layout is computed in points (1/72 in); font sizes are points relative to the
// physical width, so labels stay legible at 3.25 in (one column) and 6.75 in (two columns).
// Cells are vector rectangles (crisp at any zoom); maps over 40,000 cells are drawn as an image
// magnified without smoothing. PDF keeps text as text with the fonts embedded; SVG comes from
// QSvgGenerator; PNG carries its dpi in the file.
//
// Needs a QGuiApplication (fonts); no widgets, no display (the offscreen platform works).
#pragma once

#include "figure/colormaps.h"
#include "figure/routerfigure.h"

#include "attnscope/attention/trace.h"

#include <QColor>
#include <QImage>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

class QPainter;

struct FigurePanel {
    attnscope::HeadMap map;   // rows = queries, cols = keys, values in [0, 1]
    QStringList queryLabels;  // one per row (missing ones show as indices)
    QStringList keyLabels;    // one per column
    QString title;            // above the panel; may hold a second line after '\n'
    // Per row the column whose cell gets a mark (a dot; -1 or missing: none), e.g. the argmax
    // of an alignment figure. Empty: no marks.
    std::vector<int> rowMarks = {};
};

struct Figure {
    // Side by side, sharing the query labels of the first; with `columns` set, a grid of that
    // many columns filled row by row (batch figures, gridfigure.h): query labels left of each
    // row, key labels under the lowest panel of each column, one colour bar for all.
    std::vector<FigurePanel> panels;
    int columns = 0;  // 0: every panel in one row
    QString title;    // above everything; may be empty
    Colormap colormap = Colormap::Viridis;
    ColorScale scale;
    double widthIn = 3.25;  // physical width of the whole figure
    QString fontFamily = QStringLiteral("DejaVu Sans");
    QString colorbarLabel = QStringLiteral("attention weight");
    QString keyAxis = QStringLiteral("key");  // axis names
    QString queryAxis = QStringLiteral("query");
    bool keysOnTop = false;  // key labels above the maps (alignment figures: source along the top)
    // Mixture-of-experts decoders: the router strip under the (first) map, its tokens along the map's keys.
    std::optional<RouterStripFigure> routerStrip = std::nullopt;
};

// The colour of row marks (FigurePanel::rowMarks), drawn with a white ring.
inline const QColor kFigureMarkColor(0xe4, 0x1a, 0x1c);

enum class FigureFormat { Pdf, Svg, Png };

// From the file name's extension (.pdf, .svg, .png; any case).
std::optional<FigureFormat> figureFormatFor(const QString& path);

// The figure's size in points: width = widthIn·72, height from the layout (whole points).
QSizeF figureSizePoints(const Figure& figure);

// Where panel i's cells are drawn, in points from the figure's top left (PNG pixels: × dpi / 72).
QRectF figureMapRect(const Figure& figure, int panel);

// Paints the figure so that it fills width·72 points scaled to the device: the painter's device
// must have the figure's aspect (see figureSizePoints) and logicalDpiY() pixels per inch.
void paintFigure(QPainter& painter, const Figure& figure);

// The figure as an image at dpi: width = round(widthIn·dpi) pixels, dots per metre set.
QImage renderFigure(const Figure& figure, int dpi);

// Writes PDF, SVG or PNG (by the extension; dpi is for PNG) through a temporary file, so a
// failure leaves an existing file unchanged. Several figures: one PDF page each (PDF only). Throws attnscope::Error
// naming the file and the problem (unknown extension, empty figure, unwritable folder, width or dpi out of range).
void writeFigure(const Figure& figure, const QString& path, int dpi = 300);
void writeFigurePages(const std::vector<Figure>& pages, const QString& path);

// Limits checked by writeFigure (and offered by the export dialog).
constexpr double kMinFigureWidthIn = 1.0;
constexpr double kMaxFigureWidthIn = 20.0;
constexpr int kMinFigureDpi = 50;
constexpr int kMaxFigureDpi = 2400;

// "reverse-dot · cross · layer 1 · head 2 · T = 0.5": names a map in titles and file names.
// block may be empty (single-block models); the temperature shows when it is not 1.
QString mapTitle(const QString& model, const QString& block, int layer, int head, double temperature);  // head -1: none
