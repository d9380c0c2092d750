// The Long context tab's figures (longfigures.h).
#include "figure/longfigures.h"

#include "figure/paintedfigure.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

Figure needleSuccessFigure(const attnscope::NeedleResult& r, const std::vector<int>& lengths,
                           const std::vector<double>& depths) {
    Figure f;
    FigurePanel s;
    const auto D = depths.size(), L = lengths.size();
    s.map = {int(D), int(L), std::vector<float>(D * L, 0.0f)};
    for (std::size_t i = 0; i < r.runs.size() && i < D * L; ++i)  // runs: lengths outer, depths inner
        s.map.values[(i % D) * L + i / D] = r.runs[i].success ? 1.0f : 0.0f;
    for (double d : depths) s.queryLabels << QString::number(d, 'g', 3);
    for (int n : lengths) s.keyLabels << QString::number(n);
    f.panels.push_back(s);
    f.title = QStringLiteral("needle retrieved (1) or not (0)");
    f.queryAxis = QStringLiteral("needle depth");
    f.keyAxis = QStringLiteral("context length");
    f.colorbarLabel = QStringLiteral("success");
    return f;
}

Figure retrievalFigure(const attnscope::NeedleResult& r) {
    Figure f;
    FigurePanel h;
    const double top = r.retrieval.empty() ? 0 : *std::max_element(r.retrieval.begin(), r.retrieval.end());
    h.map = {r.layers, r.heads, {}};
    for (double v : r.retrieval) h.map.values.push_back(top > 0 ? float(v / top) : 0.0f);
    for (int l = 0; l < r.layers; ++l) h.queryLabels << QStringLiteral("L%1").arg(l);
    for (int k = 0; k < r.heads; ++k) h.keyLabels << QStringLiteral("H%1").arg(k);
    f.panels.push_back(h);
    f.title = QStringLiteral("retrieval heads (%1 runs)").arg(r.runs.size());
    f.queryAxis = QStringLiteral("layer");
    f.keyAxis = QStringLiteral("head");
    f.colorbarLabel = QStringLiteral("retrieval score / max (max %1)").arg(top, 0, 'g', 3);
    return f;
}

Figure stripMapFigure(const attnscope::HeadMap& map, const QStringList& queryLabels, const QStringList& keyLabels,
                      const QString& title, const std::vector<float>& strip, const QString& stripName) {
    Figure f;
    FigurePanel p;
    p.map = map;
    p.map.rows = map.rows + 1;
    for (int k = 0; k < map.cols; ++k)
        p.map.values.push_back(std::size_t(k) < strip.size() ? std::clamp(strip[std::size_t(k)], 0.0f, 1.0f) : 0.0f);
    p.queryLabels = queryLabels;
    while (p.queryLabels.size() < map.rows) p.queryLabels << QString::number(p.queryLabels.size());
    p.queryLabels << stripName;
    p.keyLabels = keyLabels;
    f.panels.push_back(p);
    f.title = title;
    return f;
}

namespace {

const QColor kBar(0x4e, 0x79, 0xa7), kSame(0x59, 0xa1, 0x4f), kDiffer(0xe1, 0x57, 0x59);

// "0.25", "1.2e-05": tick labels.
QString tickText(double v) { return QString::number(v, 'g', 3); }

// Round ticks from 0 to at least top (>= 2 of them).
std::vector<double> ticksTo(double top) {
    if (!(top > 0)) top = 1;
    const double raw = top / 4, mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    std::vector<double> out;
    for (double v = 0; out.size() < 2 || out.back() < top - 1e-12 * top; v += step) out.push_back(v);
    return out;
}

double topOf(const EvictionFigure& f) {
    double top = 0;
    for (double v : f.kl) top = std::max(top, std::isfinite(v) ? v : 0.0);
    return ticksTo(top).back();
}

}  // namespace

int EvictionLayout::stepAt(const QPointF& p) const {
    if (steps <= 0 || p.x() < plot.left() || p.x() >= plot.right()) return -1;
    return std::clamp(int((p.x() - plot.left()) / plot.width() * steps), 0, steps - 1);
}

QSizeF evictionFigureSize(const EvictionFigure& f, double width) {
    const double u = f.fontSize;
    return {width, u * (2.0 + 14.0 + 4.5 + 1.4 * f.notes.size()) + u};
}

EvictionLayout evictionLayout(const QPaintDevice* device, const EvictionFigure& f, const QRectF& area) {
    const double u = f.fontSize;
    const QFontMetricsF fm(unitFont(device, u * 0.85));
    double tickW = 0;
    for (double v : ticksTo(topOf(f))) tickW = std::max(tickW, fm.horizontalAdvance(tickText(v)));
    EvictionLayout g;
    g.steps = int(f.kl.size());
    const double left = area.left() + u * 1.6 + tickW + u * 0.5, right = area.right() - u * 0.8;
    const double top = area.top() + u * 2.0;
    const double bottom = area.bottom() - u * (4.5 + 1.4 * f.notes.size());
    g.plot = QRectF(left, top, std::max(1.0, right - left), std::max(1.0, bottom - top));
    return g;
}

void paintEvictionFigure(QPainter& p, const EvictionFigure& f, const QRectF& area) {
    if (f.empty()) return;
    const double u = f.fontSize;
    const EvictionLayout g = evictionLayout(p.device(), f, area);
    const QRectF& plot = g.plot;
    const double top = topOf(f);
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(Qt::black);
    p.setFont(unitFont(p, u, true));
    p.drawText(QRectF(area.left(), area.top(), area.width(), u * 1.6), Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetricsF(p.font()).elidedText(f.title, Qt::ElideRight, area.width()));
    // The y axis: KL in nats, ticks from 0 to the top.
    p.setFont(unitFont(p, u * 0.85));
    const QFontMetricsF fm(p.font());
    for (double v : ticksTo(top)) {
        const double y = plot.bottom() - v / top * plot.height();
        p.setPen(QPen(QColor(0xe0, 0xe0, 0xe0), 0.5));
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(Qt::black);
        p.drawText(QRectF(plot.left() - u * 6.3, y - u, u * 6, u * 2), Qt::AlignRight | Qt::AlignVCenter, tickText(v));
    }
    p.save();
    p.translate(area.left() + u * 0.6, plot.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-plot.height() / 2, -u * 0.6, plot.height(), u * 1.2), Qt::AlignCenter,
               QStringLiteral("KL(full ‖ evicted), nats"));
    p.restore();
    // One bar per step.
    const double slot = plot.width() / g.steps;
    for (int t = 0; t < g.steps; ++t) {
        const double v = std::isfinite(f.kl[std::size_t(t)]) ? std::max(0.0, f.kl[std::size_t(t)]) : 0.0;
        const double h = v / top * plot.height();
        p.fillRect(QRectF(g.x(t) - slot * 0.35, plot.bottom() - h, slot * 0.7, h), kBar);
    }
    p.setPen(QPen(Qt::black, 0.8));
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    p.drawLine(plot.bottomLeft(), plot.topLeft());
    // Under the axis: per step a filled dot (same token) or a cross (different), and the step.
    const double markY = plot.bottom() + u * 1.0, r = std::min(u * 0.4, slot * 0.35);
    const int stride = std::max(1, int(std::ceil(fm.horizontalAdvance(QStringLiteral("000")) / slot)));
    for (int t = 0; t < g.steps; ++t) {
        const bool same = std::size_t(t) < f.same.size() && f.same[std::size_t(t)];
        const QPointF c(g.x(t), markY);
        if (same) {
            p.setPen(Qt::NoPen);
            p.setBrush(kSame);
            p.drawEllipse(c, r, r);
        } else {
            p.setPen(QPen(kDiffer, std::max(0.8, r * 0.45)));
            p.drawLine(c + QPointF(-r, -r), c + QPointF(r, r));
            p.drawLine(c + QPointF(-r, r), c + QPointF(r, -r));
        }
        if (t % stride == 0) {
            p.setPen(Qt::black);
            p.drawText(QRectF(c.x() - slot * stride / 2.0, markY + u * 0.6, slot * stride, u * 1.2), Qt::AlignCenter,
                       QString::number(t));
        }
    }
    p.setBrush(Qt::NoBrush);
    p.setPen(Qt::black);
    p.drawText(QRectF(plot.left(), markY + u * 1.8, plot.width(), u * 1.2), Qt::AlignCenter,
               QStringLiteral("generated step (● same token, × different)"));
    double y = markY + u * 3.3;
    for (const QString& note : f.notes) {
        p.drawText(QRectF(area.left(), y, area.width(), u * 1.3), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(note, Qt::ElideRight, area.width()));
        y += u * 1.4;
    }
    p.restore();
}
