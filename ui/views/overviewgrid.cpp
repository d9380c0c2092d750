#include "views/overviewgrid.h"

#include "figure/labels.h"

#include <QAbstractScrollArea>
#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

OverviewGrid::OverviewGrid(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void OverviewGrid::setShape(int layers, int heads) {
    if (layers != layers_ || heads != heads_) {
        layers_ = layers;
        heads_ = heads;
        images_.clear();
        updateGeometry();
    }
    layer_ = std::clamp(layer_, 0, std::max(0, layers - 1));
    head_ = std::clamp(head_, 0, std::max(0, heads - 1));
    update();
}

void OverviewGrid::setImages(std::vector<QImage> images) {
    images_ = std::move(images);
    update();
}

void OverviewGrid::setSelected(int layer, int head) {
    layer_ = layer;
    head_ = head;
    update();
}

void OverviewGrid::setCaption(const QString& caption) {
    caption_ = caption;
    updateGeometry();  // its lines decide where the tiles start
    update();
}

// Within a scroll area the caption wraps to what is visible of the grid (the area's viewport),
// so a grid wider than its column still shows all of its caption at the left.
int OverviewGrid::captionWidth(int width) const {
    if (QWidget* viewport = parentWidget())
        if (qobject_cast<QAbstractScrollArea*>(viewport->parentWidget())) width = std::min(width, viewport->width());
    return std::max(1, width - 8);
}

bool OverviewGrid::eventFilter(QObject* watched, QEvent* event) {
    if (watched == parentWidget() && event->type() == QEvent::Resize) {
        updateGeometry();  // the caption's lines follow the viewport's width
        update();
    }
    return QWidget::eventFilter(watched, event);
}

QRect OverviewGrid::captionRect() const {
    const QFontMetrics fm(font());
    const int w = captionWidth(width());
    const int h = caption_.isEmpty() ? fm.height()
                                     : fm.boundingRect(QRect(0, 0, w, 1 << 20), Qt::TextWordWrap, caption_).height();
    return {4, 2, w, h};
}

void OverviewGrid::setCrossedOut(std::vector<std::pair<int, int>> heads) {
    crossedOut_ = std::move(heads);
    update();
}

void OverviewGrid::setFitToHeight(bool fit) {
    fitHeight_ = fit;
    updateGeometry();
    update();
}

void OverviewGrid::setHeadOrder(std::vector<std::vector<int>> order) {
    order_ = std::move(order);
    update();
}

int OverviewGrid::slotOf(int layer, int head) const {
    if (layer < 0 || std::size_t(layer) >= order_.size() || int(order_[std::size_t(layer)].size()) != heads_)
        return head;
    const auto& o = order_[std::size_t(layer)];
    const auto it = std::find(o.begin(), o.end(), head);
    return it == o.end() ? head : int(it - o.begin());
}

void OverviewGrid::setFrameColors(std::vector<QColor> colors) {
    frames_ = std::move(colors);
    update();
}

void OverviewGrid::setLayerWindows(std::vector<long long> windows) {
    windows_ = std::move(windows);
    update();
}

long long OverviewGrid::layerWindow(int layer) const {
    return layer >= 0 && std::size_t(layer) < windows_.size() ? windows_[std::size_t(layer)] : 0;
}

QRect OverviewGrid::layerLabelRect(int layer) const {
    const Metrics m = metricsFor(width());
    const QRect r = tileRect(layer, 0);
    return {0, r.top(), m.left - 4, r.height()};
}

// Tiles as large as the width allows (up to 160 px), a label column for layers and a row for
// heads under the caption; fitted to the height too, tiles take what both allow (up to 480 px)
// so the whole grid is visible. Otherwise tiles are at least kMinTile (the grid then asks for
// more width and scrolls); fitted ones go down to 4 px, 1 px apart under 16 px.
OverviewGrid::Metrics OverviewGrid::metricsFor(int width) const {
    Metrics m;
    const QFontMetrics fm(font());
    m.left = fm.horizontalAdvance(windows_.empty() ? QStringLiteral("L00") : QStringLiteral("L00 w")) + 8;
    const int captionH =
            caption_.isEmpty() || fitHeight_
                    ? fm.height()
                    : fm.boundingRect(QRect(0, 0, captionWidth(width), 1 << 20), Qt::TextWordWrap, caption_).height();
    m.top = captionH + fm.height() + 6;
    const int cols = std::max(1, heads_), rows = std::max(1, layers_);
    const auto fit = [&](int gap) {
        const int byWidth = (width - m.left - 4 - (cols - 1) * gap) / cols;
        if (!fitHeight_) return std::min(byWidth, 160);
        return std::min({byWidth, (height() - m.top - 4 - rows * gap) / rows, 480});
    };
    m.gap = 4;
    m.tile = fit(m.gap);
    if (!fitHeight_) {
        m.tile = std::max(m.tile, kMinTile);
        return m;
    }
    if (m.tile < 16) {
        m.gap = 1;
        m.tile = fit(m.gap);
    }
    m.tile = std::max(m.tile, 4);
    return m;
}

int OverviewGrid::heightForWidth(int width) const {
    if (fitHeight_) return -1;  // the height is what the layout gives; the tiles follow it
    const Metrics m = metricsFor(width);
    return m.top + std::max(1, layers_) * (m.tile + m.gap) + 4;
}

QSize OverviewGrid::sizeHint() const {
    const QSize least = minimumSizeHint();
    return {std::max(360, least.width()), heightForWidth(std::max(360, least.width()))};
}

// Without fitting to the height: room for every column at kMinTile.
QSize OverviewGrid::minimumSizeHint() const {
    if (fitHeight_) return {120, 80};
    const QFontMetrics fm(font());
    const int left = fm.horizontalAdvance(windows_.empty() ? QStringLiteral("L00") : QStringLiteral("L00 w")) + 8;
    const int width = std::max(120, left + 4 + std::max(1, heads_) * (kMinTile + 4) - 4);
    return {width, std::max(80, heightForWidth(width))};
}

QRect OverviewGrid::tileRect(int layer, int head) const {
    const Metrics m = metricsFor(width());
    return {m.left + slotOf(layer, head) * (m.tile + m.gap), m.top + layer * (m.tile + m.gap), m.tile, m.tile};
}

// The inverse of tileRect: one division per axis, not a search over every tile.
bool OverviewGrid::tileAt(const QPoint& pos, int& layer, int& head) const {
    const Metrics m = metricsFor(width());
    const int step = m.tile + m.gap;
    const int x = pos.x() - m.left, y = pos.y() - m.top;
    if (x < 0 || y < 0) return false;
    const int h = x / step, l = y / step;
    if (h >= heads_ || l >= layers_ || x % step >= m.tile || y % step >= m.tile) return false;
    layer = l;
    head = h;
    if (std::size_t(l) < order_.size() && int(order_[std::size_t(l)].size()) == heads_)
        head = order_[std::size_t(l)][std::size_t(h)];
    return true;
}

void OverviewGrid::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QPalette pal = palette();
    p.fillRect(rect(), pal.base());
    const QFontMetrics fm(font());
    p.setPen(pal.color(QPalette::Text));
    // Wrapped onto as many lines as it needs (metricsFor leaves room for them).
    if (fitHeight_)
        p.drawText(QRect(4, 2, width() - 8, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(caption_, Qt::ElideRight, width() - 8));
    else
        p.drawText(captionRect(), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, caption_);
    if (layers_ <= 0 || heads_ <= 0) return;
    const Metrics m = metricsFor(width());
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    // Column labels every `step` columns where a label is wider than a column, centred and not
    // clipped to their column.
    const int labelWidth = fm.horizontalAdvance(ordered() ? QStringLiteral("#00") : QStringLiteral("00")) + 4;
    const int step = labelStep(m.tile + m.gap, labelWidth);
    for (int h = 0; h < heads_; h += step) {
        const QRect r(m.left + h * (m.tile + m.gap), m.top, m.tile, m.tile);  // column h
        // Ordered: the columns are ranks, and each tile names its head.
        const QString label = ordered()                                               ? QStringLiteral("#%1").arg(h + 1)
                              : m.tile >= fm.horizontalAdvance(QStringLiteral("H00")) ? QStringLiteral("H%1").arg(h)
                                                                                      : QString::number(h);
        p.drawText(QRect(r.left(), m.top - fm.height() - 2, r.width(), fm.height()), Qt::AlignCenter | Qt::TextDontClip,
                   label);
    }
    for (int l = 0; l < layers_; ++l) {
        const QRect r = tileRect(l, 0);
        p.setPen(pal.color(QPalette::Text));
        const bool local = layerWindow(l) > 0;
        p.drawText(layerLabelRect(l), Qt::AlignRight | Qt::AlignVCenter,
                   local ? QStringLiteral("L%1 w").arg(l) : QStringLiteral("L%1").arg(l));
        if (local) p.fillRect(QRect(0, r.top(), 3, r.height()), QColor(0, 150, 136));  // clear of the selection outline
        for (int h = 0; h < heads_; ++h) {
            const QRect t = tileRect(l, h);
            const std::size_t i = std::size_t(l) * heads_ + h;
            if (i < images_.size() && !images_[i].isNull())
                p.drawImage(t, images_[i]);
            else
                p.fillRect(t, pal.color(QPalette::Mid));
            if (i < frames_.size() && frames_[i].isValid()) {
                const int w = std::clamp(m.tile / 12, 2, 5);
                p.setPen(QPen(frames_[i], w, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
                p.setBrush(Qt::NoBrush);
                p.drawRect(QRectF(t).adjusted(w / 2.0, w / 2.0, -w / 2.0, -w / 2.0));
            }
            if (ordered() && m.tile >= 22) {
                const QString name = QString::number(h);
                const QRect box(t.left() + 2, t.top() + 2, fm.horizontalAdvance(name) + 4, fm.height());
                p.fillRect(box, QColor(0, 0, 0, 150));
                p.setPen(Qt::white);
                p.drawText(box, Qt::AlignCenter, name);
            }
        }
    }
    const QRect sel = tileRect(layer_, head_).adjusted(-2, -2, 2, 2);
    p.setPen(QPen(pal.color(QPalette::Highlight), hasFocus() ? 3 : 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(sel);
    // Crossed out on top of everything, the selection outline included.
    p.setRenderHint(QPainter::Antialiasing);
    for (const auto& [l, h] : crossedOut_) {
        if (l < 0 || h < 0 || l >= layers_ || h >= heads_) continue;
        const QRectF r = QRectF(tileRect(l, h)).adjusted(1, 1, -1, -1);
        p.fillRect(r, QColor(0, 0, 0, 110));
        p.setPen(QPen(QColor(230, 60, 60), std::max(1.5, r.width() / 28)));
        p.drawRect(r);
        const QRectF c = r.adjusted(r.width() / 4, r.height() / 4, -r.width() / 4, -r.height() / 4);
        p.drawLine(c.topLeft(), c.bottomRight());
        p.drawLine(c.topRight(), c.bottomLeft());
    }
}

void OverviewGrid::mousePressEvent(QMouseEvent* event) {
    int l = 0, h = 0;
    const bool onTile = tileAt(event->position().toPoint(), l, h);
    if (onTile && event->button() == Qt::LeftButton && (event->modifiers() & Qt::ControlModifier)) {
        emit headToggleRequested(l, h);  // neither focuses nor selects
        return;
    }
    setFocus(Qt::MouseFocusReason);
    if (onTile) {
        setSelected(l, h);
        emit headChosen(l, h);
        return;
    }
    QWidget::mousePressEvent(event);
}

void OverviewGrid::contextMenuEvent(QContextMenuEvent* event) {
    int l = 0, h = 0;
    if (!tileAt(event->pos(), l, h)) return event->ignore();
    emit headContextMenuRequested(l, h, event->globalPos());
}

QString OverviewGrid::toolTipAt(const QPoint& pos) const {
    auto windowText = [this](int layer) {
        const long long w = layerWindow(layer);
        if (w > 0) return tr("sliding window: each query sees its %1 latest keys").arg(w);
        return windows_.empty() ? QString() : tr("global attention");
    };
    int l = 0, h = 0;
    if (tileAt(pos, l, h)) {
        QString text = tr("layer %1 · head %2").arg(l).arg(h);
        if (!windowText(l).isEmpty()) text += QStringLiteral(" · ") + windowText(l);
        return text;
    }
    for (int layer = 0; layer < layers_; ++layer)
        if (layerLabelRect(layer).contains(pos)) return tr("layer %1 · %2").arg(layer).arg(windowText(layer));
    if (captionRect().adjusted(-4, -2, 4, 2).contains(pos)) return caption_;  // the caption
    return {};
}

bool OverviewGrid::event(QEvent* event) {
    if (event->type() == QEvent::ParentChange || event->type() == QEvent::ParentAboutToChange) {
        if (QWidget* viewport = parentWidget()) {
            viewport->removeEventFilter(this);
            if (event->type() == QEvent::ParentChange) viewport->installEventFilter(this);
        }
    }
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}
