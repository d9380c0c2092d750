#include "figure/overlayfigure.h"

#include "figure/figure.h"
#include "figure/paintedfigure.h"

#include "attnscope/runtime/error.h"

#include <QFontMetricsF>
#include <QLinearGradient>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace {

constexpr double kBarWidthPt = 8.0;

double baseFontPt(double widthIn) { return widthIn <= 3.6 ? 7.0 : widthIn <= 5.5 ? 8.0 : 9.0; }

QFont fontFor(const QString& family, double pt, double dpi) {
    QFont font(family);
    font.setPointSizeF(pt * 72.0 / dpi);
    font.setHintingPreference(QFont::PreferNoHinting);
    return font;
}

QString tickText(double v, double step) {
    const int decimals = std::clamp(int(std::ceil(-std::log10(step) + 1e-9)), 0, 6);
    return QString::number(v, 'f', decimals);
}

struct Layout {
    double width = 0, height = 0, pad = 0, titleH = 0;
    QRectF image, bar;
    double tickW = 0;
};

Layout layoutFor(const OverlayFigure& f) {
    Layout L;
    const double pt = baseFontPt(f.widthIn);
    QFont font(f.fontFamily);
    font.setPointSizeF(pt);
    const QFontMetricsF fm(font);
    L.width = f.widthIn * 72.0;
    L.pad = pt * 0.8;
    const int lines = f.title.isEmpty() ? 0 : int(f.title.count(QLatin1Char('\n'))) + 1;
    L.titleH = lines * fm.height() * 1.15 + (lines ? pt * 0.4 : 0);
    const std::vector<double> ticks = overlayBarTicks(f.picture), up = overlayTicks(f.picture.maxValue);
    const double step = up.size() > 1 ? up[1] : f.picture.maxValue;
    for (double t : ticks) L.tickW = std::max(L.tickW, fm.horizontalAdvance(tickText(t, step)));
    const double right = pt * 0.6 + kBarWidthPt + pt * 0.4 + L.tickW + pt * 0.4 + fm.height();  // bar, ticks, label
    const double imageW = std::max(10.0, L.width - 2 * L.pad - right);
    const QImage& im = f.picture.image;
    const double aspect = im.isNull() || im.width() == 0 ? 1.0 : double(im.height()) / im.width();
    const double imageH = imageW * aspect;
    L.image = QRectF(L.pad, L.pad + L.titleH, imageW, imageH);
    L.bar = QRectF(L.image.right() + pt * 0.6, L.image.top(), kBarWidthPt, imageH);
    L.height = std::ceil(L.image.bottom() + L.pad);
    return L;
}

void checkFigure(const OverlayFigure& f) {
    const OverlayPicture& p = f.picture;
    if (p.image.isNull()) throw attnscope::Error("the image figure has no image");
    if (p.gridRows <= 0 || p.gridCols <= 0 || p.values.size() != std::size_t(p.gridRows) * p.gridCols)
        throw attnscope::Error("the image figure needs one value per patch");
    if (!(p.maxValue > 0) || !std::isfinite(p.maxValue))
        throw attnscope::Error("the image figure's colour range must be > 0");
    if (f.widthIn < kMinFigureWidthIn || f.widthIn > kMaxFigureWidthIn)
        throw attnscope::Error("figure width must be between 1 and 20 inches");
}

// The borders between patches of different windows (a shifted layer's windows wrap around the
// image's edges, so a window may show as pieces at opposite sides), and the marked patch's
// window outlined: every edge between one of its patches and a patch of another window or the
// image's border.
void paintWindows(QPainter& p, const QRectF& target, const OverlayPicture& picture) {
    const int R = picture.gridRows, C = picture.gridCols;
    const double cw = target.width() / C, ch = target.height() / R;
    const auto windowAt = [&](int r, int c) { return picture.windows[std::size_t(r) * C + c]; };
    const auto x = [&](int c) { return target.left() + c * cw; };
    const auto y = [&](int r) { return target.top() + r * ch; };
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(QColor(255, 255, 255, 220), std::max(1.0, std::min(cw, ch) / 10)));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            if (c + 1 < C && windowAt(r, c) != windowAt(r, c + 1))
                p.drawLine(QPointF(x(c + 1), y(r)), QPointF(x(c + 1), y(r + 1)));
            if (r + 1 < R && windowAt(r, c) != windowAt(r + 1, c))
                p.drawLine(QPointF(x(c), y(r + 1)), QPointF(x(c + 1), y(r + 1)));
        }
    if (picture.markedPatch < 0 || picture.markedPatch >= R * C) return;
    const int mine = picture.windows[std::size_t(picture.markedPatch)];
    const auto outside = [&](int r, int c) { return r < 0 || r >= R || c < 0 || c >= C || windowAt(r, c) != mine; };
    p.setPen(QPen(kFigureMarkColor, std::max(1.5, std::min(cw, ch) / 5)));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            if (windowAt(r, c) != mine) continue;
            if (outside(r, c - 1)) p.drawLine(QPointF(x(c), y(r)), QPointF(x(c), y(r + 1)));
            if (outside(r, c + 1)) p.drawLine(QPointF(x(c + 1), y(r)), QPointF(x(c + 1), y(r + 1)));
            if (outside(r - 1, c)) p.drawLine(QPointF(x(c), y(r)), QPointF(x(c + 1), y(r)));
            if (outside(r + 1, c)) p.drawLine(QPointF(x(c), y(r + 1)), QPointF(x(c + 1), y(r + 1)));
        }
}

}  // namespace

Colormap overlayColormap(const OverlayPicture& picture) {
    return picture.diverging ? Colormap::RdBu : picture.colormap;
}

double overlayBarPosition(const OverlayPicture& picture, double value) {
    if (!(picture.maxValue > 0)) return picture.diverging ? 0.5 : 0.0;
    const double x = value / picture.maxValue;
    return picture.diverging ? 0.5 + 0.5 * std::clamp(x, -1.0, 1.0) : std::clamp(x, 0.0, 1.0);
}

std::vector<double> overlayBarTicks(const OverlayPicture& picture) {
    std::vector<double> ticks = overlayTicks(picture.maxValue);
    if (!picture.diverging) return ticks;
    std::vector<double> both;
    for (auto t = ticks.rbegin(); t != ticks.rend(); ++t)
        if (*t > 0) both.push_back(-*t);
    both.insert(both.end(), ticks.begin(), ticks.end());
    return both;
}

QColor overlayColor(const OverlayPicture& picture, double value) {
    return colormapColor(overlayColormap(picture), overlayBarPosition(picture, value));
}

void paintOverlay(QPainter& p, const QRectF& target, const OverlayPicture& picture) {
    p.save();
    p.setRenderHint(QPainter::SmoothPixmapTransform, true);
    if (!picture.image.isNull()) p.drawImage(target, picture.image);
    const int R = picture.gridRows, C = picture.gridCols;
    if (R > 0 && C > 0 && picture.values.size() == std::size_t(R) * C) {
        const double cw = target.width() / C, ch = target.height() / R;
        const double alpha = std::clamp(picture.opacity, 0.0, 1.0);
        if (picture.smooth) {
            QImage cells(C, R, QImage::Format_ARGB32);
            for (int r = 0; r < R; ++r)
                for (int c = 0; c < C; ++c) {
                    QColor col = overlayColor(picture, picture.values[std::size_t(r) * C + c]);
                    col.setAlphaF(float(alpha));
                    cells.setPixelColor(c, r, col);
                }
            // Bilinear between patch centres: the image's pixel centres sit on the patch centres.
            p.drawImage(target, cells.scaled(C * 16, R * 16, Qt::IgnoreAspectRatio, Qt::SmoothTransformation));
        } else {
            p.setPen(Qt::NoPen);
            for (int r = 0; r < R; ++r)
                for (int c = 0; c < C; ++c) {
                    QColor col = overlayColor(picture, picture.values[std::size_t(r) * C + c]);
                    col.setAlphaF(float(alpha));
                    // Cells reach their neighbours' edges exactly (no seams at any scale).
                    const double x0 = target.left() + c * cw, y0 = target.top() + r * ch;
                    p.fillRect(QRectF(x0, y0, target.left() + (c + 1) * cw - x0, target.top() + (r + 1) * ch - y0),
                               col);
                }
        }
        if (picture.grid) {
            p.setPen(QPen(QColor(255, 255, 255, 140), 0));
            for (int c = 1; c < C; ++c)
                p.drawLine(QPointF(target.left() + c * cw, target.top()),
                           QPointF(target.left() + c * cw, target.bottom()));
            for (int r = 1; r < R; ++r)
                p.drawLine(QPointF(target.left(), target.top() + r * ch),
                           QPointF(target.right(), target.top() + r * ch));
        }
        if (picture.windows.size() == std::size_t(R) * C) paintWindows(p, target, picture);
        if (picture.markedPatch >= 0 && picture.markedPatch < R * C) {
            const int r = picture.markedPatch / C, c = picture.markedPatch % C;
            const QRectF cell(target.left() + c * cw, target.top() + r * ch, cw, ch);
            const double w = std::max(1.0, std::min(cw, ch) / 8);
            p.setBrush(Qt::NoBrush);
            p.setPen(QPen(Qt::white, w * 2));
            p.drawRect(cell);
            p.setPen(QPen(kFigureMarkColor, w));
            p.drawRect(cell);
        }
    }
    p.restore();
}

std::vector<double> overlayTicks(double maxValue) {
    if (!(maxValue > 0) || !std::isfinite(maxValue)) return {0.0};
    const double raw = maxValue / 4, mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    std::vector<double> ticks;
    for (int i = 0; i * step <= maxValue * (1 + 1e-9); ++i) ticks.push_back(i * step);
    return ticks;
}

QSizeF overlayFigureSizePoints(const OverlayFigure& figure) {
    checkFigure(figure);
    const Layout L = layoutFor(figure);
    return {L.width, L.height};
}

void paintOverlayFigure(QPainter& p, const OverlayFigure& f) {
    checkFigure(f);
    const Layout L = layoutFor(f);
    const double dpi = p.device()->logicalDpiY();
    const double pt = baseFontPt(f.widthIn);
    p.save();
    p.scale(p.device()->width() / L.width, p.device()->width() / L.width);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setRenderHint(QPainter::TextAntialiasing, true);
    p.fillRect(QRectF(0, 0, L.width, L.height), Qt::white);
    const QFont font = fontFor(f.fontFamily, pt, dpi);
    p.setFont(font);
    p.setPen(Qt::black);
    if (!f.title.isEmpty())
        p.drawText(QRectF(L.pad, L.pad, L.width - 2 * L.pad, L.titleH), Qt::AlignHCenter | Qt::AlignTop, f.title);
    paintOverlay(p, L.image, f.picture);
    // Colour bar: the colour map from 0 (or -maxValue) at the bottom to maxValue at the top, at full opacity.
    QLinearGradient g(L.bar.bottomLeft(), L.bar.topLeft());
    g.setStops(colormapStops(overlayColormap(f.picture)));
    p.fillRect(L.bar, g);
    p.setPen(QPen(Qt::black, 0.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(L.bar);
    const std::vector<double> ticks = overlayBarTicks(f.picture), up = overlayTicks(f.picture.maxValue);
    const double step = up.size() > 1 ? up[1] : f.picture.maxValue;
    const QFontMetricsF fm(QFont(f.fontFamily, int(pt)));
    for (double t : ticks) {
        const double y = L.bar.bottom() - overlayBarPosition(f.picture, t) * L.bar.height();
        p.drawLine(QPointF(L.bar.right(), y), QPointF(L.bar.right() + pt * 0.3, y));
        p.drawText(QRectF(L.bar.right() + pt * 0.4, y - pt, L.tickW + pt, 2 * pt), Qt::AlignLeft | Qt::AlignVCenter,
                   tickText(t, step));
    }
    p.save();
    p.translate(L.bar.right() + pt * 0.8 + L.tickW + fm.height() * 0.5, L.bar.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-L.bar.height(), -fm.height(), 2 * L.bar.height(), 2 * fm.height()), Qt::AlignCenter,
               f.colorbarLabel);
    p.restore();
    p.restore();
}

void writeOverlayFigure(const OverlayFigure& figure, const QString& path, int dpi) {
    try {
        checkFigure(figure);
    } catch (const attnscope::Error& e) {
        throw attnscope::Error(path.toStdString() + ": " + e.what());
    }
    // paintOverlayFigure scales itself to the device's width, so it starts from device pixels.
    writePainted(
            path, overlayFigureSizePoints(figure),
            [&](QPainter& p, const QSizeF&) {
                p.resetTransform();
                paintOverlayFigure(p, figure);
            },
            figure.title.isEmpty() ? QStringLiteral("Attention over the image") : figure.title, dpi);
}
