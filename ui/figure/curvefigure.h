// Publication line plots (the corpus analysis's pruning curves): one or more series of (x, y)
// points with an optional ±spread band, axes with ticks, a legend; drawn with QPainter at a
// physical size in inches, written as PDF / SVG / PNG like the attention-map figures (figure.h).
//
// Units: layout in points (1/72 in). Needs a QGuiApplication (fonts); no widgets.
#pragma once

#include <QColor>
#include <QImage>
#include <QString>

#include <vector>

class QPainter;

struct CurveSeries {
    QString name;                // legend entry (empty: no legend entry)
    std::vector<double> x, y;    // same length, x increasing
    std::vector<double> spread;  // empty, or one per point: a band y ± spread is shaded
    QColor color = QColor(0x1f, 0x77, 0xb4);
};

struct CurveFigure {
    std::vector<CurveSeries> series;
    QString title, xLabel, yLabel;
    double widthIn = 3.25, heightIn = 2.4;
    bool fixedY = false;    // y range [yMin, yMax] instead of the data's
    bool integerX = false;  // x is a count or an index: ticks only at whole numbers
    double yMin = 0, yMax = 1;
    QString fontFamily = QStringLiteral("DejaVu Sans");
};

// A palette of distinguishable colours for series i (matplotlib's tab10 order).
QColor seriesColor(int i);

// Paints into a device whose width corresponds to widthIn·72 points.
void paintCurveFigure(QPainter& painter, const CurveFigure& figure);
QImage renderCurveFigure(const CurveFigure& figure, int dpi);
// By extension (.pdf, .svg, .png) through FigureOutput (figure/output_file.h); throws attnscope::Error naming the file
// for an unknown extension, an empty or malformed figure, or an unwritable folder.
void writeCurveFigure(const CurveFigure& figure, const QString& path, int dpi = 300);
