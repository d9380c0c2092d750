// The Causal tab's figures (issue 32), each painted by one function in units (paintedfigure.h),
// so the tab on screen and the exported file are the same drawing:
//   - the logit-lens grid: layer × position, each cell the top token's text, coloured by its
//     probability (the colour map over [0, 1]);
//   - a signed layer × column map (direct logit attribution per head; activation-patching
//     scores per head or per position) in a diverging scale symmetric about 0, with notes under
//     it and, for DLA, the other components (embeddings, attention biases, MLPs) as bars.
// The numbers are core's (analysis/logit_lens.h, analysis/patching.h); this only draws them.
#pragma once

#include "figure/colormaps.h"

#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

class QPaintDevice;
class QPainter;

// Where a grid figure's cells are, in the units it was painted in.
struct CausalGridLayout {
    QRectF cells;  // the whole grid of cells
    int rows = 0, cols = 0;
    double fontSize = 10;
    // The cell (row, column) under a point; {-1, -1} outside the grid.
    std::pair<int, int> cellAt(const QPointF& p) const;
    QRectF cellRect(int row, int col) const;
};

struct LensFigure {
    int rows = 0, cols = 0, k = 0;  // L + 1 rows (row 0: the embeddings), n positions, top k
    QStringList rowLabels;          // one per row
    QStringList colLabels;          // the input tokens
    QStringList topText;            // [rows, cols, k]: the top tokens' text, most probable first
    std::vector<float> topProb;     // [rows, cols, k]: their probabilities
    QString title;
    Colormap colormap = Colormap::Viridis;
    double fontSize = 10;  // units
    int focusRow = -1, focusCol = -1;

    const QString& text(int row, int col, int rank = 0) const { return topText[(row * cols + col) * k + rank]; }
    float prob(int row, int col, int rank = 0) const { return topProb[std::size_t((row * cols + col) * k + rank)]; }
    bool empty() const { return rows <= 0 || cols <= 0 || k <= 0; }
};

QSizeF lensFigureSize(const LensFigure& figure, double width);
CausalGridLayout lensLayout(const QPaintDevice* device, const LensFigure& figure, const QRectF& area);
void paintLensFigure(QPainter& painter, const LensFigure& figure, const QRectF& area);

struct SignedMapFigure {
    int rows = 0, cols = 0;
    std::vector<double> values;  // [rows, cols]
    QStringList rowLabels, colLabels;
    QString rowAxis = QStringLiteral("layer"), colAxis = QStringLiteral("head");
    QString title;
    QStringList notes;  // lines under the map ("sum of the parts 1.234 = logit difference 1.234")
    // Further components drawn as bars under the map (DLA: embeddings, attention biases, MLPs),
    // in the map's colour scale.
    std::vector<std::pair<QString, double>> bars;
    QString barsTitle;
    double fontSize = 10;  // units
    int focusRow = -1, focusCol = -1;

    double at(int row, int col) const { return values[std::size_t(row * cols + col)]; }
    bool empty() const { return rows <= 0 || cols <= 0; }
    // The colour scale's end: the largest |value| of the map and the bars (1 when all are 0).
    double scaleEnd() const;
};

QSizeF signedMapFigureSize(const SignedMapFigure& figure, double width);
CausalGridLayout signedMapLayout(const QPaintDevice* device, const SignedMapFigure& figure, const QRectF& area);
void paintSignedMapFigure(QPainter& painter, const SignedMapFigure& figure, const QRectF& area);

// "0.123", "−1.50", "1.2e+03": how the causal figures write a number (a true minus).
QString causalNumber(double value);
