#include "views/figurecanvas.h"

#include <QBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>

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

QPushButton* addExportButton(QLayout* layout, const QString& name) {
    auto* button = new QPushButton(QObject::tr("Export…"));
    button->setObjectName(name);
    layout->addWidget(button);
    return button;
}

QWidget* labelledBox(const QString& label, QWidget* box) {
    auto* pair = new QWidget;
    auto* row = new QHBoxLayout(pair);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(4);
    auto* text = new QLabel(label);
    text->setBuddy(box);
    row->addWidget(text);
    row->addWidget(box);
    return pair;
}

QLabel* addViewMessage(QBoxLayout* layout) {
    auto* message = new QLabel;
    message->setWordWrap(true);
    message->setAlignment(Qt::AlignCenter);
    layout->addWidget(message);
    message->hide();
    return message;
}
