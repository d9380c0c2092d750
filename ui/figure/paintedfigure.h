// What the line, neuron and query–key figures share: they are painted by a function in units
// (1 unit = 1 point in a file, 1 logical pixel on screen), so a view on screen and its exported
// figure are the same drawing. Writes such a painting as PDF (text stays text), SVG or PNG.
//
// Needs a QGuiApplication (fonts); no widgets.
#pragma once

#include <QColor>
#include <QFont>
#include <QImage>
#include <QSizeF>
#include <QString>

#include <functional>

class QPaintDevice;
class QPainter;

// A font `units` high for a painter whose device has logicalDpiY() pixels per inch (the painter
// may be scaled afterwards; the size is in the painter's units).
QFont unitFont(const QPaintDevice* device, double units, bool bold = false,
               const QString& family = QStringLiteral("DejaVu Sans"));
QFont unitFont(const QPainter& painter, double units, bool bold = false,
               const QString& family = QStringLiteral("DejaVu Sans"));

// A qualitative palette for heads (Tableau 10, colour-blind friendlier than d3's category10):
// colour i of 10, repeating.
QColor headColor(int index);

// A diverging colour for value in [-1, 1]: blue (−) → white (0) → red (+) (ColorBrewer RdBu).
QColor divergingColor(double value);

// A painted figure as a view exports it: its size in points for a width in points, and how it
// paints itself into that size (the export dialog previews and writes it at any width).
struct PaintedFigure {
    std::function<QSizeF(double widthPt)> size;
    std::function<void(QPainter&, const QSizeF&)> paint;
    QString title;  // the PDF's / SVG's title
    explicit operator bool() const { return bool(paint) && bool(size); }
};

// The figure as an image at dpi (white background, dots per metre set).
QImage renderPainted(const QSizeF& sizePt, const std::function<void(QPainter&, const QSizeF&)>& paint, int dpi);

// Paints `paint(painter, size)` into path (.pdf, .svg or .png by extension) at size points
// (PNG: at dpi, dots per metre set), through a temporary file so a failure leaves an existing
// file unchanged. Throws attnscope::Error naming the file and what went wrong.
void writePainted(const QString& path, const QSizeF& sizePt, const std::function<void(QPainter&, const QSizeF&)>& paint,
                  const QString& title, int dpi = 300);
// The same for a PaintedFigure `widthIn` inches wide.
void writePainted(const QString& path, const PaintedFigure& figure, double widthIn, int dpi = 300);
