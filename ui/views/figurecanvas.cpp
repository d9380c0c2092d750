#include "views/figurecanvas.h"

#include <QMouseEvent>
#include <QPainter>

FigureCanvas::FigureCanvas(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(200, 160);
}

void FigureCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setRenderHint(QPainter::TextAntialiasing, true);
    if (paint) paint(p, area());
}

QRectF FigureCanvas::area() const { return QRectF(rect()).adjusted(6, 4, -6, -4); }

void FigureCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (moved) moved(event->position());
}

void FigureCanvas::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton && clicked) clicked(event->position());
}

void FigureCanvas::leaveEvent(QEvent*) {
    if (left) left();
}
