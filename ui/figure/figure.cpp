#include "figure/figure.h"

#include "figure/labels.h"

#include "attnscope/runtime/error.h"
#include "figure/output_file.h"

#include <QFileInfo>
#include <QFontMetricsF>
#include <QLinearGradient>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>

namespace {

constexpr int kVectorCellLimit = 40000;  // above this, cells are one image
constexpr double kTickLen = 2.0;         // pt
constexpr double kLine = 0.5;            // frame pen, pt

// Text measured in points, on a 72-dpi reference at 10x size (hinting-free enough).
class Measure {
public:
    Measure(const QString& family, double pt) : font_(family) {
        font_.setPointSizeF(pt * 10);
        font_.setHintingPreference(QFont::PreferNoHinting);
    }
    double width(const QString& s) const { return QFontMetricsF(font_, device()).horizontalAdvance(s) / 10; }
    double height() const { return QFontMetricsF(font_, device()).height() / 10; }
    double ascent() const { return QFontMetricsF(font_, device()).ascent() / 10; }
    // Each line elided with "…" to at most width points.
    QString elide(const QString& text, double width) const {
        QStringList lines = text.split(QLatin1Char('\n'));
        for (QString& line : lines) line = QFontMetricsF(font_, device()).elidedText(line, Qt::ElideRight, width * 10);
        return lines.join(QLatin1Char('\n'));
    }

private:
    static QPaintDevice* device() {
        static QImage ref = [] {
            QImage img(1, 1, QImage::Format_RGB32);
            img.setDotsPerMeterX(2835);  // 72 dpi
            img.setDotsPerMeterY(2835);
            return img;
        }();
        return &ref;
    }
    QFont font_;
};

double baseFontPt(double widthIn) { return widthIn <= 3.6 ? 7.0 : widthIn <= 5.5 ? 8.0 : 9.0; }

// Every stride-th label so that labels of extent `need` fit cells of size `cell`.
int strideFor(double cell, double need) { return std::max(1, int(std::ceil(need / std::max(cell, 1e-6)))); }

struct Layout {
    double width = 0, height = 0;
    double base = 7, tickPt = 7, titlePt = 8, panelTitlePt = 7, barLabelPt = 7;
    QString title, barLabel;  // as drawn: shrunk to fit (>= 5 pt), then elided
    std::vector<QString> panelTitles;
    double pad = 2;
    double titleH = 0, panelTitleH = 0;
    double yAxisLabelW = 0, yTickW = 0;
    double panelW = 0, panelGap = 0, mapTop = 0, mapH = 0, cellW = 0, cellH = 0;
    double left = 0;  // x of the first panel
    bool keyVertical = false;
    double xTickH = 0;
    int xStride = 1, yStride = 1;
    double barX = 0, barW = 0, barTickW = 0;
    int rows = 0, cols = 0;
    int columns = 1, gridRows = 1;                         // panels per grid row, grid rows
    double rowStep = 0;                                    // from one grid row's map top to the next
    double stripTop = 0, stripCellH = 0, stripTitleH = 0;  // the router strip's cells (Figure::routerStrip)
    double gridH = 0;                                      // from the first map's top to the last one's bottom
    // Where panel i's map starts.
    double panelX(int i) const { return left + (i % columns) * (panelW + panelGap); }
    double panelY(int i) const { return mapTop + (i / columns) * rowStep; }
};

Layout layoutFor(const Figure& f) {
    Layout L;
    const FigurePanel& first = f.panels.front();
    L.rows = first.map.rows;
    L.cols = first.map.cols;
    const int count = int(f.panels.size());
    L.columns = f.columns > 0 ? std::min(f.columns, count) : count;
    L.gridRows = (count + L.columns - 1) / L.columns;
    const int n = L.columns;  // panels across
    L.width = f.widthIn * 72.0;
    L.base = baseFontPt(f.widthIn);
    L.titlePt = L.base + 1;
    L.pad = L.base * 0.4;
    const Measure base(f.fontFamily, L.base);
    // Text that must fit a length: the largest size up to `largest` (but >= 5 pt), elided beyond.
    const auto fit = [&](const QString& text, double largest, double room, double& pt) {
        double widest = 0;
        for (const QString& line : text.split(QLatin1Char('\n')))
            widest = std::max(widest, Measure(f.fontFamily, largest).width(line));
        pt = widest > room ? std::max(5.0, largest * room / widest * 0.97) : largest;  // a little slack for rounding
        return Measure(f.fontFamily, pt).elide(text, room);
    };
    L.title = fit(f.title, L.titlePt, L.width - 2 * L.pad, L.titlePt);
    L.titleH = f.title.isEmpty() ? 0 : Measure(f.fontFamily, L.titlePt).height() * 1.3;
    L.yAxisLabelW = base.height();
    L.panelGap = n > 1 ? L.base * 1.2 : 0;
    L.barW = std::max(5.0, L.base * 0.9);
    ColorScale scale = f.scale;
    for (double v : scale.ticks()) L.barTickW = std::max(L.barTickW, base.width(tickLabel(scale, v)));
    const double right = L.pad + base.height() + L.pad * 0.5 + L.barTickW + kTickLen + L.barW + L.base;

    // Tick labels: as large as the base font, but no larger than a cell allows (>= 5 pt).
    L.tickPt = L.base;
    for (int pass = 0; pass < 2; ++pass) {
        const Measure tick(f.fontFamily, L.tickPt);
        L.yTickW = 0;
        for (int q = 0; q < L.rows; ++q) L.yTickW = std::max(L.yTickW, tick.width(tickText(first.queryLabels, q)));
        L.left = L.pad + L.yAxisLabelW + L.pad * 0.5 + L.yTickW + kTickLen;
        L.panelW = (L.width - L.left - right - (n - 1) * L.panelGap) / n;
        L.cellW = L.panelW / std::max(1, L.cols);
        L.cellH = L.cellW;
        const double maxMapH = (n > 1 ? 0.9 : 1.25) * L.width / L.gridRows;
        if (L.cellH * L.rows > maxMapH) L.cellH = maxMapH / L.rows;
        L.tickPt = std::clamp(std::min(L.cellW, L.cellH) / 1.15, 5.0, L.base);
    }
    const Measure tick(f.fontFamily, L.tickPt);
    double widest = 0;
    for (const auto& p : f.panels)
        for (int k = 0; k < p.map.cols; ++k) widest = std::max(widest, tick.width(tickText(p.keyLabels, k)));
    L.keyVertical = widest + 1.0 > L.cellW;
    L.xStride = strideFor(L.cellW, L.keyVertical ? tick.height() : widest + 1.0);
    L.yStride = strideFor(L.cellH, tick.height() * 0.95);
    L.xTickH = kTickLen + (L.keyVertical ? widest : tick.height()) + 1.0;
    L.mapH = L.cellH * L.rows;
    int titleLines = 0;
    L.panelTitlePt = L.base;
    for (const auto& p : f.panels) {
        double pt = L.base;
        fit(p.title, L.base, L.panelW + L.panelGap * 0.8, pt);
        L.panelTitlePt = std::min(L.panelTitlePt, pt);  // one size for all panels
        if (!p.title.isEmpty()) titleLines = std::max(titleLines, int(p.title.count(QLatin1Char('\n'))) + 1);
    }
    for (const auto& p : f.panels)
        L.panelTitles.push_back(Measure(f.fontFamily, L.panelTitlePt).elide(p.title, L.panelW + L.panelGap * 0.8));
    L.panelTitleH = titleLines * Measure(f.fontFamily, L.panelTitlePt).height() * 1.1 + (titleLines ? L.pad * 0.5 : 0);
    // Grid rows: each row's panel titles sit in the gap above its maps.
    L.rowStep = L.mapH + L.pad + L.panelTitleH;
    L.gridH = L.mapH + (L.gridRows - 1) * L.rowStep;
    L.barLabel = fit(f.colorbarLabel + (f.scale.type == ColorScaleType::Log ? QStringLiteral(" (log)") : QString()),
                     L.base, L.gridH * 0.98, L.barLabelPt);
    L.mapTop = L.pad + L.titleH + L.panelTitleH;
    if (f.keysOnTop) L.mapTop += base.height() * 1.2 + L.xTickH;  // axis name, then the key ticks
    L.barX = L.left + n * L.panelW + (n - 1) * L.panelGap + L.base;
    L.height = std::ceil(L.mapTop + L.gridH + (f.keysOnTop ? 0 : L.xTickH + base.height() * 1.2) + L.pad);
    if (f.routerStrip) {  // a title line, a row of cells per layer, a legend line
        L.stripTitleH = base.height() * 1.3;
        L.stripCellH = std::clamp(L.cellW * 0.6, 1.2, L.base * 0.9);
        L.stripTop = L.height + L.stripTitleH;
        L.height = std::ceil(L.stripTop + f.routerStrip->router.layers * L.stripCellH + base.height() * 1.6 + L.pad);
    }
    return L;
}

QRectF mapArea(const Layout& L, const FigurePanel& panel, int i) {
    return {L.panelX(i), L.panelY(i), L.cellW * panel.map.cols, L.cellH * panel.map.rows};
}

// A font of `pt` points for a painter scaled to points on a device of `dpi` pixels per inch.
QFont fontFor(const QString& family, double pt, double dpi) {
    QFont font(family);
    font.setPointSizeF(pt * 72.0 / dpi);
    font.setHintingPreference(QFont::PreferNoHinting);
    return font;
}

// Cells as rectangles, each overlapping its right and lower neighbour slightly (drawn later on
// top), so viewers show no hairline seams; clipped to the map.
void drawCells(QPainter& p, const FigurePanel& panel, const QRectF& area, const Figure& f) {
    const attnscope::HeadMap& m = panel.map;
    const double cw = area.width() / m.cols, ch = area.height() / m.rows;
    p.save();
    p.setClipRect(area);
    p.setPen(Qt::NoPen);
    if (m.rows * m.cols <= kVectorCellLimit) {
        const double overlap = std::min(cw, ch) * 0.05;
        for (int q = 0; q < m.rows; ++q)
            for (int k = 0; k < m.cols; ++k) {
                p.setBrush(colormapColor(f.colormap, f.scale.position(m.at(q, k))));
                p.drawRect(QRectF(area.left() + k * cw, area.top() + q * ch, cw + overlap, ch + overlap));
            }
    } else {
        const QImage img = mapImage(m, f.colormap, f.scale);  // one pixel per cell
        // Magnify without smoothing so that viewers that smooth images still show crisp cells.
        const int factor = std::max(1, 2048 / std::max(m.rows, m.cols));
        p.setRenderHint(QPainter::SmoothPixmapTransform, false);
        p.drawImage(area, img.scaled(m.cols * factor, m.rows * factor, Qt::IgnoreAspectRatio, Qt::FastTransformation));
    }
    p.restore();
}

// A dot with a white ring in each marked cell, so it reads on every colour of every colormap.
void drawMarks(QPainter& p, const FigurePanel& panel, const QRectF& area) {
    const double cw = area.width() / panel.map.cols, ch = area.height() / panel.map.rows;
    const double r = std::min(cw, ch) * 0.22;
    p.save();
    p.setPen(QPen(Qt::white, r * 0.45));
    p.setBrush(kFigureMarkColor);
    for (int q = 0; q < panel.map.rows && q < int(panel.rowMarks.size()); ++q) {
        const int k = panel.rowMarks[std::size_t(q)];
        if (k < 0 || k >= panel.map.cols) continue;
        p.drawEllipse(QPointF(area.left() + (k + 0.5) * cw, area.top() + (q + 0.5) * ch), r, r);
    }
    p.restore();
}

// Text rotated by -90° (reading upwards) with its right end at (x, y) centred horizontally on x.
void drawVerticalRightAligned(QPainter& p, double x, double y, double lineH, const QString& text, double w) {
    p.save();
    p.translate(x, y);
    p.rotate(-90);
    p.drawText(QRectF(0, -lineH / 2, w, lineH), Qt::AlignLeft | Qt::AlignVCenter, text);
    p.restore();
}

// The router strip under the first map (routerfigure.h): title, cells with the first and last
// layer named on the left, and a legend of the experts' colours when there are at most 16.
void paintRouterStrip(QPainter& p, const Figure& f, const Layout& L, double dpi) {
    const RouterStripFigure& s = *f.routerStrip;
    const Measure base(f.fontFamily, L.base), tick(f.fontFamily, L.tickPt);
    const QRectF cells(L.panelX(0), L.stripTop, L.cellW * f.panels.front().map.cols, s.router.layers * L.stripCellH);
    p.setPen(Qt::black);
    p.setFont(fontFor(f.fontFamily, L.base, dpi));
    const QString title = QStringLiteral("router: top expert per layer and token (lighter: less probable)");
    p.drawText(QRectF(L.pad, L.stripTop - L.stripTitleH, L.width - 2 * L.pad, L.stripTitleH),
               Qt::AlignLeft | Qt::AlignVCenter, base.elide(title, L.width - 2 * L.pad));
    paintRouterCells(p, cells, s, kLine);
    p.setPen(Qt::black);
    p.setFont(fontFor(f.fontFamily, L.tickPt, dpi));
    const double labelW = cells.left() - L.pad;
    const auto layerLabel = [&](int l, bool top) {
        const double y = top ? cells.top() : cells.bottom() - tick.height();
        p.drawText(QRectF(L.pad, y, labelW - kTickLen, tick.height()), Qt::AlignRight | Qt::AlignVCenter,
                   QStringLiteral("layer %1").arg(l));
    };
    layerLabel(0, true);
    if (s.router.layers > 1) layerLabel(s.router.layers - 1, false);
    double x = cells.left();
    const double y = cells.bottom() + base.height() * 0.3, sw = tick.height() * 0.8;
    bool dense = false;
    for (int l = 0; l < s.router.layers; ++l) dense = dense || !s.router.routed(l);
    if (s.router.experts <= 16) {
        for (int e = 0; e < s.router.experts; ++e) {
            p.fillRect(QRectF(x, y + (tick.height() - sw) / 2, sw, sw), routerExpertColor(e, s.router.experts));
            const QString name = QStringLiteral("e%1").arg(e);
            p.drawText(QRectF(x + sw * 1.2, y, tick.width(name) + 1, tick.height()), Qt::AlignLeft | Qt::AlignVCenter,
                       name);
            x += sw * 1.2 + tick.width(name) + tick.height() * 0.6;
        }
    } else {
        const QString n = QStringLiteral("%1 experts").arg(s.router.experts);
        p.drawText(QRectF(x, y, tick.width(n) + 1, tick.height()), Qt::AlignLeft | Qt::AlignVCenter, n);
        x += tick.width(n) + tick.height() * 0.6;
    }
    if (dense) {
        p.fillRect(QRectF(x, y + (tick.height() - sw) / 2, sw, sw), kRouterDenseColor);
        p.drawText(QRectF(x + sw * 1.2, y, tick.width(QStringLiteral("dense")) + 1, tick.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("dense"));
    }
}

void paintLayout(QPainter& p, const Figure& f, const Layout& L, double dpi) {
    const QColor ink(Qt::black);
    const QFont baseFont = fontFor(f.fontFamily, L.base, dpi);
    const QFont tickFont = fontFor(f.fontFamily, L.tickPt, dpi);
    const Measure base(f.fontFamily, L.base), tick(f.fontFamily, L.tickPt);
    p.setPen(ink);

    if (!L.title.isEmpty()) {
        p.setFont(fontFor(f.fontFamily, L.titlePt, dpi));
        p.drawText(QRectF(0, L.pad, L.width, L.titleH), Qt::AlignHCenter | Qt::AlignTop, L.title);
    }
    const int count = int(f.panels.size());
    const int n = L.columns;
    const QPen frame(ink, kLine);
    for (int i = 0; i < count; ++i) {
        const FigurePanel& panel = f.panels[std::size_t(i)];
        const double x0 = L.panelX(i);
        const QRectF area = mapArea(L, panel, i);
        if (!panel.title.isEmpty()) {
            p.setFont(fontFor(f.fontFamily, L.panelTitlePt, dpi));
            p.setPen(ink);
            p.drawText(QRectF(x0 - L.panelGap / 2, L.pad + L.titleH + (i / n) * L.rowStep, L.panelW + L.panelGap,
                              L.panelTitleH),
                       Qt::AlignHCenter | Qt::AlignTop, L.panelTitles[std::size_t(i)]);
        }
        drawCells(p, panel, area, f);
        drawMarks(p, panel, area);
        p.setPen(frame);
        p.setBrush(Qt::NoBrush);
        p.drawRect(area);

        // Key ticks below the map (or above it), on the lowest panel of each column only; query
        // ticks left of each row's first panel.
        p.setFont(tickFont);
        const bool keyTicks = i + n >= count;
        for (int k = 0; keyTicks && k < panel.map.cols; k += L.xStride) {
            const double x = area.left() + (k + 0.5) * L.cellW;
            const QString text = tickText(panel.keyLabels, k);
            p.setPen(frame);
            if (f.keysOnTop) {
                p.drawLine(QPointF(x, area.top() - kTickLen), QPointF(x, area.top()));
                p.setPen(ink);
                if (L.keyVertical)  // reads upwards from just above the tick
                    drawVerticalRightAligned(p, x, area.top() - kTickLen - 1.0, tick.height(), text,
                                             tick.width(text) + 1);
                else
                    p.drawText(QRectF(x - L.cellW * L.xStride, area.top() - kTickLen - tick.height(),
                                      2 * L.cellW * L.xStride, tick.height()),
                               Qt::AlignHCenter | Qt::AlignBottom, text);
                continue;
            }
            p.drawLine(QPointF(x, area.bottom()), QPointF(x, area.bottom() + kTickLen));
            p.setPen(ink);
            if (L.keyVertical)
                drawVerticalRightAligned(p, x, area.bottom() + kTickLen + 1.0 + tick.width(text), tick.height(), text,
                                         tick.width(text) + 1);
            else
                p.drawText(QRectF(x - L.cellW * L.xStride, area.bottom() + kTickLen, 2 * L.cellW * L.xStride,
                                  tick.height()),
                           Qt::AlignHCenter | Qt::AlignTop, text);
        }
        if (i % n == 0) {
            for (int q = 0; q < panel.map.rows; q += L.yStride) {
                const double y = area.top() + (q + 0.5) * L.cellH;
                p.setPen(frame);
                p.drawLine(QPointF(area.left() - kTickLen, y), QPointF(area.left(), y));
                p.setPen(ink);
                p.drawText(
                        QRectF(area.left() - kTickLen - L.yTickW - 1, y - tick.height() / 2, L.yTickW, tick.height()),
                        Qt::AlignRight | Qt::AlignVCenter, tickText(panel.queryLabels, q));
            }
        }
    }

    // Axis names.
    p.setFont(baseFont);
    p.setPen(ink);
    const double panelsRight = L.left + n * L.panelW + (n - 1) * L.panelGap;
    const double keyAxisY = f.keysOnTop ? L.mapTop - L.xTickH - base.height() * 1.2 : L.mapTop + L.gridH + L.xTickH;
    p.drawText(QRectF(L.left, keyAxisY, panelsRight - L.left, base.height() * 1.2), Qt::AlignHCenter | Qt::AlignVCenter,
               f.keyAxis);
    p.save();
    p.translate(L.pad, L.mapTop + L.gridH / 2);
    p.rotate(-90);
    p.drawText(QRectF(-L.gridH / 2, 0, L.gridH, base.height()), Qt::AlignHCenter | Qt::AlignTop, f.queryAxis);
    p.restore();

    // Colour bar: the colormap as a vertical linear gradient, ticks and labels on its right.
    const QRectF bar(L.barX, L.mapTop, L.barW, L.gridH);
    QLinearGradient gradient(bar.bottomLeft(), bar.topLeft());
    gradient.setStops(colormapStops(f.colormap));
    p.setPen(Qt::NoPen);
    p.setBrush(gradient);
    p.drawRect(bar);
    p.setPen(frame);
    p.setBrush(Qt::NoBrush);
    p.drawRect(bar);
    p.setFont(baseFont);
    for (double v : f.scale.ticks()) {
        const double y = bar.bottom() - f.scale.position(v) * bar.height();
        p.setPen(frame);
        p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + kTickLen, y));
        p.setPen(ink);
        p.drawText(QRectF(bar.right() + kTickLen + 1, y - base.height() / 2, L.barTickW + 1, base.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, tickLabel(f.scale, v));
    }
    p.save();
    p.translate(bar.right() + kTickLen + 1 + L.barTickW + L.pad * 0.5, bar.center().y());
    p.rotate(90);
    p.setFont(fontFor(f.fontFamily, L.barLabelPt, dpi));
    p.drawText(QRectF(-bar.height() / 2, -base.height(), bar.height(), base.height()),
               Qt::AlignHCenter | Qt::AlignBottom, L.barLabel);
    p.restore();
    if (f.routerStrip) paintRouterStrip(p, f, L, dpi);
}

void checkFigure(const Figure& f) {
    if (f.panels.empty()) throw attnscope::Error("figure: there is no attention map to draw");
    for (const auto& p : f.panels)
        if (p.map.rows <= 0 || p.map.cols <= 0 || p.map.values.size() != std::size_t(p.map.rows) * p.map.cols)
            throw attnscope::Error("figure: an attention map is empty or malformed");
    if (!(f.widthIn >= kMinFigureWidthIn && f.widthIn <= kMaxFigureWidthIn))
        throw attnscope::Error("figure width must be between " + std::to_string(int(kMinFigureWidthIn)) + " and " +
                               std::to_string(int(kMaxFigureWidthIn)) + " inches, got " + std::to_string(f.widthIn));
}

// Each figure on a page of its own size, text as text with the fonts embedded.
void writePdf(QIODevice& device, const std::vector<Figure>& pages, const std::string& name) {
    QPdfWriter pdf(&device);
    pdf.setCreator(QStringLiteral("AttnScope"));
    pdf.setTitle(pages.front().title.isEmpty() ? QStringLiteral("Attention map") : pages.front().title);
    pdf.setResolution(1200);
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    const auto pageSize = [](const Figure& f) {
        return QPageSize(figureSizePoints(f), QPageSize::Point, QString(), QPageSize::ExactMatch);
    };
    pdf.setPageSize(pageSize(pages.front()));
    QPainter painter;
    if (!painter.begin(&pdf)) throw attnscope::Error(name + ": cannot start the PDF");
    for (std::size_t i = 0; i < pages.size(); ++i) {
        if (i > 0) {
            pdf.setPageSize(pageSize(pages[i]));  // takes effect on the new page
            pdf.newPage();
        }
        paintFigure(painter, pages[i]);
    }
    painter.end();
}

}  // namespace

void writeFigurePages(const std::vector<Figure>& pages, const QString& path) {
    const std::string name = path.toStdString();
    if (figureFormatFor(path) != FigureFormat::Pdf)
        throw attnscope::Error(name + ": several pages need a PDF (use .pdf)");
    if (pages.empty()) throw attnscope::Error(name + ": there is no figure to write");
    for (const Figure& f : pages) checkFigure(f);
    FigureOutput file(path);  // checks the path first (output rule), writes on commit
    writePdf(file.device(), pages, name);
    file.commit();
}

std::optional<FigureFormat> figureFormatFor(const QString& path) {
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("pdf")) return FigureFormat::Pdf;
    if (ext == QLatin1String("svg")) return FigureFormat::Svg;
    if (ext == QLatin1String("png")) return FigureFormat::Png;
    return std::nullopt;
}

QSizeF figureSizePoints(const Figure& figure) {
    checkFigure(figure);
    const Layout L = layoutFor(figure);
    return {L.width, L.height};
}

void paintFigure(QPainter& painter, const Figure& figure) {
    checkFigure(figure);
    const Layout L = layoutFor(figure);
    const double dpi = painter.device()->logicalDpiY();
    painter.save();
    painter.scale(painter.device()->width() / L.width, painter.device()->width() / L.width);
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    // A font of X points is X·dpi/72 logical pixels before the scale: fontFor() divides it out.
    paintLayout(painter, figure, L, dpi);
    painter.restore();
}

QImage renderFigure(const Figure& figure, int dpi) {
    checkFigure(figure);
    if (dpi < kMinFigureDpi || dpi > kMaxFigureDpi)
        throw attnscope::Error("figure dpi must be between " + std::to_string(kMinFigureDpi) + " and " +
                               std::to_string(kMaxFigureDpi) + ", got " + std::to_string(dpi));
    const QSizeF pt = figureSizePoints(figure);
    const int w = int(std::lround(figure.widthIn * dpi));
    const int h = int(std::lround(pt.height() * dpi / 72.0));
    QImage image(w, h, QImage::Format_RGB32);
    const int dpm = int(std::lround(dpi / 0.0254));
    image.setDotsPerMeterX(dpm);
    image.setDotsPerMeterY(dpm);
    image.fill(Qt::white);
    QPainter painter(&image);
    paintFigure(painter, figure);
    painter.end();
    return image;
}

void writeFigure(const Figure& figure, const QString& path, int dpi) {
    const std::string name = path.toStdString();
    const auto format = figureFormatFor(path);
    if (!format) throw attnscope::Error(name + ": unknown figure format (use .pdf, .svg or .png)");
    checkFigure(figure);
    if (dpi < kMinFigureDpi || dpi > kMaxFigureDpi)  // checked for every format: a bad request is refused
        throw attnscope::Error(name + ": dpi must be between " + std::to_string(kMinFigureDpi) + " and " +
                               std::to_string(kMaxFigureDpi) + ", got " + std::to_string(dpi));
    FigureOutput file(path);  // checks the path first (output rule), writes on commit
    const QSizeF pt = figureSizePoints(figure);
    const QString title = figure.title.isEmpty() ? QStringLiteral("Attention map") : figure.title;
    if (*format == FigureFormat::Png) {
        const QImage image = renderFigure(figure, dpi);
        if (!image.save(&file.device(), "PNG")) throw attnscope::Error(name + ": writing the PNG failed");
    } else if (*format == FigureFormat::Pdf) {
        writePdf(file.device(), {figure}, name);
    } else {
        constexpr int kSvgUnitsPerPt = 10;  // fractional font sizes survive the SVG's units
        QSvgGenerator svg;
        svg.setOutputDevice(&file.device());
        svg.setTitle(title);
        svg.setDescription(QStringLiteral("Attention map exported by AttnScope"));
        svg.setResolution(72 * kSvgUnitsPerPt);
        const QSize units(int(std::lround(pt.width() * kSvgUnitsPerPt)),
                          int(std::lround(pt.height() * kSvgUnitsPerPt)));
        svg.setSize(units);
        svg.setViewBox(QRect(QPoint(0, 0), units));
        QPainter painter;
        if (!painter.begin(&svg)) throw attnscope::Error(name + ": cannot start the SVG");
        paintFigure(painter, figure);
        painter.end();
    }
    file.commit();
}

QString mapTitle(const QString& model, const QString& block, int layer, int head, double temperature) {
    QStringList parts;
    if (!model.isEmpty()) parts << model;
    if (!block.isEmpty()) parts << block;
    parts << QStringLiteral("layer %1").arg(layer);
    if (head >= 0) parts << QStringLiteral("head %1").arg(head);  // head -1: a layer's map (map sources)
    if (std::abs(temperature - 1.0) > 1e-9) parts << QStringLiteral("T = %1").arg(temperature, 0, 'g', 3);
    return parts.join(QStringLiteral(" \u00b7 "));
}

QRectF figureMapRect(const Figure& figure, int panel) {
    if (panel < 0 || panel >= int(figure.panels.size())) return {};
    return mapArea(layoutFor(figure), figure.panels[std::size_t(panel)], panel);
}
