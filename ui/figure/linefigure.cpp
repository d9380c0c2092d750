// The line view's drawing (linefigure.h).
#include "figure/linefigure.h"

#include "figure/paintedfigure.h"

#include <QFontMetricsF>
#include <QImage>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace {

constexpr double kHeader = 2.6;   // header lines (title, legend, column names) in font heights
constexpr double kMinRow = 1.25;  // row height in font heights at the natural size
constexpr double kGap = 0.6;      // label to line end, in font heights

constexpr double kLegendLine = 1.3;  // a legend line, in font heights

// The legend's entries per line: greedy, each line as full as the width allows.
std::vector<std::vector<int>> legendLines(const QPaintDevice* device, const LineFigure& f, double width,
                                          std::vector<double>* entryWidths = nullptr) {
    const QFontMetricsF m(unitFont(device, f.fontSize * 0.9), device);
    std::vector<std::vector<int>> lines;
    double used = 0;
    for (int i = 0; i < int(f.heads.size()); ++i) {
        const double w =
                m.horizontalAdvance(QStringLiteral("head %1").arg(f.heads[std::size_t(i)].head)) + f.fontSize * 1.9;
        if (entryWidths) entryWidths->push_back(w);
        if (lines.empty() || (used + w > width && !lines.back().empty())) {
            lines.emplace_back();
            used = 0;
        }
        lines.back().push_back(i);
        used += w;
    }
    return lines;
}

// A 72-dpi reference for sizes measured without a painter (1 unit = 1 point).
const QPaintDevice* referenceDevice() {
    static QImage ref = [] {
        QImage img(1, 1, QImage::Format_RGB32);
        img.setDotsPerMeterX(2835);
        img.setDotsPerMeterY(2835);
        return img;
    }();
    return &ref;
}

double headerHeight(const QPaintDevice* device, const LineFigure& f, double width) {
    const int extra = std::max(0, int(legendLines(device, f, width).size()) - 1);
    return f.fontSize * (kHeader + (f.title.isEmpty() ? 0 : 1.4) + extra * kLegendLine);
}

// The widest label of a column, its bold column name included.
double labelWidth(const QPaintDevice* device, const QString& title, const QStringList& labels, double font) {
    const QFontMetricsF m(unitFont(device, font), device);
    double w = QFontMetricsF(unitFont(device, font * 0.95, true), device).horizontalAdvance(title);
    for (const QString& s : labels) w = std::max(w, m.horizontalAdvance(s));
    return w;
}

}  // namespace

std::pair<int, int> LineLayout::tokenAt(const QPointF& p, int queries, int keys) const {
    if (p.y() < top) return {-1, -1};
    if (p.x() <= leftX && p.x() >= area.left()) {
        const int i = int(std::floor((p.y() - top) / queryRow));
        if (i >= 0 && i < queries) return {0, i};
    }
    if (p.x() >= rightX && p.x() <= area.right()) {
        const int j = int(std::floor((p.y() - top) / keyRow));
        if (j >= 0 && j < keys) return {1, j};
    }
    return {-1, -1};
}

QSizeF lineFigureSize(const LineFigure& f, double width) {
    const int rows = std::max(f.queryLabels.size(), f.keyLabels.size());
    return {width,
            std::ceil(headerHeight(referenceDevice(), f, width) + rows * f.fontSize * kMinRow + f.fontSize * 1.5)};
}

std::vector<LegendEntry> lineLegend(const QPaintDevice* device, const LineFigure& f, const QRectF& area) {
    std::vector<double> widths;
    const auto lines = legendLines(device, f, area.width(), &widths);
    std::vector<LegendEntry> out;
    double y = area.top() + f.fontSize * 0.4 + (f.title.isEmpty() ? 0 : f.fontSize * 1.4);
    for (const auto& line : lines) {
        double lineWidth = 0;
        for (int i : line) lineWidth += widths[std::size_t(i)];
        double x = area.center().x() - lineWidth / 2;
        for (int i : line) {
            LegendEntry e;
            e.head = f.heads[std::size_t(i)].head;
            e.swatch = QRectF(x, y + f.fontSize * 0.25, f.fontSize * 0.8, f.fontSize * 0.8);
            e.textAt = QPointF(x + f.fontSize * 1.05, y + f.fontSize * 0.95);
            e.box = QRectF(x, y, widths[std::size_t(i)] - f.fontSize * 0.85, f.fontSize * kLegendLine);
            out.push_back(e);
            x += widths[std::size_t(i)];
        }
        y += f.fontSize * kLegendLine;
    }
    return out;
}

LineLayout lineLayout(const QPaintDevice* device, const LineFigure& f, const QRectF& area) {
    LineLayout L;
    L.area = area;
    L.top = area.top() + headerHeight(device, f, area.width());
    const double body = std::max(1.0, area.bottom() - f.fontSize * 0.5 - L.top);
    const int nq = std::max<int>(1, f.queryLabels.size()), nk = std::max<int>(1, f.keyLabels.size());
    L.queryRow = body / nq;
    L.keyRow = body / nk;
    // Labels shrink with their rows (long inputs), never below 4 units.
    L.fontSize = std::clamp(std::min(L.queryRow, L.keyRow) / 1.2, 4.0, f.fontSize);
    const double qw = labelWidth(device, f.leftTitle, f.queryLabels, L.fontSize),
                 kw = labelWidth(device, f.rightTitle, f.keyLabels, L.fontSize);
    const double gap = L.fontSize * kGap;
    L.leftLabelRight = area.left() + qw + gap;
    L.leftX = L.leftLabelRight + gap;
    L.rightLabelLeft = area.right() - kw - gap;
    L.rightX = L.rightLabelLeft - gap;
    // Lines at least as long as the labels are wide; centre the whole drawing otherwise.
    const double want = std::max(6.0 * f.fontSize, std::min(18.0 * f.fontSize, area.width() * 0.45));
    if (L.rightX - L.leftX > want) {
        const double spare = (L.rightX - L.leftX - want) / 2;
        L.leftLabelRight += spare;
        L.leftX += spare;
        L.rightX -= spare;
        L.rightLabelLeft -= spare;
    }
    return L;
}

void paintLineFigure(QPainter& p, const LineFigure& f, const QRectF& area) {
    p.save();
    p.setClipRect(area);
    p.fillRect(area, Qt::white);
    const LineLayout L = lineLayout(p.device(), f, area);
    const int nq = f.queryLabels.size(), nk = f.keyLabels.size();
    double y = area.top() + f.fontSize * 0.4;
    // Title, then the heads' legend.
    if (!f.title.isEmpty()) {
        p.setFont(unitFont(p, f.fontSize, true));
        p.setPen(Qt::black);
        p.drawText(QRectF(area.left(), y, area.width(), f.fontSize * 1.4), Qt::AlignHCenter | Qt::AlignVCenter,
                   f.title);
        y += f.fontSize * 1.4;
    }
    p.setFont(unitFont(p, f.fontSize * 0.9));
    const std::vector<LegendEntry> legend = lineLegend(p.device(), f, area);
    for (std::size_t i = 0; i < legend.size(); ++i) {
        p.fillRect(legend[i].swatch, f.heads[i].color);
        p.setPen(QColor(0x30, 0x30, 0x30));
        p.drawText(legend[i].textAt, QStringLiteral("head %1").arg(legend[i].head));
    }
    y += f.fontSize * kLegendLine * std::max<int>(1, int(legendLines(p.device(), f, area.width()).size()));
    p.setFont(unitFont(p, L.fontSize * 0.95, true));
    p.setPen(QColor(0x50, 0x50, 0x50));
    p.drawText(QRectF(area.left(), y, L.leftLabelRight - area.left(), f.fontSize * 1.2),
               Qt::AlignRight | Qt::AlignVCenter, f.leftTitle);
    p.drawText(QRectF(L.rightLabelLeft, y, area.right() - L.rightLabelLeft, f.fontSize * 1.2),
               Qt::AlignLeft | Qt::AlignVCenter, f.rightTitle);

    // Lines: a focused query shows only its row, a focused key only its column. Each head's
    // lines are one colour at opacity = weight, drawn head by head so overlaps mix.
    const bool focus = f.focusQuery >= 0 || f.focusKey >= 0;
    const double lineWidth = std::clamp(std::min(L.queryRow, L.keyRow) * 0.12, 0.4, 1.2);
    for (const LineHead& h : f.heads) {
        if (h.map.rows != nq || h.map.cols != nk) continue;
        for (int i = 0; i < nq; ++i) {
            if (f.focusQuery >= 0 && i != f.focusQuery) continue;
            for (int j = 0; j < nk; ++j) {
                if (f.focusKey >= 0 && j != f.focusKey) continue;
                // Raw and signed map sources: the size of the value against the layer's largest.
                const double w = std::abs(h.map.at(i, j)) / f.valueScale;
                if (!(w > 0) || w < f.threshold) continue;
                QColor c = h.color;
                c.setAlphaF(std::clamp(w, 0.0, 1.0));
                p.setPen(QPen(c, focus ? lineWidth * 1.6 : lineWidth, Qt::SolidLine, Qt::RoundCap));
                p.drawLine(QPointF(L.leftX, L.queryY(i)), QPointF(L.rightX, L.keyY(j)));
            }
        }
    }

    // Labels; the focused token gets a tinted box (framed when locked), and with a focused
    // query each key's box carries the weight of the first head (BertViz's shading).
    p.setFont(unitFont(p, L.fontSize));
    const QColor focusTint(0xff, 0xe0, 0x8a);
    auto box = [&](const QRectF& r, bool focused) {
        if (!focused) return;
        p.fillRect(r, focusTint);
        if (f.locked) {
            p.setPen(QPen(QColor(0x80, 0x60, 0x00), 0.8));
            p.drawRect(r);
        }
    };
    for (int i = 0; i < nq; ++i) {
        const QRectF r(area.left(), L.queryY(i) - L.queryRow / 2, L.leftLabelRight - area.left() + L.fontSize * 0.3,
                       L.queryRow);
        box(r.adjusted(0, 0.5, 0, -0.5), i == f.focusQuery);
        p.setPen(f.focusKey >= 0 || (f.focusQuery >= 0 && i != f.focusQuery) ? QColor(0x60, 0x60, 0x60) : Qt::black);
        p.drawText(QRectF(area.left(), r.top(), L.leftLabelRight - area.left(), r.height()),
                   Qt::AlignRight | Qt::AlignVCenter, f.queryLabels[i]);
    }
    for (int j = 0; j < nk; ++j) {
        const QRectF r(L.rightLabelLeft - L.fontSize * 0.3, L.keyY(j) - L.keyRow / 2,
                       area.right() - L.rightLabelLeft + L.fontSize * 0.3, L.keyRow);
        if (f.focusQuery >= 0 && !f.heads.empty() && f.heads[0].map.rows == nq && f.heads[0].map.cols == nk) {
            QColor c = f.heads[0].color;
            c.setAlphaF(std::clamp(std::abs(double(f.heads[0].map.at(f.focusQuery, j))) / f.valueScale, 0.0, 1.0) *
                        0.55);
            p.fillRect(r.adjusted(0, 0.5, 0, -0.5), c);
        }
        box(r.adjusted(0, 0.5, 0, -0.5), j == f.focusKey);
        p.setPen(f.focusQuery >= 0 || (f.focusKey >= 0 && j != f.focusKey) ? QColor(0x30, 0x30, 0x30) : Qt::black);
        p.drawText(QRectF(L.rightLabelLeft, r.top(), area.right() - L.rightLabelLeft, r.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, f.keyLabels[j]);
    }
    p.restore();
}
