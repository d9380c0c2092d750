// The router strip of a mixture-of-experts decoder (Trace::router): one row per layer, one column
// per token, each cell coloured by the token's most probable expert in that layer and lightened
// toward white as that expert's probability falls; dense layers grey. Drawn under the map by the
// window (views/routerstripview.h) and by the exported figure (Figure::routerStrip), from the
// same colours. Reads the Trace only; computes nothing.
#pragma once

#include "attnscope/attention/router_trace.h"
#include "attnscope/attention/trace.h"

#include <QColor>
#include <QRectF>
#include <QString>
#include <QStringList>

#include <optional>

class QPainter;

struct RouterStripFigure {
    attnscope::RouterTrace router;
    QStringList tokenLabels;  // readable labels, one per token (hover text)
    int layer = -1;           // the layer the map shows, framed (-1: none)
    int firstToken = 0;       // the tokens drawn: [firstToken, firstToken + tokenCount) (a zoomed map's keys)
    int tokenCount = 0;
};

// The strip of `trace` (all its tokens, `layer` framed), or nothing when it has no routers.
std::optional<RouterStripFigure> routerStripFigure(const attnscope::Trace& trace, int layer);

// Expert e's colour (distinct hues, E of them) at probability p in [0, 1]: full at 1, white at 0.
QColor routerExpertColor(int expert, int experts, double probability = 1.0);
inline const QColor kRouterDenseColor(0xd9, 0xd9, 0xd9);

// The cells in `area` (layer 0 on top), the shown layer framed with a `line`-wide pen.
void paintRouterCells(QPainter& painter, const QRectF& area, const RouterStripFigure& strip, double line);

// The hover text of (layer, token): the token, the chosen experts and the probabilities of the
// most probable experts (all of them up to 16), or that the layer is dense.
QString routerCellText(const RouterStripFigure& strip, int layer, int token);
