#include "views/imageoverlay.h"

#include <QHelpEvent>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace {
constexpr int kMargin = 8;
constexpr int kBarWidth = 14;
constexpr int kBarLabels = 56;  // room for the tick labels right of the bar
}  // namespace

ImageOverlayView::ImageOverlayView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    message_ = tr("Open an image model (a ViT folder) and an image to see attention over the image.");
}

void ImageOverlayView::setPicture(const OverlayPicture& picture) {
    picture_ = picture;
    message_.clear();
    update();
}

void ImageOverlayView::showMessage(const QString& message) {
    message_ = message;
    hovered_ = -1;
    update();
}

void ImageOverlayView::setCaption(const QString& caption) {
    caption_ = caption;
    update();
}

// The caption's height: its lines wrapped to the view's width, two to four of them.
int ImageOverlayView::captionHeight() const {
    const QFontMetrics fm(font());
    const int wrapped = fm.boundingRect(QRect(0, 0, std::max(1, width() - 2 * kMargin), 10000),
                                        Qt::AlignLeft | Qt::TextWordWrap, caption_)
                                .height();
    return std::clamp(wrapped, fm.height() * 2, fm.height() * 4) + 2;
}

// The image as large as fits left of the colour bar and below the caption, at its own aspect.
QRectF ImageOverlayView::imageRect() const {
    const int caption = captionHeight();
    const QRectF area(kMargin, kMargin + caption + 2, width() - 3 * kMargin - kBarWidth - kBarLabels,
                      height() - 2 * kMargin - caption - 2);
    if (area.width() <= 0 || area.height() <= 0 || picture_.image.isNull()) return {};
    const double aspect = double(picture_.image.height()) / std::max(1, picture_.image.width());
    double w = area.width(), h = w * aspect;
    if (h > area.height()) h = area.height(), w = h / aspect;
    return {area.left() + (area.width() - w) / 2, area.top(), w, h};
}

QRectF ImageOverlayView::barRect() const {
    const QRectF im = imageRect();
    return {im.right() + kMargin, im.top(), double(kBarWidth), im.height()};
}

QRectF ImageOverlayView::patchRect(int index) const {
    const QRectF im = imageRect();
    const int R = picture_.gridRows, C = picture_.gridCols;
    if (im.isEmpty() || R <= 0 || C <= 0 || index < 0 || index >= R * C) return {};
    const double cw = im.width() / C, ch = im.height() / R;
    return {im.left() + (index % C) * cw, im.top() + (index / C) * ch, cw, ch};
}

int ImageOverlayView::patchAt(const QPointF& pos) const {
    if (!hasPicture()) return -1;
    const QRectF im = imageRect();
    const int R = picture_.gridRows, C = picture_.gridCols;
    if (im.isEmpty() || R <= 0 || C <= 0 || !im.contains(pos)) return -1;
    const int c = std::clamp(int((pos.x() - im.left()) / im.width() * C), 0, C - 1);
    const int r = std::clamp(int((pos.y() - im.top()) / im.height() * R), 0, R - 1);
    return r * C + c;
}

void ImageOverlayView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QPalette pal = palette();
    p.fillRect(rect(), pal.base());
    const QFontMetrics fm(font());
    p.setPen(pal.color(QPalette::Text));
    if (!hasPicture()) {
        p.drawText(rect().adjusted(kMargin, kMargin, -kMargin, -kMargin), Qt::AlignCenter | Qt::TextWordWrap, message_);
        return;
    }
    p.drawText(QRect(kMargin, kMargin, width() - 2 * kMargin, captionHeight()),
               Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, caption_);
    const QRectF im = imageRect();
    if (im.isEmpty()) return;
    OverlayPicture shown = picture_;
    shown.grid = picture_.grid || hovered_ >= 0;  // the patch grid on hover
    paintOverlay(p, im, shown);
    if (hovered_ >= 0) {
        p.setPen(QPen(pal.color(QPalette::Highlight), 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(patchRect(hovered_));
    }
    // Colour bar, 0 (-maxValue when diverging) at the bottom to the picture's maxValue at the top.
    const QRectF bar = barRect();
    QLinearGradient g(bar.bottomLeft(), bar.topLeft());
    g.setStops(colormapStops(overlayColormap(picture_)));
    p.fillRect(bar, g);
    p.setPen(pal.color(QPalette::Text));
    p.drawRect(bar);
    const std::vector<double> ticks = overlayBarTicks(picture_), up = overlayTicks(picture_.maxValue);
    const double step = up.size() > 1 ? up[1] : picture_.maxValue;
    const int decimals = std::clamp(int(std::ceil(-std::log10(step) + 1e-9)), 0, 6);
    for (double t : ticks) {
        const double y = bar.bottom() - overlayBarPosition(picture_, t) * bar.height();
        p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 4, y));
        p.drawText(QRectF(bar.right() + 6, y - fm.height() / 2.0, kBarLabels, fm.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, QString::number(t, 'f', decimals));
    }
}

void ImageOverlayView::setHovered(int patch) {
    if (patch == hovered_) return;
    hovered_ = patch;
    emit patchHovered(patch);
    update();
}

void ImageOverlayView::mouseMoveEvent(QMouseEvent* event) { setHovered(patchAt(event->position())); }

void ImageOverlayView::leaveEvent(QEvent*) { setHovered(-1); }

void ImageOverlayView::mousePressEvent(QMouseEvent* event) {
    const int patch = patchAt(event->position());
    if (patch >= 0 && event->button() == Qt::LeftButton) {
        emit patchClicked(patch);
        return;
    }
    QWidget::mousePressEvent(event);
}

bool ImageOverlayView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int patch = patchAt(help->pos());
        if (patch < 0 || std::size_t(patch) >= picture_.values.size()) {
            QToolTip::hideText();
        } else {
            const int C = picture_.gridCols;
            QToolTip::showText(help->globalPos(),
                               tr("patch r%1c%2 · weight %3 · click to show its row")
                                       .arg(patch / C)
                                       .arg(patch % C)
                                       .arg(picture_.values[std::size_t(patch)], 0, 'g', 4),
                               this);
        }
        return true;
    }
    return QWidget::event(event);
}
