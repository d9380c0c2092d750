// The Causal tab's painted figures (causalfigure.h): a grid with row labels on the left, column
// labels (vertical) under it and a colour bar on the right; the signed map adds notes and bars.
#include "figure/causalfigure.h"

#include "figure/paintedfigure.h"

#include <QFontMetricsF>
#include <QImage>
#include <QLinearGradient>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace {

constexpr double kMaxColLabelEm = 7;  // column labels longer than this are elided

// A device at 72 dpi, where one unit is one point: sizes for a width are measured on it.
const QPaintDevice* pointDevice() {
    static const QImage image = [] {
        QImage i(1, 1, QImage::Format_RGB32);
        i.setDotsPerMeterX(2835);  // 72 dpi
        i.setDotsPerMeterY(2835);
        return i;
    }();
    return &image;
}

double widest(const QFontMetricsF& fm, const QStringList& labels) {
    double w = 0;
    for (const QString& s : labels) w = std::max(w, fm.horizontalAdvance(s));
    return w;
}

// The margins around a grid's cells, in units.
struct Margins {
    double left = 0, top = 0, right = 0, bottom = 0;  // bottom: column labels and the axis name
    double colLabel = 0;                              // the column labels' height
};

Margins gridMargins(const QPaintDevice* device, double f, const QString& title, const QStringList& rowLabels,
                    const QStringList& colLabels) {
    const QFontMetricsF fm(unitFont(device, f * 0.85));
    Margins m;
    m.top = title.isEmpty() ? f * 0.4 : f * 1.8;
    m.left = f * 1.5 + widest(fm, rowLabels) + f * 0.4;
    m.colLabel = std::min(widest(fm, colLabels), f * kMaxColLabelEm) + f * 0.4;
    m.bottom = m.colLabel + f * 1.5;
    m.right = f * 0.6 + f * 0.9 + fm.horizontalAdvance(QStringLiteral("−0.000")) + f * 0.5;  // colour bar
    return m;
}

void drawTitle(QPainter& p, const QRectF& area, double f, const QString& title) {
    if (title.isEmpty()) return;
    p.setFont(unitFont(p, f, true));
    p.setPen(Qt::black);
    p.drawText(QRectF(area.left(), area.top(), area.width(), f * 1.6), Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetricsF(p.font()).elidedText(title, Qt::ElideRight, area.width()));
}

// Row labels left of the cells, column labels under them (vertical), the two axis names.
void drawAxes(QPainter& p, const CausalGridLayout& g, const Margins& m, const QStringList& rowLabels,
              const QStringList& colLabels, const QString& rowAxis, const QString& colAxis) {
    const double f = g.fontSize;
    p.setFont(unitFont(p, f * 0.85));
    p.setPen(Qt::black);
    const QFontMetricsF fm(p.font());
    for (int r = 0; r < g.rows && r < rowLabels.size(); ++r) {
        const QRectF cell = g.cellRect(r, 0);
        p.drawText(QRectF(g.cells.left() - m.left + f * 1.5, cell.top(), m.left - f * 1.9, cell.height()),
                   Qt::AlignRight | Qt::AlignVCenter, rowLabels[r]);
    }
    for (int c = 0; c < g.cols && c < colLabels.size(); ++c) {
        const QRectF cell = g.cellRect(0, c);
        p.save();
        p.translate(cell.center().x(), g.cells.bottom() + f * 0.3);
        p.rotate(-90);
        const QString text = fm.elidedText(colLabels[c], Qt::ElideRight, f * kMaxColLabelEm);
        p.drawText(QRectF(-m.colLabel, -cell.width() / 2, m.colLabel, cell.width()), Qt::AlignRight | Qt::AlignVCenter,
                   text);
        p.restore();
    }
    p.setFont(unitFont(p, f * 0.9));
    p.drawText(QRectF(g.cells.left(), g.cells.bottom() + m.colLabel, g.cells.width(), f * 1.4), Qt::AlignCenter,
               colAxis);
    p.save();
    p.translate(g.cells.left() - m.left, g.cells.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-g.cells.height() / 2, 0, g.cells.height(), f * 1.3), Qt::AlignCenter, rowAxis);
    p.restore();
}

// A vertical colour bar right of the cells: `color(t)` for t from 0 (bottom) to 1 (top), ticks
// labelled with `label(t)`.
template <typename Color, typename Label>
void drawColorBar(QPainter& p, const CausalGridLayout& g, Color color, Label label) {
    const double f = g.fontSize;
    const QRectF bar(g.cells.right() + f * 0.6, g.cells.top(), f * 0.9, g.cells.height());
    QLinearGradient gradient(bar.bottomLeft(), bar.topLeft());
    for (int i = 0; i <= 16; ++i) gradient.setColorAt(i / 16.0, color(i / 16.0));
    p.fillRect(bar, gradient);
    p.setPen(QPen(Qt::black, 0.5));
    p.drawRect(bar);
    p.setFont(unitFont(p, f * 0.8));
    for (double t : {0.0, 0.5, 1.0}) {
        const double y = bar.bottom() - t * bar.height();
        p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + f * 0.25, y));
        p.drawText(QRectF(bar.right() + f * 0.35, y - f, f * 4, f * 2), Qt::AlignLeft | Qt::AlignVCenter, label(t));
    }
}

CausalGridLayout layoutIn(const QRectF& area, const Margins& m, int rows, int cols, double f, double extraBottom) {
    CausalGridLayout g;
    g.rows = rows;
    g.cols = cols;
    g.fontSize = f;
    g.cells = QRectF(area.left() + m.left, area.top() + m.top, std::max(1.0, area.width() - m.left - m.right),
                     std::max(1.0, area.height() - m.top - m.bottom - extraBottom));
    return g;
}

QColor readableOn(const QColor& fill) { return fill.lightnessF() > 0.55 ? Qt::black : Qt::white; }

void drawFocus(QPainter& p, const CausalGridLayout& g, int row, int col) {
    if (row < 0 || col < 0 || row >= g.rows || col >= g.cols) return;
    p.setPen(QPen(QColor(0xe4, 0x1a, 0x1c), std::max(1.0, g.fontSize * 0.15)));
    p.setBrush(Qt::NoBrush);
    p.drawRect(g.cellRect(row, col));
}

// The signed map's parts under its column labels: the notes, then the bars with their labels.
struct SignedExtras {
    double notes = 0, barsTitle = 0, bars = 0, barLabels = 0;
    double total() const { return notes + barsTitle + bars + barLabels; }
};

SignedExtras signedExtras(const QPaintDevice* device, const SignedMapFigure& s) {
    const double f = s.fontSize;
    SignedExtras e;
    e.notes = s.notes.size() * f * 1.35 + (s.notes.isEmpty() ? 0 : f * 0.3);
    if (!s.bars.empty()) {
        QStringList labels;
        for (const auto& b : s.bars) labels << b.first;
        e.barsTitle = f * 1.6;
        e.bars = f * 4.5;
        e.barLabels = std::min(widest(QFontMetricsF(unitFont(device, f * 0.75)), labels), f * 6) + f * 0.4;
    }
    return e;
}

void drawBars(QPainter& p, const SignedMapFigure& s, const CausalGridLayout& g, double top, const SignedExtras& e) {
    const double f = s.fontSize, end = s.scaleEnd();
    p.setPen(Qt::black);
    p.setFont(unitFont(p, f * 0.9));
    p.drawText(QRectF(g.cells.left(), top, g.cells.width(), e.barsTitle), Qt::AlignLeft | Qt::AlignVCenter,
               s.barsTitle);
    const QRectF box(g.cells.left(), top + e.barsTitle, g.cells.width(), e.bars);
    const double zero = box.center().y(), step = box.width() / double(s.bars.size());
    p.setFont(unitFont(p, f * 0.75));
    const QFontMetricsF fm(p.font());
    for (std::size_t i = 0; i < s.bars.size(); ++i) {
        const double v = s.bars[i].second, h = std::clamp(v / end, -1.0, 1.0) * box.height() / 2;
        const QRectF bar(box.left() + step * (double(i) + 0.15), h >= 0 ? zero - h : zero, step * 0.7, std::abs(h));
        p.fillRect(bar, divergingColor(v / end));
        p.setPen(QPen(Qt::black, 0.4));
        p.drawRect(bar);
        p.save();
        p.translate(box.left() + step * (double(i) + 0.5), box.bottom() + f * 0.2);
        p.rotate(-90);
        p.drawText(QRectF(-e.barLabels, -step / 2, e.barLabels, step), Qt::AlignRight | Qt::AlignVCenter,
                   fm.elidedText(s.bars[i].first, Qt::ElideRight, f * 6));
        p.restore();
    }
    p.setPen(QPen(Qt::black, 0.6));
    p.drawLine(QPointF(box.left(), zero), QPointF(box.right(), zero));
    p.setPen(QPen(QColor(0x80, 0x80, 0x80), 0.4));
    p.drawRect(box);
}

}  // namespace

std::pair<int, int> CausalGridLayout::cellAt(const QPointF& p) const {
    if (rows <= 0 || cols <= 0 || !cells.contains(p)) return {-1, -1};
    const int r = std::clamp(int((p.y() - cells.top()) / cells.height() * rows), 0, rows - 1);
    const int c = std::clamp(int((p.x() - cells.left()) / cells.width() * cols), 0, cols - 1);
    return {r, c};
}

QRectF CausalGridLayout::cellRect(int row, int col) const {
    const double w = cells.width() / std::max(1, cols), h = cells.height() / std::max(1, rows);
    return {cells.left() + col * w, cells.top() + row * h, w, h};
}

QString causalNumber(double value) {
    if (!std::isfinite(value)) return QStringLiteral("–");
    const double a = std::abs(value);
    QString s = a != 0 && (a < 1e-3 || a >= 1e4) ? QString::number(value, 'e', 1)
                : a >= 100                       ? QString::number(value, 'f', 1)
                                                 : QString::number(value, 'f', 3);
    if (s.startsWith(QLatin1Char('-'))) s.replace(0, 1, QChar(0x2212));
    return s;
}

QSizeF lensFigureSize(const LensFigure& l, double width) {
    const double f = l.fontSize;
    const Margins m = gridMargins(pointDevice(), f, l.title, l.rowLabels, l.colLabels);
    return {width, std::ceil(m.top + std::max(1, l.rows) * f * 1.8 + m.bottom)};
}

CausalGridLayout lensLayout(const QPaintDevice* device, const LensFigure& l, const QRectF& area) {
    return layoutIn(area, gridMargins(device, l.fontSize, l.title, l.rowLabels, l.colLabels), l.rows, l.cols,
                    l.fontSize, 0);
}

void paintLensFigure(QPainter& p, const LensFigure& l, const QRectF& area) {
    if (l.empty()) return;
    const double f = l.fontSize;
    const Margins m = gridMargins(p.device(), f, l.title, l.rowLabels, l.colLabels);
    const CausalGridLayout g = lensLayout(p.device(), l, area);
    drawTitle(p, area, f, l.title);
    QFont cellFont = unitFont(p, std::min(f * 0.85, g.cellRect(0, 0).height() * 0.55));
    p.setFont(cellFont);
    const QFontMetricsF fm(cellFont);
    for (int r = 0; r < l.rows; ++r)
        for (int c = 0; c < l.cols; ++c) {
            const QRectF cell = g.cellRect(r, c);
            const QColor fill = colormapColor(l.colormap, l.prob(r, c));
            p.fillRect(cell, fill);
            p.setPen(readableOn(fill));
            p.drawText(cell.adjusted(1, 0, -1, 0), Qt::AlignCenter,
                       fm.elidedText(l.text(r, c), Qt::ElideRight, cell.width() - 2));
        }
    p.setPen(QPen(Qt::white, 0.5));
    for (int c = 1; c < l.cols; ++c) {
        const double x = g.cellRect(0, c).left();
        p.drawLine(QPointF(x, g.cells.top()), QPointF(x, g.cells.bottom()));
    }
    drawAxes(p, g, m, l.rowLabels, l.colLabels, QStringLiteral("residual into layer"), QStringLiteral("position"));
    drawColorBar(
            p, g, [&](double t) { return colormapColor(l.colormap, t); },
            [](double t) { return QString::number(t, 'g', 2); });
    drawFocus(p, g, l.focusRow, l.focusCol);
}

double SignedMapFigure::scaleEnd() const {
    double end = 0;
    for (double v : values)
        if (std::isfinite(v)) end = std::max(end, std::abs(v));
    for (const auto& b : bars)
        if (std::isfinite(b.second)) end = std::max(end, std::abs(b.second));
    return end > 0 ? end : 1.0;
}

QSizeF signedMapFigureSize(const SignedMapFigure& s, double width) {
    const double f = s.fontSize;
    const Margins m = gridMargins(pointDevice(), f, s.title, s.rowLabels, s.colLabels);
    const double cellW = (width - m.left - m.right) / std::max(1, s.cols);
    const double cellH = std::clamp(cellW, f * 1.2, f * 2.4);
    return {width, std::ceil(m.top + std::max(1, s.rows) * cellH + m.bottom + signedExtras(pointDevice(), s).total())};
}

CausalGridLayout signedMapLayout(const QPaintDevice* device, const SignedMapFigure& s, const QRectF& area) {
    return layoutIn(area, gridMargins(device, s.fontSize, s.title, s.rowLabels, s.colLabels), s.rows, s.cols,
                    s.fontSize, signedExtras(device, s).total());
}

void paintSignedMapFigure(QPainter& p, const SignedMapFigure& s, const QRectF& area) {
    if (s.empty()) return;
    const double f = s.fontSize, end = s.scaleEnd();
    const Margins m = gridMargins(p.device(), f, s.title, s.rowLabels, s.colLabels);
    const CausalGridLayout g = signedMapLayout(p.device(), s, area);
    drawTitle(p, area, f, s.title);
    const QRectF first = g.cellRect(0, 0);
    const bool numbers = first.width() > f * 2.6 && first.height() > f * 1.1;
    p.setFont(unitFont(p, f * 0.7));
    for (int r = 0; r < s.rows; ++r)
        for (int c = 0; c < s.cols; ++c) {
            const QRectF cell = g.cellRect(r, c);
            const QColor fill = divergingColor(s.at(r, c) / end);
            p.fillRect(cell, fill);
            if (!numbers) continue;
            p.setPen(readableOn(fill));
            p.drawText(cell, Qt::AlignCenter, causalNumber(s.at(r, c)));
        }
    drawAxes(p, g, m, s.rowLabels, s.colLabels, s.rowAxis, s.colAxis);
    drawColorBar(
            p, g, [&](double t) { return divergingColor(2 * t - 1); },
            [&](double t) { return causalNumber((2 * t - 1) * end); });
    drawFocus(p, g, s.focusRow, s.focusCol);
    const SignedExtras e = signedExtras(p.device(), s);
    double y = g.cells.bottom() + m.bottom;
    p.setPen(Qt::black);
    p.setFont(unitFont(p, f * 0.9));
    for (const QString& note : s.notes) {
        p.drawText(QRectF(area.left(), y, area.width(), f * 1.35), Qt::AlignLeft | Qt::AlignVCenter,
                   QFontMetricsF(p.font()).elidedText(note, Qt::ElideRight, area.width()));
        y += f * 1.35;
    }
    if (!s.bars.empty()) drawBars(p, s, g, y + (s.notes.isEmpty() ? 0 : f * 0.3), e);
}
