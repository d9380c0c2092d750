// The query–key space's drawing (qkfigure.h).
#include "figure/qkfigure.h"

#include "figure/colormaps.h"
#include "figure/paintedfigure.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace {

// Roughly 5 round tick values over [lo, hi].
std::vector<double> ticks(double lo, double hi) {
    const double raw = (hi - lo) / 5, mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
    std::vector<double> t;
    for (double v = std::ceil(lo / step) * step; v <= hi + 1e-12; v += step)
        t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    return t;
}

int positionsOf(const attnscope::QkSpace& s, bool key) {
    int n = 0;
    for (int p = 0; p < s.points(); ++p)
        if (s.isKey[p] == key) n = std::max(n, s.position[p] + 1);
    return n;
}

}  // namespace

int QkLayout::pointAt(const attnscope::QkSpace& s, const QPointF& p, double radius) const {
    int best = -1;
    double bestD = radius * radius;
    for (int i = 0; i < s.points(); ++i) {
        const QPointF q = toUnits(s.x[i], s.y[i]);
        const double d = (q.x() - p.x()) * (q.x() - p.x()) + (q.y() - p.y()) * (q.y() - p.y());
        if (d <= bestD) best = i, bestD = d;
    }
    return best;
}

QColor tokenKindColor(attnscope::TokenKind kind) {
    switch (kind) {
        case attnscope::TokenKind::Special: return {0x20, 0x20, 0x20};
        case attnscope::TokenKind::Punctuation: return {0xe6, 0x9f, 0x00};
        case attnscope::TokenKind::WordStart: return {0x00, 0x72, 0xb2};
        case attnscope::TokenKind::Continuation: return {0xd5, 0x5e, 0x00};
        case attnscope::TokenKind::Patch: return {0x00, 0x9e, 0x73};
    }
    return Qt::gray;
}

attnscope::TokenKind qkPointKind(const QkFigure& f, int i) {
    const auto& kinds = f.space.isKey[i] ? f.keyKinds : f.queryKinds;
    const int pos = f.space.position[i];
    return pos >= 0 && pos < int(kinds.size()) ? kinds[std::size_t(pos)] : attnscope::TokenKind::WordStart;
}

QColor qkPointColor(const QkFigure& f, int i) {
    const attnscope::QkSpace& s = f.space;
    switch (f.coloring) {
        case QkColoring::Kind: return s.isKey[i] ? QColor(0xd9, 0x5f, 0x02) : QColor(0x1b, 0x9e, 0x77);
        case QkColoring::Head: return headColor(s.head[i]);
        case QkColoring::TokenKind: return tokenKindColor(qkPointKind(f, i));
        case QkColoring::Position: break;
    }
    const int n = std::max(2, positionsOf(s, s.isKey[i]));
    return colormapColor(Colormap::Viridis, 0.9 * s.position[i] / double(n - 1));  // 0.9: no pale yellow on white
}

QString qkPointText(const QkFigure& f, int i) {
    if (i < 0 || i >= f.space.points()) return {};
    const bool key = f.space.isKey[i];
    const QStringList& labels = key ? f.keyLabels : f.queryLabels;
    const int pos = f.space.position[i];
    const QString kind =
            f.coloring == QkColoring::TokenKind
                    ? QStringLiteral(", %1").arg(QString::fromLatin1(attnscope::tokenKindName(qkPointKind(f, i))))
                    : QString();
    return QStringLiteral("%1 %2 (position %3, head %4%5)")
            .arg(key ? QStringLiteral("key") : QStringLiteral("query"),
                 pos < labels.size() ? QStringLiteral("'%1'").arg(labels[pos]) : QString::number(pos))
            .arg(pos)
            .arg(f.space.head[i])
            .arg(kind);
}

QSizeF qkFigureSize(const QkFigure& f, double width) { return {width, std::ceil(width * 0.8 + f.fontSize * 3)}; }

QkLayout qkLayout(const QkFigure& f, const QRectF& area) {
    QkLayout L;
    const double fs = f.fontSize;
    const double top = area.top() + fs * (f.title.isEmpty() ? 1.0 : 2.4) + fs * 1.4;  // title, legend
    L.plot = QRectF(area.left() + fs * 4.2, top, area.width() - fs * 5.2, area.bottom() - top - fs * 3.4);
    const auto& s = f.space;
    if (s.points() == 0) return L;
    const auto [xa, xb] = std::minmax_element(s.x.begin(), s.x.end());
    const auto [ya, yb] = std::minmax_element(s.y.begin(), s.y.end());
    const double px = std::max(1e-6, double(*xb - *xa)) * 0.06, py = std::max(1e-6, double(*yb - *ya)) * 0.06;
    L.x0 = *xa - px, L.x1 = *xb + px, L.y0 = *ya - py, L.y1 = *yb + py;
    return L;
}

void paintQkFigure(QPainter& p, const QkFigure& f, const QRectF& area) {
    p.save();
    p.setClipRect(area);
    p.fillRect(area, Qt::white);
    const QkLayout L = qkLayout(f, area);
    const auto& s = f.space;
    const double fs = f.fontSize;
    double y = area.top() + fs * 0.3;
    if (!f.title.isEmpty()) {
        p.setFont(unitFont(p, fs, true));
        p.setPen(Qt::black);
        p.drawText(QRectF(area.left(), y, area.width(), fs * 1.4), Qt::AlignHCenter | Qt::AlignVCenter, f.title);
        y += fs * 1.4;
    }
    // Legend: the two markers, and what the colour means.
    p.setFont(unitFont(p, fs * 0.9));
    const QFontMetricsF fm(p.font(), p.device());
    const QString colourText = f.coloring == QkColoring::Position    ? QStringLiteral("colour: position (dark = first)")
                               : f.coloring == QkColoring::Head      ? QStringLiteral("colour: head")
                               : f.coloring == QkColoring::TokenKind ? QStringLiteral("colour:")
                                                                     : QStringLiteral("colour: query / key");
    // Token kinds: each kind the points have, named in its colour.
    std::vector<attnscope::TokenKind> kindsShown;
    if (f.coloring == QkColoring::TokenKind)
        for (auto k :
             {attnscope::TokenKind::Special, attnscope::TokenKind::Punctuation, attnscope::TokenKind::WordStart,
              attnscope::TokenKind::Continuation, attnscope::TokenKind::Patch})
            for (int i = 0; i < f.space.points(); ++i)
                if (qkPointKind(f, i) == k) {
                    kindsShown.push_back(k);
                    break;
                }
    double kindsW = 0;
    for (auto k : kindsShown)
        kindsW += fm.horizontalAdvance(QString::fromLatin1(attnscope::tokenKindName(k))) + fs * 0.8;
    const double r = std::clamp(fs * 0.32, 1.5, 4.0);
    const double legendW = fm.horizontalAdvance(QStringLiteral("queries")) +
                           fm.horizontalAdvance(QStringLiteral("keys (translated)")) +
                           fm.horizontalAdvance(colourText) + kindsW + fs * 6;
    double x = area.center().x() - legendW / 2;
    const double ly = y + fs * 0.7;
    // A legend wider than the figure (a narrow dock, token kinds) is drawn smaller, not cut off.
    p.save();
    if (legendW > area.width() * 0.98) {
        const double k = area.width() * 0.98 / legendW;
        p.translate(area.center().x(), ly);
        p.scale(k, k);
        p.translate(-area.center().x(), -ly);
    }
    p.setPen(QPen(QColor(0x30, 0x30, 0x30), 0.8));
    p.setBrush(QColor(0x1b, 0x9e, 0x77));
    p.drawEllipse(QPointF(x + r, ly), r, r);
    p.setPen(QColor(0x30, 0x30, 0x30));
    p.drawText(QPointF(x + 2.6 * r, ly + fs * 0.33), QStringLiteral("queries"));
    x += fm.horizontalAdvance(QStringLiteral("queries")) + fs * 2;
    p.setPen(QPen(QColor(0xd9, 0x5f, 0x02), 1.1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(x, ly - r, 2 * r, 2 * r));
    p.setPen(QColor(0x30, 0x30, 0x30));
    const QString keysText = QStringLiteral("keys%1").arg(QStringLiteral(" (translated)"));
    p.drawText(QPointF(x + 2.6 * r, ly + fs * 0.33), keysText);
    x += fm.horizontalAdvance(keysText) + fs * 2;
    p.drawText(QPointF(x, ly + fs * 0.33), colourText);
    x += fm.horizontalAdvance(colourText) + fs * 0.8;
    for (auto k : kindsShown) {
        const QString name = QString::fromLatin1(attnscope::tokenKindName(k));
        p.setPen(tokenKindColor(k));
        p.drawText(QPointF(x, ly + fs * 0.33), name);
        x += fm.horizontalAdvance(name) + fs * 0.8;
    }
    p.restore();

    // Frame, ticks, axis names with the variance each axis explains.
    p.setPen(QPen(QColor(0x40, 0x40, 0x40), 0.7));
    p.setBrush(Qt::NoBrush);
    p.drawRect(L.plot);
    p.setFont(unitFont(p, fs * 0.8));
    if (s.points() > 0) {
        for (double t : ticks(L.x0, L.x1)) {
            const double px = L.toUnits(t, 0).x();
            p.drawLine(QPointF(px, L.plot.bottom()), QPointF(px, L.plot.bottom() + fs * 0.3));
            p.drawText(QRectF(px - fs * 3, L.plot.bottom() + fs * 0.35, fs * 6, fs * 1.1),
                       Qt::AlignHCenter | Qt::AlignTop,
                       QString::number(t, 'g', 3).replace(QLatin1Char('-'), QChar(0x2212)));
        }
        for (double t : ticks(L.y0, L.y1)) {
            const double py = L.toUnits(0, t).y();
            p.drawLine(QPointF(L.plot.left() - fs * 0.3, py), QPointF(L.plot.left(), py));
            p.drawText(QRectF(L.plot.left() - fs * 3.5, py - fs * 0.6, fs * 3.1, fs * 1.2),
                       Qt::AlignRight | Qt::AlignVCenter,
                       QString::number(t, 'g', 3).replace(QLatin1Char('-'), QChar(0x2212)));
        }
    }
    p.setFont(unitFont(p, fs * 0.9));
    p.drawText(QRectF(L.plot.left(), L.plot.bottom() + fs * 1.5, L.plot.width(), fs * 1.3),
               Qt::AlignHCenter | Qt::AlignVCenter,
               QStringLiteral("PC 1 (%1% of variance)").arg(s.explained[0] * 100, 0, 'f', 1));
    p.save();
    p.translate(area.left() + fs * 0.9, L.plot.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-L.plot.height() / 2, -fs * 0.7, L.plot.height(), fs * 1.4), Qt::AlignCenter,
               QStringLiteral("PC 2 (%1% of variance)").arg(s.explained[1] * 100, 0, 'f', 1));
    p.restore();

    // Points: keys first (hollow squares) so the queries sit on top; the selected query's
    // attention sizes the keys.
    p.setClipRect(L.plot.adjusted(-r * 3, -r * 3, r * 3, r * 3));
    double rowMax = 0;
    for (float w : f.selectedRow) rowMax = std::max(rowMax, double(w));
    const int sel = f.selected;
    const bool sizing = sel >= 0 && !s.isKey[sel] && rowMax > 0;
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < s.points(); ++i) {
            if (s.isKey[i] != (pass == 0)) continue;
            const QPointF c = L.toUnits(s.x[i], s.y[i]);
            QColor col = qkPointColor(f, i);
            if (s.isKey[i]) {
                double rr = r;
                if (sizing && s.head[i] == s.head[sel]) {
                    const int pos = s.position[i];
                    const double w = pos < int(f.selectedRow.size()) ? f.selectedRow[pos] / rowMax : 0.0;
                    rr = r * (0.6 + 1.8 * std::sqrt(w));
                } else if (sizing) {
                    col.setAlphaF(0.35);
                }
                p.setPen(QPen(col, 1.1));
                p.setBrush(Qt::NoBrush);
                p.drawRect(QRectF(c.x() - rr, c.y() - rr, 2 * rr, 2 * rr));
            } else {
                col.setAlphaF(0.85);
                p.setPen(QPen(QColor(255, 255, 255, 200), 0.4));
                p.setBrush(col);
                p.drawEllipse(c, r, r);
            }
        }
    for (int i : {f.selected, f.hovered}) {
        if (i < 0 || i >= s.points()) continue;
        const QPointF c = L.toUnits(s.x[i], s.y[i]);
        p.setPen(QPen(Qt::black, i == f.selected ? 1.4 : 0.9));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(c, r * 2.2, r * 2.2);
        p.setFont(unitFont(p, fs * 0.9, i == f.selected));
        const QString text = qkPointText(f, i);
        const QFontMetricsF tm(p.font(), p.device());
        QRectF box(c.x() + r * 2.6, c.y() - fs * 1.6, tm.horizontalAdvance(text) + fs * 0.6, fs * 1.3);
        if (box.right() > L.plot.right()) box.moveRight(c.x() - r * 2.6);
        if (box.left() < area.left()) box.moveLeft(area.left());  // long labels in a narrow view stay readable
        p.fillRect(box, QColor(255, 255, 255, 225));
        p.setPen(Qt::black);
        p.drawText(box, Qt::AlignCenter, text);
    }
    p.restore();
}
