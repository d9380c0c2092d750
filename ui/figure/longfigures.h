// The Long context tab's figures (issue 33), shared by the tab's exports and `attnscope-cli niah`:
//   - the needle scan's success map: depth (rows) × context length (columns), 1 retrieved, 0 not;
//   - the retrieval-head map: layer × head, each head's retrieval score over the largest;
//   - a map with one more row under it over the same keys: the generated rows of a needle run
//     over its context with the needle's span, or a prompt's map with the keys a policy kept;
//   - the eviction what-if's steps: KL(p_full ‖ p_evicted) per generated step as bars, and per
//     step whether the two generations chose the same token (painted in units, paintedfigure.h).
// The numbers are core's (analysis/needle.h, analysis/kv_eviction.h); this only draws them.
#pragma once

#include "figure/figure.h"

#include "attnscope/analysis/needle.h"

#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>

#include <vector>

class QPainter;

// runs in needleScan's order (lengths outer, depths inner) over these lengths and depths.
Figure needleSuccessFigure(const attnscope::NeedleResult& result, const std::vector<int>& lengths,
                           const std::vector<double>& depths);
// Scores over the largest (1 = the strongest head; all 0 when no head scored).
Figure retrievalFigure(const attnscope::NeedleResult& result);

// A map (rows × keys) with one more row under it over the same keys: strip[key] in [0, 1] (1 the
// needle / a kept key, 0 not), labelled stripName; the figure's one colour scale is the map's.
Figure stripMapFigure(const attnscope::HeadMap& map, const QStringList& queryLabels, const QStringList& keyLabels,
                      const QString& title, const std::vector<float>& strip, const QString& stripName);

struct EvictionFigure {
    std::vector<double> kl;  // per step: KL(p_full ‖ p_evicted) in nats
    std::vector<bool> same;  // per step: the two generations chose the same token
    QStringList tokensFull;  // per step, for the labels under the markers (may be empty)
    QStringList tokensEvicted;
    QString title;
    QStringList notes;     // lines under the plot
    double fontSize = 10;  // units
    bool empty() const { return kl.empty(); }
};

// The natural height for a width (units).
QSizeF evictionFigureSize(const EvictionFigure& figure, double width);
// Where the plot's bars are drawn in an area: step t's bar is centred at x(t).
struct EvictionLayout {
    QRectF plot;  // the bars' axes
    int steps = 0;
    double x(int step) const { return plot.left() + (step + 0.5) * plot.width() / std::max(1, steps); }
    // The step under a point's x inside the plot, or -1.
    int stepAt(const QPointF& p) const;
};
EvictionLayout evictionLayout(const QPaintDevice* device, const EvictionFigure& figure, const QRectF& area);
void paintEvictionFigure(QPainter& painter, const EvictionFigure& figure, const QRectF& area);
