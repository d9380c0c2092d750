// The line view's drawing (BertViz's head view): the query tokens in a column on the left, the
// key tokens on the right, one line per query–key pair and head with opacity = weight, heads
// overlaid in their colours. Painted in units (paintedfigure.h): the view and the export share it.
#pragma once

#include "attnscope/attention/trace.h"

#include <QColor>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

class QPaintDevice;
class QPainter;

struct LineHead {
    int head = 0;
    QColor color;
    attnscope::HeadMap map;  // [queries, keys]
};

struct LineFigure {
    QStringList queryLabels, keyLabels;
    std::vector<LineHead> heads;
    QString title;  // above the columns; may be empty
    QString leftTitle = QStringLiteral("queries"), rightTitle = QStringLiteral("keys");
    double threshold = 0.0;  // lines of weight below it are not drawn
    // The value drawn opaque: 1 for weights; for raw or signed map sources the largest |value| of
    // the layer's maps (opacity = |value| / valueScale, and the threshold is on that fraction).
    double valueScale = 1.0;
    int focusQuery = -1, focusKey = -1;  // only this token's lines (hover or lock); -1 none
    bool locked = false;                 // the focus is locked (drawn with a frame)
    double fontSize = 10;                // units
};

// Where things are in an area (units): row i's label centre at y = top + (i + 0.5) · rowHeight
// on each side, the lines running from leftX to rightX.
struct LineLayout {
    QRectF area;
    double top = 0, queryRow = 0, keyRow = 0;  // row heights of the two columns
    double leftLabelRight = 0, leftX = 0, rightX = 0, rightLabelLeft = 0;
    double fontSize = 10;
    double queryY(int i) const { return top + (i + 0.5) * queryRow; }
    double keyY(int j) const { return top + (j + 0.5) * keyRow; }
    // The token under a point: {column 0 = query / 1 = key, index}, or {-1, -1}.
    std::pair<int, int> tokenAt(const QPointF& p, int queries, int keys) const;
};

// The natural size in units for a width: enough height for every row at the figure's font (and
// for the legend's lines at that width).
QSizeF lineFigureSize(const LineFigure& figure, double width);
// The heads' legend under the title: per head its colour swatch and "head N" (box = both),
// wrapped onto as many centred lines as the area's width needs, in the painter's units.
struct LegendEntry {
    int head = 0;
    QRectF swatch, box;
    QPointF textAt;  // the text's baseline start
};
std::vector<LegendEntry> lineLegend(const QPaintDevice* device, const LineFigure& figure, const QRectF& area);
LineLayout lineLayout(const QPaintDevice* device, const LineFigure& figure, const QRectF& area);
void paintLineFigure(QPainter& painter, const LineFigure& figure, const QRectF& area);
