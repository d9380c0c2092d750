// Line-plot figures (see curvefigure.h).
#include "figure/curvefigure.h"
#include "figure/paintedfigure.h"

#include "figure/figure.h"

#include "attnscope/runtime/error.h"

#include <QFont>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace {

constexpr double kPad = 4, kTick = 2.5, kTitlePt = 8, kLabelPt = 7, kTickPt = 6;

void checkCurves(const CurveFigure& f) {
    if (f.series.empty()) throw attnscope::Error("curve figure: there is no series to draw");
    for (const auto& s : f.series)
        if (s.x.empty() || s.x.size() != s.y.size() || (!s.spread.empty() && s.spread.size() != s.y.size()))
            throw attnscope::Error("curve figure: series '" + s.name.toStdString() +
                                   "' is empty or its lengths differ");
    if (!(f.widthIn >= kMinFigureWidthIn && f.widthIn <= kMaxFigureWidthIn) || !(f.heightIn >= 1 && f.heightIn <= 20))
        throw attnscope::Error("curve figure: the size must be 1-20 inches a side");
}

// 1, 2 or 5 times a power of ten, so that about `count` ticks span [lo, hi].
std::vector<double> niceTicks(double lo, double hi, int count) {
    const double raw = (hi - lo) / std::max(1, count);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    std::vector<double> t;
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
        t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    return t;
}

// Ticks at whole numbers only (a step of at least 1) for an x that counts or indexes.
std::vector<double> wholeTicks(double lo, double hi, int count) {
    std::vector<double> t = niceTicks(lo, hi, count);
    if (t.size() >= 2 && t[1] - t[0] >= 1) return t;
    t.clear();
    for (double v = std::ceil(lo); v <= hi + 1e-9; v += 1) t.push_back(v);
    return t;
}

QFont fontAt(const QString& family, double pt, double dpi) {
    QFont f(family);
    f.setPointSizeF(pt * 72.0 / dpi);  // the painter is scaled to points: undo the device's dpi
    f.setHintingPreference(QFont::PreferNoHinting);
    return f;
}

// A title or an axis label is never cut: a text wider than its room is set smaller, down to
// 70 % of its size, and only then elided (with "…").
QString fitText(QPainter& p, QFont& font, const QString& text, double width) {
    const double w = QFontMetricsF(font, p.device()).horizontalAdvance(text);
    if (w > width && w > 0) font.setPointSizeF(font.pointSizeF() * std::max(0.7, width / w));
    return QFontMetricsF(font, p.device()).elidedText(text, Qt::ElideRight, width);
}

}  // namespace

QColor seriesColor(int i) {
    static const QColor c[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                               QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                               QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
    return c[((i % 8) + 8) % 8];
}

void paintCurveFigure(QPainter& p, const CurveFigure& f) {
    checkCurves(f);
    const double W = f.widthIn * 72, H = f.heightIn * 72;
    const double dpi = p.device()->logicalDpiY();
    p.save();
    p.scale(p.device()->width() / W, p.device()->width() / W);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.fillRect(QRectF(0, 0, W, H), Qt::white);
    double xlo = f.series[0].x.front(), xhi = xlo, ylo = f.series[0].y.front(), yhi = ylo;
    for (const auto& s : f.series)
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            const double e = s.spread.empty() ? 0 : s.spread[i];
            xlo = std::min(xlo, s.x[i]), xhi = std::max(xhi, s.x[i]);
            ylo = std::min(ylo, s.y[i] - e), yhi = std::max(yhi, s.y[i] + e);
        }
    if (f.fixedY) ylo = f.yMin, yhi = f.yMax;
    if (xhi <= xlo) xhi = xlo + 1;
    if (yhi <= ylo) yhi = ylo + 1;
    const auto yt = niceTicks(ylo, yhi, 5), xt = f.integerX ? wholeTicks(xlo, xhi, 6) : niceTicks(xlo, xhi, 6);
    const QFont tickFont = fontAt(f.fontFamily, kTickPt, dpi);
    QFont labelFont = fontAt(f.fontFamily, kLabelPt, dpi), titleFont = fontAt(f.fontFamily, kTitlePt, dpi);
    auto text = [&](const QFont& font, const QString& s) {
        return QFontMetricsF(font, p.device()).horizontalAdvance(s);
    };  // points (see fontAt)
    const double tickH = kTickPt * 1.25, labelH = kLabelPt * 1.3, titleH = f.title.isEmpty() ? 0 : kTitlePt * 1.5;
    double yTickW = 0;
    for (double v : yt) yTickW = std::max(yTickW, text(tickFont, QString::number(v, 'g', 4)));
    const QRectF plot(kPad + labelH + yTickW + kTick + 2, kPad + titleH + 2, 0, 0);
    QRectF area = plot;
    area.setRight(W - kPad - 2);
    area.setBottom(H - kPad - labelH - tickH - kTick - 1);
    auto X = [&](double v) { return area.left() + (v - xlo) / (xhi - xlo) * area.width(); };
    auto Y = [&](double v) { return area.bottom() - (std::clamp(v, ylo, yhi) - ylo) / (yhi - ylo) * area.height(); };
    // Grid and ticks.
    p.setFont(tickFont);
    for (double v : yt) {
        p.setPen(QPen(QColor(0xe0, 0xe0, 0xe0), 0.4));
        p.drawLine(QPointF(area.left(), Y(v)), QPointF(area.right(), Y(v)));
        p.setPen(QPen(Qt::black, 0.5));
        p.drawLine(QPointF(area.left() - kTick, Y(v)), QPointF(area.left(), Y(v)));
        p.drawText(QRectF(area.left() - kTick - 1 - yTickW - 2, Y(v) - tickH / 2, yTickW + 2, tickH),
                   Qt::AlignRight | Qt::AlignVCenter, QString::number(v, 'g', 4));
    }
    for (double v : xt) {
        p.drawLine(QPointF(X(v), area.bottom()), QPointF(X(v), area.bottom() + kTick));
        p.drawText(QRectF(X(v) - 20, area.bottom() + kTick + 0.5, 40, tickH), Qt::AlignHCenter | Qt::AlignTop,
                   QString::number(v, 'g', 4));
    }
    // Series: band first, then line and points.
    for (const auto& s : f.series) {
        if (!s.spread.empty()) {
            QPainterPath band;
            band.moveTo(X(s.x[0]), Y(s.y[0] + s.spread[0]));
            for (std::size_t i = 1; i < s.x.size(); ++i) band.lineTo(X(s.x[i]), Y(s.y[i] + s.spread[i]));
            for (std::size_t i = s.x.size(); i-- > 0;) band.lineTo(X(s.x[i]), Y(s.y[i] - s.spread[i]));
            band.closeSubpath();
            QColor c = s.color;
            c.setAlphaF(0.18);
            p.fillPath(band, c);
        }
        QPainterPath line;
        line.moveTo(X(s.x[0]), Y(s.y[0]));
        for (std::size_t i = 1; i < s.x.size(); ++i) line.lineTo(X(s.x[i]), Y(s.y[i]));
        p.setPen(QPen(s.color, 1.0));
        p.setBrush(Qt::NoBrush);
        p.drawPath(line);
        p.setBrush(s.color);
        p.setPen(Qt::NoPen);
        if (s.x.size() <= 64)
            for (std::size_t i = 0; i < s.x.size(); ++i) p.drawEllipse(QPointF(X(s.x[i]), Y(s.y[i])), 1.2, 1.2);
    }
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(Qt::black, 0.5));
    p.drawRect(area);
    // Axis labels, title, legend.
    QFont xFont = labelFont, yFont = labelFont;
    const QString xLabel = fitText(p, xFont, f.xLabel, W - 2 * kPad),
                  yLabel = fitText(p, yFont, f.yLabel, area.height());
    p.setFont(xFont);
    p.drawText(QRectF(kPad, H - kPad - labelH, W - 2 * kPad, labelH), Qt::AlignHCenter | Qt::AlignBottom, xLabel);
    p.save();
    p.translate(kPad, area.center().y());
    p.rotate(-90);
    p.setFont(yFont);
    p.drawText(QRectF(-area.height() / 2, 0, area.height(), labelH), Qt::AlignHCenter | Qt::AlignTop, yLabel);
    p.restore();
    if (!f.title.isEmpty()) {
        const QString title = fitText(p, titleFont, f.title, W - 2 * kPad);
        p.setFont(titleFont);
        p.drawText(QRectF(kPad, kPad, W - 2 * kPad, titleH), Qt::AlignHCenter | Qt::AlignTop, title);
    }
    p.setFont(tickFont);
    double ly = area.top() + 3;
    double legendW = 0;
    for (const auto& s : f.series) legendW = std::max(legendW, text(tickFont, s.name));
    for (const auto& s : f.series) {
        if (s.name.isEmpty()) continue;
        const double lx = area.right() - legendW - 16;
        p.setPen(QPen(s.color, 1.2));
        p.drawLine(QPointF(lx, ly + tickH / 2), QPointF(lx + 9, ly + tickH / 2));
        p.setPen(Qt::black);
        p.drawText(QRectF(lx + 11, ly, legendW + 4, tickH), Qt::AlignLeft | Qt::AlignVCenter, s.name);
        ly += tickH;
    }
    p.restore();
}

QImage renderCurveFigure(const CurveFigure& f, int dpi) {
    checkCurves(f);
    QImage image(int(std::lround(f.widthIn * dpi)), int(std::lround(f.heightIn * dpi)), QImage::Format_RGB32);
    const int dpm = int(std::lround(dpi / 0.0254));
    image.setDotsPerMeterX(dpm);
    image.setDotsPerMeterY(dpm);
    image.fill(Qt::white);
    QPainter painter(&image);
    paintCurveFigure(painter, f);
    return image;
}

void writeCurveFigure(const CurveFigure& f, const QString& path, int dpi) {
    checkCurves(f);
    // paintCurveFigure scales itself to the device's width, so it starts from device pixels.
    writePainted(
            path, QSizeF(f.widthIn * 72, f.heightIn * 72),
            [&](QPainter& p, const QSizeF&) {
                p.resetTransform();
                paintCurveFigure(p, f);
            },
            f.title, dpi);
}
