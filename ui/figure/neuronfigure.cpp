// The neuron view's drawing (neuronfigure.h).
#include "figure/neuronfigure.h"

#include "figure/paintedfigure.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace {

bool hasExtra(const attnscope::NeuronRow& r) { return !r.extras.empty(); }

// Title, the info line, the column heads, the query strip, a gap: in font heights.
double headerHeight(const NeuronFigure& f) {
    return f.fontSize * ((f.title.isEmpty() ? 0 : 1.5) + 0.3 + 1.4 + 1.3 + 1.1 + 0.5);
}

double maxAbs(const std::vector<float>& v) {
    double m = 0;
    for (float x : v) m = std::max(m, double(std::abs(x)));
    return m > 0 ? m : 1.0;
}

// Cells of a [rows, cols] matrix as rectangles (they are few: keys × head_dim), each a little
// wider than its slot so no seams show; a masked row is drawn pale.
void drawMatrix(QPainter& p, const QRectF& r, const float* v, int rows, int cols, double scale,
                const std::vector<bool>* allowed) {
    const double cw = r.width() / cols, ch = r.height() / rows;
    for (int i = 0; i < rows; ++i) {
        const bool pale = allowed && !(*allowed)[i];
        for (int d = 0; d < cols; ++d) {
            QColor c = divergingColor(v[std::size_t(i) * cols + d] / scale);
            if (pale) c = QColor::fromRgbF(0.55 + 0.45 * c.redF(), 0.55 + 0.45 * c.greenF(), 0.55 + 0.45 * c.blueF());
            p.fillRect(QRectF(r.left() + d * cw, r.top() + i * ch, cw + 0.05, ch + 0.05), c);
        }
    }
    p.setPen(QPen(QColor(0x90, 0x90, 0x90), 0.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r);
}

// Draws the first of `texts` that fits the rectangle's width at font size `size`; when none
// does, the last one at a font shrunk to fit (down to 60 %), elided beyond that. Narrow views
// (the Views dock of a 1280-pixel window) get short labels instead of overlapping long ones.
void drawFitted(QPainter& p, const QRectF& r, int flags, const QStringList& texts, double size, bool bold) {
    QFont font = unitFont(p, size, bold);
    for (const QString& t : texts) {
        if (QFontMetricsF(font, p.device()).horizontalAdvance(t) <= r.width()) {
            p.setFont(font);
            p.drawText(r, flags, t);
            return;
        }
    }
    const QString& last = texts.back();
    const double w = QFontMetricsF(font, p.device()).horizontalAdvance(last);
    font = unitFont(p, std::max(size * 0.6, size * r.width() / std::max(1.0, w)), bold);
    p.setFont(font);
    p.drawText(r, flags, QFontMetricsF(font, p.device()).elidedText(last, Qt::ElideRight, r.width()));
}

}  // namespace

QString neuronNumber(double value) {
    QString s = QString::number(value, 'f', std::abs(value) >= 100 ? 1 : 3);
    if (s.startsWith(QLatin1Char('-'))) s.replace(0, 1, QChar(0x2212));
    return s;
}

int NeuronLayout::keyAt(const QPointF& p, int keys) const {
    if (p.y() < top) return -1;
    const int j = int(std::floor((p.y() - top) / rowHeight));
    return j >= 0 && j < keys ? j : -1;
}

QSizeF neuronFigureSize(const NeuronFigure& f, double width) {
    return {width, std::ceil(headerHeight(f) + std::max(1, f.row.keys) * f.fontSize * 1.3 + f.fontSize * 2.2)};
}

NeuronLayout neuronLayout(const QPaintDevice* device, const NeuronFigure& f, const QRectF& area) {
    NeuronLayout L;
    const int m = std::max(1, f.row.keys);
    L.top = area.top() + headerHeight(f);
    L.rowHeight = std::max(1.0, (area.bottom() - f.fontSize * 2.2 - L.top) / m);
    L.fontSize = std::clamp(L.rowHeight / 1.25, 4.0, f.fontSize);
    const QFontMetricsF fm(unitFont(device, L.fontSize), device);
    double labelW = fm.horizontalAdvance(QStringLiteral("key"));
    for (const QString& s : f.keyLabels) labelW = std::max(labelW, fm.horizontalAdvance(s));
    labelW = std::min(labelW, area.width() * 0.2);
    L.labelRight = area.left() + labelW;
    const double num = fm.horizontalAdvance(QStringLiteral("\u2212000.000")) + L.fontSize * 0.6;
    const int columns = hasExtra(f.row) ? 3 : 2;
    L.barW = std::min(area.width() * 0.12, 8 * L.fontSize);
    const double numbers = columns * num + L.barW + L.fontSize;
    const double gap = L.fontSize * 0.8;
    const double maps = std::max(10.0, area.right() - numbers - L.labelRight - 3 * gap);
    const double mapW = maps / 2;
    const double h = L.rowHeight * m;
    L.keys = QRectF(L.labelRight + gap, L.top, mapW, h);
    L.products = QRectF(L.keys.right() + gap, L.top, mapW, h);
    L.qStrip = QRectF(L.products.left(), L.top - f.fontSize * 1.6, mapW, f.fontSize * 1.1);
    L.scaledX = L.products.right() + gap + num;
    L.extraX = hasExtra(f.row) ? L.scaledX + num : L.scaledX;
    L.weightX = L.extraX + num;
    L.barX = L.weightX + L.fontSize * 0.5;
    return L;
}

void paintNeuronFigure(QPainter& p, const NeuronFigure& f, const QRectF& area) {
    const attnscope::NeuronRow& r = f.row;
    p.save();
    p.setClipRect(area);
    p.fillRect(area, Qt::white);
    if (r.keys == 0 || r.dim == 0) {
        p.restore();
        return;
    }
    const NeuronLayout L = neuronLayout(p.device(), f, area);
    const double fs = f.fontSize;
    double y = area.top() + fs * 0.3;
    if (!f.title.isEmpty()) {
        p.setFont(unitFont(p, fs, true));
        p.setPen(Qt::black);
        p.drawText(QRectF(area.left(), y, area.width(), fs * 1.4), Qt::AlignHCenter | Qt::AlignVCenter, f.title);
        y += fs * 1.5;
    }
    p.setPen(QColor(0x30, 0x30, 0x30));
    QString scale = QStringLiteral("scale %1").arg(r.scale, 0, 'g', 4);
    if (std::abs(r.scale * std::sqrt(double(r.dim)) - 1) < 1e-9) scale = QStringLiteral("scale 1/\u221a%1").arg(r.dim);
    QString info = QStringLiteral("query %1 (position %2) \u00b7 d = %3 \u00b7 %4")
                           .arg(f.queryLabel)
                           .arg(r.query)
                           .arg(r.dim)
                           .arg(scale);
    QString brief = QStringLiteral("q %1 (%2) \u00b7 d = %3").arg(f.queryLabel).arg(r.query).arg(r.dim);
    if (!r.extras.empty()) info += QStringLiteral(" \u00b7 logits add %1").arg(QString::fromStdString(r.extras));
    if (std::abs(r.temperature - 1) > 1e-9) {
        info += QStringLiteral(" \u00b7 T = %1").arg(r.temperature, 0, 'g', 3);
        brief += QStringLiteral(" \u00b7 T = %1").arg(r.temperature, 0, 'g', 3);
    }
    drawFitted(p, QRectF(area.left(), y, area.width(), fs * 1.3), Qt::AlignHCenter | Qt::AlignVCenter, {info, brief},
               fs * 0.9, false);

    // Column heads and the query strip (above the products: q⊙k_j is q times the key row).
    const double vecScale = std::max(maxAbs(r.queryVector), maxAbs(r.keyVectors));
    const double prodScale = maxAbs(r.products);
    p.setPen(Qt::black);
    const double headY = L.qStrip.top() - fs * 0.05;  // the number columns' heads sit level with the strip
    const double gap = L.products.left() - L.keys.right();
    drawFitted(p, QRectF(L.keys.left(), L.qStrip.top() - fs * 1.3, L.keys.width() + gap * 0.5, fs * 1.2),
               Qt::AlignLeft | Qt::AlignVCenter,
               {QStringLiteral("key vectors k"), QStringLiteral("keys k"), QStringLiteral("k")}, fs * 0.9, true);
    drawFitted(p, QRectF(L.products.left(), L.qStrip.top() - fs * 1.3, L.products.width(), fs * 1.2),
               Qt::AlignLeft | Qt::AlignVCenter,
               {QStringLiteral("query q, then q \u2299 k per key"), QStringLiteral("q, then q \u2299 k"),
                QStringLiteral("q \u2299 k")},
               fs * 0.9, true);
    drawMatrix(p, L.qStrip, r.queryVector.data(), 1, r.dim, vecScale, nullptr);
    const double numW = L.weightX - L.extraX;
    drawFitted(p, QRectF(L.scaledX - numW, headY, numW, fs * 1.2), Qt::AlignRight | Qt::AlignVCenter,
               {QStringLiteral("scale\u00b7q\u00b7k"), QStringLiteral("s\u00b7q\u00b7k")}, fs * 0.85, true);
    if (!r.extras.empty())
        drawFitted(p, QRectF(L.extraX - numW, headY, numW, fs * 1.2), Qt::AlignRight | Qt::AlignVCenter,
                   {QStringLiteral("logit")}, fs * 0.85, true);
    drawFitted(p, QRectF(L.weightX - numW, headY, numW, fs * 1.2), Qt::AlignRight | Qt::AlignVCenter,
               {QStringLiteral("weight"), QStringLiteral("w")}, fs * 0.85, true);

    drawMatrix(p, L.keys, r.keyVectors.data(), r.keys, r.dim, vecScale, &r.allowed);
    drawMatrix(p, L.products, r.products.data(), r.keys, r.dim, prodScale, &r.allowed);

    // Per key: label, numbers, weight bar.
    p.setFont(unitFont(p, L.fontSize));
    for (int j = 0; j < r.keys; ++j) {
        const QRectF row(area.left(), L.top + j * L.rowHeight, area.width(), L.rowHeight);
        if (j == f.focusKey) {
            p.fillRect(QRectF(area.left(), row.top(), L.keys.left() - area.left() - 1, row.height()),
                       QColor(0xff, 0xe0, 0x8a));
            p.fillRect(QRectF(L.products.right() + 1, row.top(), L.barX + L.barW - L.products.right(), row.height()),
                       QColor(0xff, 0xe0, 0x8a));
            p.setPen(QPen(Qt::black, 0.8));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(L.keys.left(), row.top(), L.products.right() - L.keys.left(), row.height()));
        }
        const bool allowed = r.allowed[j];
        p.setPen(allowed ? Qt::black : QColor(0x99, 0x99, 0x99));
        p.drawText(QRectF(area.left(), row.top(), L.labelRight - area.left(), row.height()),
                   Qt::AlignRight | Qt::AlignVCenter, j < f.keyLabels.size() ? f.keyLabels[j] : QString::number(j));
        p.drawText(QRectF(L.scaledX - numW, row.top(), numW, row.height()), Qt::AlignRight | Qt::AlignVCenter,
                   neuronNumber(r.scaled[j]));
        if (!r.extras.empty())
            p.drawText(QRectF(L.extraX - numW, row.top(), numW, row.height()), Qt::AlignRight | Qt::AlignVCenter,
                       neuronNumber(r.logits[j]));
        p.drawText(QRectF(L.weightX - numW, row.top(), numW, row.height()), Qt::AlignRight | Qt::AlignVCenter,
                   allowed ? QString::number(r.weights[j], 'f', 3) : QStringLiteral("masked"));
        if (allowed)
            p.fillRect(QRectF(L.barX, row.top() + row.height() * 0.18, L.barW * std::clamp(r.weights[j], 0.0, 1.0),
                              row.height() * 0.64),
                       QColor(0x4e, 0x79, 0xa7));
    }

    // Colour keys under the maps: the value each end stands for.
    p.setFont(unitFont(p, fs * 0.8));
    p.setPen(QColor(0x40, 0x40, 0x40));
    const double ky = L.keys.bottom() + fs * 0.5;
    auto legend = [&](const QRectF& map, double s, const QString& what) {
        const QRectF bar(map.left(), ky, std::min(map.width(), fs * 10), fs * 0.6);
        QLinearGradient g(bar.topLeft(), bar.topRight());
        for (int i = 0; i <= 8; ++i) g.setColorAt(i / 8.0, divergingColor(-1 + i / 4.0));
        p.fillRect(bar, g);
        p.drawText(QPointF(bar.right() + fs * 0.4, bar.bottom()),
                   QStringLiteral("%1: \u00b1%2").arg(what, QString::number(s, 'g', 3)));
    };
    legend(L.keys, vecScale, QStringLiteral("q, k"));
    legend(L.products, prodScale, QStringLiteral("q\u2299k"));
    p.restore();
}
