#include "window/focusring.h"

#include <QApplication>
#include <QFocusEvent>
#include <QPainter>

namespace {
constexpr int kWidth = 2;  // px
}

FocusRing::FocusRing(QWidget* window) : QWidget(window), window_(window) {
    setObjectName(QStringLiteral("focusRing"));
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setAttribute(Qt::WA_NoSystemBackground);
    setFocusPolicy(Qt::NoFocus);
    hide();
    qApp->installEventFilter(this);
}

bool FocusRing::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::FocusIn && watched->isWidgetType()) {  // not the QWindow's own
        auto* w = static_cast<QWidget*>(watched);
        const Qt::FocusReason why = static_cast<QFocusEvent*>(event)->reason();
        const bool byKeys =
                why == Qt::TabFocusReason || why == Qt::BacktabFocusReason || why == Qt::ShortcutFocusReason;
        if (w != this && w->window() == window_) ring(byKeys ? w : nullptr);
    } else if (watched == target_ &&
               (event->type() == QEvent::Move || event->type() == QEvent::Resize || event->type() == QEvent::Show)) {
        place();
    } else if (watched == target_ && (event->type() == QEvent::Hide || event->type() == QEvent::FocusOut)) {
        ring(nullptr);
    }
    return false;
}

void FocusRing::ring(QWidget* widget) {
    target_ = widget;
    if (!widget || !widget->parentWidget()) {
        hide();
        return;
    }
    setParent(widget->parentWidget());  // a sibling drawn over it, clipped like it
    place();
    show();
    raise();
}

void FocusRing::place() {
    if (target_) setGeometry(target_->geometry().adjusted(-kWidth, -kWidth, kWidth, kWidth));
}

void FocusRing::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    QPen pen(palette().color(QPalette::Highlight), kWidth);
    p.setPen(pen);
    p.drawRoundedRect(QRectF(rect()).adjusted(kWidth / 2.0, kWidth / 2.0, -kWidth / 2.0, -kWidth / 2.0), 3, 3);
}
