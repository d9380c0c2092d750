// ImageOverlayView: the input image of an image model with one query's attention over its
// patches drawn on top (OverlayPicture, painted by figure/overlayfigure's paintOverlay, so an
// exported figure shows the same), a colour bar beside it, and a caption. Hovering shows the
// patch grid and the patch under the mouse with its weight (tooltip and hoveredPatch()); a click
// on a patch asks for that patch's row (patchClicked). Display only: the values come from core
// through the window (attnscope::patchOverlay).
#pragma once

#include "figure/overlayfigure.h"

#include <QWidget>

class ImageOverlayView : public QWidget {
    Q_OBJECT
public:
    explicit ImageOverlayView(QWidget* parent = nullptr);

    // What to draw; values are the patches' weights (row-major over the grid).
    void setPicture(const OverlayPicture& picture);
    const OverlayPicture& picture() const { return picture_; }
    // Shown instead of the picture (no image model, an error, waiting for a run).
    void showMessage(const QString& message);
    const QString& message() const { return message_; }
    void setCaption(const QString& caption);
    const QString& caption() const { return caption_; }
    bool hasPicture() const { return message_.isEmpty() && !picture_.image.isNull(); }

    // Where the image is drawn (widget coordinates) and where patch `index` lies in it.
    QRectF imageRect() const;
    QRectF patchRect(int index) const;
    // The patch under pos (r * cols + c), or -1.
    int patchAt(const QPointF& pos) const;
    int hoveredPatch() const { return hovered_; }

    QSize sizeHint() const override { return {520, 480}; }
    QSize minimumSizeHint() const override { return {160, 140}; }

signals:
    void patchClicked(int patch);
    void patchHovered(int patch);  // -1 when the mouse leaves the patches

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF barRect() const;
    int captionHeight() const;
    void setHovered(int patch);

    OverlayPicture picture_;
    QString message_;
    QString caption_;
    int hovered_ = -1;
};
