// The neuron view's drawing (BertViz's neuron view): for one query token and head, the query
// vector q as a strip, the key vectors k_j and the products q⊙k_j as (key × dimension) heat maps
// in a diverging colour scale (symmetric about 0), and per key the scaled sum, any further logit
// terms, and the softmax weight with a bar. The numbers come from core (analysis/neuron.h); this
// only draws them. Painted in units (paintedfigure.h).
#pragma once

#include "attnscope/analysis/neuron.h"

#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>

class QPaintDevice;
class QPainter;

struct NeuronFigure {
    attnscope::NeuronRow row;
    QString queryLabel;
    QStringList keyLabels;  // one per key
    QString title;          // above everything; may be empty
    int focusKey = -1;      // a highlighted key row (hover / selection); -1 none
    double fontSize = 10;   // units
};

struct NeuronLayout {
    QRectF qStrip, keys, products;                                    // the three heat maps
    double top = 0, rowHeight = 0;                                    // key rows
    double labelRight = 0;                                            // key labels end here
    double scaledX = 0, extraX = 0, weightX = 0, barX = 0, barW = 0;  // number columns (right edges), bar
    double fontSize = 10;
    int keyAt(const QPointF& p, int keys) const;  // key row under a point, or -1
};

QSizeF neuronFigureSize(const NeuronFigure& figure, double width);
NeuronLayout neuronLayout(const QPaintDevice* device, const NeuronFigure& figure, const QRectF& area);
void paintNeuronFigure(QPainter& painter, const NeuronFigure& figure, const QRectF& area);

// "0.123", "−1.50": how the figure writes a number (3 significant decimals, a true minus).
QString neuronNumber(double value);
