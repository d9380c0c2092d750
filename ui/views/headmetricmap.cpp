#include "views/headmetricmap.h"

#include "figure/labels.h"

#include <QHelpEvent>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>

namespace {
constexpr int kMapMargin = 6;
constexpr int kMapBarWidth = 12;
constexpr int kMapBarLabels = 64;
}  // namespace

QColor patternColor(attnscope::PatternClass pattern) {
    using attnscope::PatternClass;
    switch (pattern) {
        case PatternClass::Diagonal: return {0xE6, 0x9F, 0x00};
        case PatternClass::PreviousToken: return {0x56, 0xB4, 0xE9};
        case PatternClass::Global: return {0x00, 0x9E, 0x73};
        case PatternClass::Local: return {0xF0, 0xE4, 0x42};
        case PatternClass::Sparse: return {0xCC, 0x79, 0xA7};
        case PatternClass::Mixed: return {0x99, 0x99, 0x99};
    }
    return {};
}

HeadMetricMap::HeadMetricMap(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    message_ = tr("Run an input to see a metric of every head.");
}

void HeadMetricMap::setValues(int layers, int heads, std::vector<double> values, const QString& name,
                              const QString& unit) {
    layers_ = layers;
    heads_ = heads;
    values_ = std::move(values);
    values_.resize(std::size_t(std::max(0, layers)) * std::max(0, heads), std::numeric_limits<double>::quiet_NaN());
    name_ = name;
    unit_ = unit;
    message_.clear();
    min_ = std::numeric_limits<double>::infinity();
    max_ = -min_;
    for (double v : values_)
        if (std::isfinite(v)) min_ = std::min(min_, v), max_ = std::max(max_, v);
    if (!std::isfinite(min_)) min_ = max_ = 0;
    update();
}

void HeadMetricMap::clear(const QString& message) {
    layers_ = heads_ = 0;
    values_.clear();
    message_ = message;
    update();
}

void HeadMetricMap::setSelected(int layer, int head) {
    layer_ = layer;
    head_ = head;
    update();
}

void HeadMetricMap::setColormap(Colormap colormap) {
    colormap_ = colormap;
    update();
}

double HeadMetricMap::value(int layer, int head) const {
    if (layer < 0 || head < 0 || layer >= layers_ || head >= heads_) return std::numeric_limits<double>::quiet_NaN();
    return values_[std::size_t(layer) * heads_ + head];
}

QColor HeadMetricMap::colorOf(double v) const {
    if (!std::isfinite(v)) return palette().color(QPalette::Mid);
    return colormapColor(colormap_, max_ > min_ ? (v - min_) / (max_ - min_) : 0.5);
}

// Square cells as large as fit left of the colour bar, under a title line and a head-label row.
HeadMetricMap::Layout HeadMetricMap::layout() const {
    Layout L;
    const QFontMetrics fm(font());
    L.left = fm.horizontalAdvance(QStringLiteral("L00")) + 8;
    L.top = fm.height() * 2 + 6;
    const int cols = std::max(1, heads_), rows = std::max(1, layers_);
    const int w = width() - L.left - 2 * kMapMargin - kMapBarWidth - kMapBarLabels, h = height() - L.top - kMapMargin;
    L.cell = std::max(4, std::min(w / cols, h / rows));
    L.bar = QRect(L.left + cols * L.cell + kMapMargin * 2, L.top, kMapBarWidth, rows * L.cell);
    return L;
}

QRect HeadMetricMap::cellRect(int layer, int head) const {
    const Layout L = layout();
    return {L.left + head * L.cell, L.top + layer * L.cell, L.cell, L.cell};
}

bool HeadMetricMap::cellAt(const QPoint& pos, int& layer, int& head) const {
    if (layers_ <= 0 || heads_ <= 0) return false;
    const Layout L = layout();
    const int x = pos.x() - L.left, y = pos.y() - L.top;
    if (x < 0 || y < 0 || x >= heads_ * L.cell || y >= layers_ * L.cell) return false;
    layer = y / L.cell;
    head = x / L.cell;
    return true;
}

void HeadMetricMap::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const QPalette pal = palette();
    p.fillRect(rect(), pal.base());
    p.setPen(pal.color(QPalette::Text));
    if (layers_ <= 0 || heads_ <= 0) {
        p.drawText(rect().adjusted(kMapMargin, kMapMargin, -kMapMargin, -kMapMargin),
                   Qt::AlignCenter | Qt::TextWordWrap, message_);
        return;
    }
    const QFontMetrics fm(font());
    const Layout L = layout();
    const QString title = unit_.isEmpty() ? name_ : QStringLiteral("%1 (%2)").arg(name_, unit_);
    p.drawText(QRect(kMapMargin, 2, width() - 2 * kMapMargin, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(title, Qt::ElideRight, width() - 2 * kMapMargin));
    // Labels every `step` cells where cells are narrower than a label, centred on their cell and
    // drawn past its edges (not clipped to it).
    const bool wide = L.cell >= fm.horizontalAdvance(QStringLiteral("H00"));
    const int headStep = wide ? 1 : labelStep(L.cell, fm.horizontalAdvance(QStringLiteral("00")) + 4);
    const int layerStep = L.cell >= fm.height() * 0.7 ? 1 : fm.height() / std::max(1, L.cell) + 1;
    for (int h = 0; h < heads_; h += headStep)
        p.drawText(QRect(L.left + h * L.cell, L.top - fm.height() - 2, L.cell, fm.height()),
                   Qt::AlignCenter | Qt::TextDontClip, wide ? QStringLiteral("H%1").arg(h) : QString::number(h));
    for (int l = 0; l < layers_; ++l) {
        if (l % layerStep == 0)
            p.drawText(QRect(0, L.top + l * L.cell, L.left - 4, L.cell),
                       Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip, QStringLiteral("L%1").arg(l));
        for (int h = 0; h < heads_; ++h) p.fillRect(cellRect(l, h), colorOf(value(l, h)));
    }
    if (layer_ >= 0 && head_ >= 0 && layer_ < layers_ && head_ < heads_) {
        p.setPen(QPen(pal.color(QPalette::Highlight), 3));
        p.setBrush(Qt::NoBrush);
        p.drawRect(cellRect(layer_, head_).adjusted(-1, -1, 1, 1));
    }
    QLinearGradient g(L.bar.bottomLeft(), L.bar.topLeft());
    g.setStops(colormapStops(colormap_));
    p.fillRect(L.bar, g);
    p.setPen(pal.color(QPalette::Text));
    p.drawRect(L.bar);
    for (const auto& [v, y] : {std::pair{max_, L.bar.top()}, std::pair{(min_ + max_) / 2, L.bar.center().y()},
                               std::pair{min_, L.bar.bottom()}}) {
        p.drawLine(L.bar.right(), y, L.bar.right() + 4, y);
        p.drawText(QRect(L.bar.right() + 6, y - fm.height() / 2, kMapBarLabels, fm.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, QString::number(v, 'g', 3));
    }
}

void HeadMetricMap::mousePressEvent(QMouseEvent* event) {
    int l = 0, h = 0;
    if (event->button() == Qt::LeftButton && cellAt(event->position().toPoint(), l, h)) {
        setSelected(l, h);
        emit headChosen(l, h);
        return;
    }
    QWidget::mousePressEvent(event);
}

bool HeadMetricMap::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        int l = 0, h = 0;
        if (cellAt(help->pos(), l, h)) {
            const double v = value(l, h);
            QToolTip::showText(help->globalPos(),
                               tr("layer %1 · head %2 · %3 %4")
                                       .arg(l)
                                       .arg(h)
                                       .arg(name_, std::isfinite(v) ? QString::number(v, 'g', 4) : tr("not known yet")),
                               this);
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(event);
}
