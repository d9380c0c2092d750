#include "views/routerstripview.h"

#include "attnscope/attention/trace.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace {
constexpr int kRouterLabelW = 58, kRouterTitleH = 18, kRouterLegendH = 18, kRouterMargin = 6;
}

RouterStripView::RouterStripView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setVisible(false);
}

void RouterStripView::setTrace(const std::shared_ptr<const attnscope::Trace>& trace, int layer) {
    strip_ = trace ? routerStripFigure(*trace, layer) : std::nullopt;
    hover_.clear();
    setVisible(strip_.has_value());
    updateGeometry();
    update();
}

void RouterStripView::setLayer(int layer) {
    if (!strip_ || strip_->layer == layer) return;
    strip_->layer = layer;
    update();
}

QSize RouterStripView::sizeHint() const {
    const int layers = strip_ ? strip_->router.layers : 1;
    return {480, kRouterTitleH + std::clamp(layers * 5, 40, 160) + kRouterLegendH};
}

QSize RouterStripView::minimumSizeHint() const { return {200, sizeHint().height()}; }

QRectF RouterStripView::cellsRect() const {
    return QRectF(kRouterLabelW, kRouterTitleH, std::max(1, width() - kRouterLabelW - kRouterMargin),
                  height() - kRouterTitleH - kRouterLegendH);
}

std::optional<std::pair<int, int>> RouterStripView::cellAt(const QPointF& point) const {
    const QRectF cells = cellsRect();
    if (!strip_ || !cells.contains(point)) return std::nullopt;
    const int layer = std::min(strip_->router.layers - 1,
                               int((point.y() - cells.top()) / cells.height() * strip_->router.layers));
    const int token =
            std::min(strip_->tokenCount - 1, int((point.x() - cells.left()) / cells.width() * strip_->tokenCount));
    return std::make_pair(layer, strip_->firstToken + token);
}

void RouterStripView::paintEvent(QPaintEvent*) {
    if (!strip_) return;
    QPainter p(this);
    p.fillRect(rect(), palette().window());
    const QRectF cells = cellsRect();
    p.setPen(palette().windowText().color());
    p.drawText(QRectF(kRouterMargin, 0, width() - 2 * kRouterMargin, kRouterTitleH), Qt::AlignLeft | Qt::AlignVCenter,
               tr("Router: top expert per layer and token, lighter = less probable (hover: probabilities)"));
    paintRouterCells(p, cells, *strip_, 1.0);
    p.setPen(palette().windowText().color());
    const int rowH = fontMetrics().height();
    p.drawText(QRectF(0, cells.top(), kRouterLabelW - 4, rowH), Qt::AlignRight | Qt::AlignTop, tr("layer 0"));
    p.drawText(QRectF(0, cells.bottom() - rowH, kRouterLabelW - 4, rowH), Qt::AlignRight | Qt::AlignBottom,
               tr("layer %1").arg(strip_->router.layers - 1));
    // Legend: the experts' colours (up to 16), then dense layers when there are any.
    const attnscope::RouterTrace& r = strip_->router;
    double x = cells.left();
    const double y = cells.bottom() + 3, sw = 10;
    if (r.experts <= 16) {
        for (int e = 0; e < r.experts; ++e) {
            p.fillRect(QRectF(x, y + 2, sw, sw), routerExpertColor(e, r.experts));
            const QString name = QStringLiteral("e%1").arg(e);
            p.drawText(QRectF(x + sw + 2, y, 40, kRouterLegendH - 3), Qt::AlignLeft | Qt::AlignVCenter, name);
            x += sw + 8 + fontMetrics().horizontalAdvance(name);
        }
    } else {
        const QString n = tr("%1 experts, each its own hue").arg(r.experts);
        p.drawText(QRectF(x, y, 300, kRouterLegendH - 3), Qt::AlignLeft | Qt::AlignVCenter, n);
        x += fontMetrics().horizontalAdvance(n) + 10;
    }
    for (int l = 0; l < r.layers; ++l)
        if (!r.routed(l)) {
            p.fillRect(QRectF(x, y + 2, sw, sw), kRouterDenseColor);
            p.drawText(QRectF(x + sw + 2, y, 120, kRouterLegendH - 3), Qt::AlignLeft | Qt::AlignVCenter,
                       tr("dense layer"));
            break;
        }
}

void RouterStripView::mouseMoveEvent(QMouseEvent* event) {
    const auto cell = cellAt(event->position());
    if (!cell) {
        hover_.clear();
        QToolTip::hideText();
        return;
    }
    hover_ = routerCellText(*strip_, cell->first, cell->second);
    QToolTip::showText(event->globalPosition().toPoint(), hover_, this);
}

void RouterStripView::leaveEvent(QEvent*) {
    hover_.clear();
    QToolTip::hideText();
}
