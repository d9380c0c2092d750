#include "figure/routerfigure.h"

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

std::optional<RouterStripFigure> routerStripFigure(const attnscope::Trace& trace, int layer) {
    if (traceRouter(trace).empty()) return std::nullopt;
    RouterStripFigure s;
    s.router = traceRouter(trace);
    for (const std::string& t : trace.displayTokens()) s.tokenLabels << QString::fromStdString(t);
    s.layer = layer;
    s.tokenCount = s.router.tokens;
    return s;
}

QColor routerExpertColor(int expert, int experts, double probability) {
    // Hues spread by the golden angle so that neighbouring experts differ; two lightness bands.
    const double hue = std::fmod(expert * 137.508, 360.0);
    const QColor full = QColor::fromHslF(hue / 360.0, 0.70, expert % 2 == 0 || experts <= 8 ? 0.45 : 0.32);
    const double p = std::clamp(probability, 0.0, 1.0);
    const auto mix = [&](double c) { return 1.0 - p * (1.0 - c); };
    return QColor::fromRgbF(mix(full.redF()), mix(full.greenF()), mix(full.blueF()));
}

void paintRouterCells(QPainter& p, const QRectF& area, const RouterStripFigure& s, double line) {
    const attnscope::RouterTrace& r = s.router;
    if (r.layers <= 0 || s.tokenCount <= 0) return;
    const double w = area.width() / s.tokenCount, h = area.height() / r.layers;
    p.save();
    p.setPen(Qt::NoPen);
    for (int l = 0; l < r.layers; ++l)
        for (int t = 0; t < s.tokenCount; ++t) {
            const int token = s.firstToken + t;
            QColor c = kRouterDenseColor;
            if (r.routed(l)) {
                const int top = r.choice(l, token, 0);
                c = routerExpertColor(top, r.experts, r.probability(l, token, top));
            }
            // Cells overlap by a hair so that no background shows between them when scaled.
            p.fillRect(QRectF(area.left() + t * w, area.top() + l * h, w + 0.02, h + 0.02), c);
        }
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(Qt::black, line));
    p.drawRect(area);
    if (s.layer >= 0 && s.layer < r.layers) {
        p.setPen(QPen(QColor(0xe4, 0x1a, 0x1c), line * 2));
        p.drawRect(QRectF(area.left(), area.top() + s.layer * h, area.width(), h));
    }
    p.restore();
}

QString routerCellText(const RouterStripFigure& s, int layer, int token) {
    const attnscope::RouterTrace& r = s.router;
    const QString label = token < s.tokenLabels.size() ? s.tokenLabels[token] : QString();
    QString text = QStringLiteral("layer %1 · token %2 “%3”").arg(layer).arg(token).arg(label);
    if (!r.routed(layer)) return text + QStringLiteral("\ndense MLP (no router)");
    QStringList chosen;
    for (int k = 0; k < r.topK; ++k) {
        const int e = r.choice(layer, token, k);
        chosen << QStringLiteral("e%1 %2").arg(e).arg(r.probability(layer, token, e), 0, 'f', 3);
    }
    text += QStringLiteral("\nchosen (top %1): %2").arg(r.topK).arg(chosen.join(QStringLiteral(", ")));
    std::vector<int> order(static_cast<std::size_t>(r.experts));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return r.probability(layer, token, a) > r.probability(layer, token, b); });
    const int shown = std::min(r.experts, 16);
    text += QStringLiteral("\nrouter probabilities%1:")
                    .arg(shown < r.experts ? QStringLiteral(" (top 16)") : QString());
    for (int i = 0; i < shown; ++i)
        text += QStringLiteral("\n  e%1  %2").arg(order[i]).arg(r.probability(layer, token, order[i]), 0, 'f', 4);
    return text;
}
