#include "views/flowlayout.h"

#include <QWidget>

#include <algorithm>

FlowLayout::FlowLayout(QWidget* parent, int spacing) : QLayout(parent) {
    setSpacing(spacing);
    setContentsMargins(0, 0, 0, 0);
}

FlowLayout::~FlowLayout() {
    while (QLayoutItem* item = takeAt(0)) delete item;
}

void FlowLayout::addItem(QLayoutItem* item) { items_.append(item); }

QLayoutItem* FlowLayout::takeAt(int index) {
    return index >= 0 && index < items_.size() ? items_.takeAt(index) : nullptr;
}

QSize FlowLayout::minimumSize() const {
    QSize size;
    for (const QLayoutItem* item : items_) size = size.expandedTo(item->minimumSize());
    const QMargins m = contentsMargins();
    return size + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const {
    int width = 0, height = 0;
    for (int i = 0; i < std::min<int>(6, int(items_.size())); ++i) {
        width += items_[i]->sizeHint().width() + (i > 0 ? spacing() : 0);
        height = std::max(height, items_[i]->sizeHint().height());
    }
    const QMargins m = contentsMargins();
    return {width + m.left() + m.right(), height + m.top() + m.bottom()};
}

void FlowLayout::setGeometry(const QRect& rect) {
    QLayout::setGeometry(rect);
    arrange(rect, true);
}

int FlowLayout::arrange(const QRect& rect, bool apply) const {
    const QRect area = rect.marginsRemoved(contentsMargins());
    int y = area.y();
    QList<QLayoutItem*> line;  // the items of the line being filled
    int x = area.x(), lineHeight = 0;
    // Places a full line, each item centred in the line's height (a label beside a combo box).
    const auto place = [&] {
        int lx = area.x();
        for (QLayoutItem* item : line) {
            const QSize size = item->sizeHint();
            if (apply) item->setGeometry(QRect(QPoint(lx, y + (lineHeight - size.height()) / 2), size));
            lx += size.width() + spacing();
        }
    };
    for (QLayoutItem* item : items_) {
        if (item->isEmpty()) continue;  // hidden widgets take no room
        const QSize size = item->sizeHint();
        if (x > area.x() && x + size.width() > area.right() + 1) {
            place();
            line.clear();
            x = area.x();
            y += lineHeight + spacing();
            lineHeight = 0;
        }
        line.append(item);
        x += size.width() + spacing();
        lineHeight = std::max(lineHeight, size.height());
    }
    place();
    const QMargins m = contentsMargins();
    return y + lineHeight - rect.y() + m.bottom();
}
