// HeatmapView, continued: what the mouse and the keys do (hover, wheel zoom, drag pan, rubber
// band, +/-/0 keys) and setZoom, which every one of them ends in (see heatmapview.h).
#include "views/heatmapview.h"

#include <qcustomplot.h>

#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QRubberBand>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

void HeatmapView::onMouseMove(QMouseEvent* event) {
    if (banding_) band_->setGeometry(QRect(dragStart_.toPoint(), event->position().toPoint()).normalized());
    if (dragging_ && (event->buttons() & Qt::LeftButton)) {
        // Data units per pixel at the zoom the drag started from; the y axis is reversed.
        const QRect rect = plot_->axisRect()->rect();
        const QPointF d = event->position() - dragStart_;
        setZoom(dragZoom_.panned(-d.x() / dragZoom_.cellWidth(rect.width()),
                                 -d.y() / dragZoom_.cellHeight(rect.height())));
    }
    const auto cell = cellGeometry().cellAt(event->position());
    if (!cell) {
        hoverLabel_->clear();
        QToolTip::hideText();
        return;
    }
    const QString text = describeCell(*cell);
    hoverLabel_->setText(text);
    QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
    if (!valuesPending()) emit cellHovered(cell->query, cell->key, map_.at(cell->query, cell->key));
}

void HeatmapView::setZoom(const MapZoom& zoom) {
    if (map_.rows <= 0 || map_.cols <= 0) return;
    MapZoom z = zoom;  // the asked range, clamped into this map
    z.rows = map_.rows;
    z.cols = map_.cols;
    z = z.panned(0, 0);
    if (z == zoom_) return;
    zoom_ = z;
    plot_->xAxis->setRange(zoom_.keyLower, zoom_.keyUpper);
    plot_->yAxis->setRange(zoom_.queryLower, zoom_.queryUpper);
    fitPlot();
    plot_->replot(QCustomPlot::rpQueuedReplot);
    askLevelOfDetail();
    emit zoomChanged(zoom_);
}

QPointF HeatmapView::dataAt(const QPointF& pixel) const {
    return {plot_->xAxis->pixelToCoord(pixel.x()), plot_->yAxis->pixelToCoord(pixel.y())};
}

void HeatmapView::onWheel(QWheelEvent* event) {
    if (map_.rows <= 0) return;
    const QPointF at = dataAt(event->position());
    setZoom(zoom_.zoomedAt(at.x(), at.y(), std::pow(1.25, event->angleDelta().y() / 120.0)));
    event->accept();
}

void HeatmapView::onMousePress(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || map_.rows <= 0) return;
    dragStart_ = event->position();
    dragZoom_ = zoom_;
    banding_ = event->modifiers() & Qt::ShiftModifier;
    dragging_ = !banding_;
    if (banding_) band_->setGeometry(QRect(dragStart_.toPoint(), QSize()));
    if (banding_) band_->show();
}

void HeatmapView::onMouseRelease(QMouseEvent* event) {
    if (banding_) {
        band_->hide();
        const QPointF a = dataAt(dragStart_), b = dataAt(event->position());
        if ((event->position() - dragStart_).manhattanLength() > 4) setZoom(zoom_.toRect(a.x(), a.y(), b.x(), b.y()));
    }
    banding_ = dragging_ = false;
}

void HeatmapView::keyPressEvent(QKeyEvent* event) {
    const double key = (zoom_.keyLower + zoom_.keyUpper) / 2, query = (zoom_.queryLower + zoom_.queryUpper) / 2;
    switch (event->key()) {
        case Qt::Key_Plus:
        case Qt::Key_Equal: setZoom(zoom_.zoomedAt(key, query, 2.0)); break;
        case Qt::Key_Minus: setZoom(zoom_.zoomedAt(key, query, 0.5)); break;
        case Qt::Key_0:
        case Qt::Key_Home: resetZoom(); break;
        default: QWidget::keyPressEvent(event); return;
    }
    event->accept();
}
