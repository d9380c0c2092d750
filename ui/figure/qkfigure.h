// The query–key space's drawing (AttentionViz): core's 2-D PCA of queries and keys
// (analysis/qk_space.h) as a scatter plot, queries as filled circles, keys as hollow squares,
// coloured by position, by kind (query / key) or by head. With a selected query, keys are sized
// by the attention the query gives them (the map at the slider's temperature, from core).
// Painted in units (paintedfigure.h).
#pragma once

#include "attnscope/analysis/qk_space.h"
#include "attnscope/analysis/token_kind.h"

#include <QColor>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>

#include <vector>

class QPainter;

// Kind = query or key; TokenKind = the token's kind (special, punctuation, word start,
// continuation: core's tokenizer/token_kind.h). The values are stable (saved in workspaces).
enum class QkColoring { Position = 0, Kind = 1, Head = 2, TokenKind = 3 };

struct QkFigure {
    attnscope::QkSpace space;
    QStringList queryLabels, keyLabels;  // by position
    QString title;
    // Core's token kinds by position (attnscope::blockTokenKinds), for TokenKind colouring;
    // positions beyond them are drawn as word starts.
    std::vector<attnscope::TokenKind> queryKinds, keyKinds;
    QkColoring coloring = QkColoring::Position;
    int selected = -1, hovered = -1;  // point indices; -1 none
    // With a selected query: its attention on every key (size the key markers); else empty.
    std::vector<float> selectedRow;
    double fontSize = 10;
};

struct QkLayout {
    QRectF plot;                            // the frame, units
    double x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // data range shown
    QPointF toUnits(double x, double y) const {
        return {plot.left() + (x - x0) / (x1 - x0) * plot.width(),
                plot.bottom() - (y - y0) / (y1 - y0) * plot.height()};
    }
    // The nearest point within `radius` units of p, or -1.
    int pointAt(const attnscope::QkSpace& space, const QPointF& p, double radius) const;
};

QColor qkPointColor(const QkFigure& figure, int point);
// The colour of a token kind (Okabe–Ito: special black, punctuation orange, word start blue,
// continuation vermillion, patch green).
QColor tokenKindColor(attnscope::TokenKind kind);
// The kind of a point (TokenKind::WordStart when the figure has no kinds for it).
attnscope::TokenKind qkPointKind(const QkFigure& figure, int point);
QSizeF qkFigureSize(const QkFigure& figure, double width);
QkLayout qkLayout(const QkFigure& figure, const QRectF& area);
void paintQkFigure(QPainter& painter, const QkFigure& figure, const QRectF& area);
// The hover text of a point: "query 'tok' (position 3, head 1)".
QString qkPointText(const QkFigure& figure, int point);
