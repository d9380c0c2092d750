// Fonts, palettes and the PDF/SVG/PNG writer of the painted figures (paintedfigure.h).
#include "figure/paintedfigure.h"

#include "figure/figure.h"

#include "attnscope/runtime/error.h"
#include "figure/output_file.h"

#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>

QFont unitFont(const QPainter& painter, double units, bool bold, const QString& family) {
    return unitFont(painter.device(), units, bold, family);
}

QFont unitFont(const QPaintDevice* device, double units, bool bold, const QString& family) {
    QFont font(family);
    font.setPointSizeF(units * 72.0 / device->logicalDpiY());
    font.setBold(bold);
    font.setHintingPreference(QFont::PreferNoHinting);
    return font;
}

QColor headColor(int index) {
    static const QRgb kTableau[10] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                      0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
    return QColor(kTableau[((index % 10) + 10) % 10]);
}

QColor divergingColor(double value) {
    // RdBu's ends and centre; linear in RGB on each side.
    const QColor blue(0x21, 0x66, 0xac), white(0xf7, 0xf7, 0xf7), red(0xb2, 0x18, 0x2b);
    const double t = std::clamp(std::isfinite(value) ? value : 0.0, -1.0, 1.0);
    const QColor& end = t < 0 ? blue : red;
    const double a = std::abs(t);
    auto mix = [a](int from, int to) { return int(std::lround(from + (to - from) * a)); };
    return QColor(mix(white.red(), end.red()), mix(white.green(), end.green()), mix(white.blue(), end.blue()));
}

namespace {

// Paints with the painter scaled so that one unit is one point on every device.
bool paintScaled(QPaintDevice& device, double pixelsPerPoint, const QSizeF& sizePt,
                 const std::function<void(QPainter&, const QSizeF&)>& paint) {
    QPainter painter;
    if (!painter.begin(&device)) return false;
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    painter.scale(pixelsPerPoint, pixelsPerPoint);
    paint(painter, sizePt);
    painter.end();
    return true;
}

}  // namespace

QImage renderPainted(const QSizeF& sizePt, const std::function<void(QPainter&, const QSizeF&)>& paint, int dpi) {
    const double ppp = dpi / 72.0;
    QImage image(std::max(1, int(std::lround(sizePt.width() * ppp))),
                 std::max(1, int(std::lround(sizePt.height() * ppp))), QImage::Format_RGB32);
    const int dpm = int(std::lround(dpi / 0.0254));
    image.setDotsPerMeterX(dpm);
    image.setDotsPerMeterY(dpm);
    image.fill(Qt::white);
    paintScaled(image, ppp, sizePt, paint);
    return image;
}

void writePainted(const QString& path, const PaintedFigure& figure, double widthIn, int dpi) {
    if (!figure) throw attnscope::Error(path.toStdString() + ": the view shows nothing to export");
    writePainted(path, figure.size(widthIn * 72.0), figure.paint, figure.title, dpi);
}

void writePainted(const QString& path, const QSizeF& sizePt, const std::function<void(QPainter&, const QSizeF&)>& paint,
                  const QString& title, int dpi) {
    const std::string name = path.toStdString();
    const auto format = figureFormatFor(path);
    if (!format) throw attnscope::Error(name + ": unknown figure format (use .pdf, .svg or .png)");
    if (dpi < kMinFigureDpi || dpi > kMaxFigureDpi)
        throw attnscope::Error(name + ": dpi must be between " + std::to_string(kMinFigureDpi) + " and " +
                               std::to_string(kMaxFigureDpi) + ", got " + std::to_string(dpi));
    if (!(sizePt.width() > 0 && sizePt.height() > 0))
        throw attnscope::Error(name + ": the view shows nothing to export");
    FigureOutput file(path);  // checks the path first (output rule), writes on commit
    auto run = [&](QPaintDevice& device, double pixelsPerPoint) {
        if (!paintScaled(device, pixelsPerPoint, sizePt, paint))
            throw attnscope::Error(name + ": cannot start the figure");
    };
    if (*format == FigureFormat::Png) {
        const QImage image = renderPainted(sizePt, paint, dpi);
        if (!image.save(&file.device(), "PNG")) throw attnscope::Error(name + ": writing the PNG failed");
    } else if (*format == FigureFormat::Pdf) {
        QPdfWriter pdf(&file.device());
        pdf.setCreator(QStringLiteral("AttnScope"));
        pdf.setTitle(title);
        pdf.setResolution(1200);
        pdf.setPageSize(QPageSize(sizePt, QPageSize::Point, QString(), QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        run(pdf, 1200.0 / 72.0);
    } else {
        constexpr int kUnitsPerPt = 10;  // fractional font sizes survive the SVG's integer units
        QSvgGenerator svg;
        svg.setOutputDevice(&file.device());
        svg.setTitle(title);
        svg.setDescription(QStringLiteral("Figure exported by AttnScope"));
        svg.setResolution(72 * kUnitsPerPt);
        const QSize units(int(std::lround(sizePt.width() * kUnitsPerPt)),
                          int(std::lround(sizePt.height() * kUnitsPerPt)));
        svg.setSize(units);
        svg.setViewBox(QRect(QPoint(0, 0), units));
        run(svg, kUnitsPerPt);
    }
    file.commit();
}
