// FigureCanvas: a widget that paints one of the painted figures (figure/paintedfigure.h) in its
// own pixels (1 unit = 1 logical pixel) and reports the mouse in those units, so a view draws on
// screen exactly what it exports.
#pragma once

#include <QWidget>

#include <functional>

class QBoxLayout;
class QLabel;
class QLayout;
class QPushButton;

class FigureCanvas : public QWidget {
    Q_OBJECT
public:
    explicit FigureCanvas(QWidget* parent = nullptr);

    // The rectangle figures are drawn into (the widget less a small margin), widget pixels.
    QRectF area() const;

    std::function<void(QPainter&, const QRectF&)> paint;  // draws into area()
    std::function<void(const QPointF&)> moved;            // mouse moved (tracking on)
    std::function<void(const QPointF&)> clicked;          // left button pressed
    std::function<void()> left;                           // mouse left the widget

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
};

// The Views dock's canvases (line, neuron, query–key) may be this narrow: the dock's content
// fits the dock's own minimum width rather than scrolling sideways.
constexpr int kViewCanvasMinWidth = 140;

// What the figure views (line, neuron, query–key) put around their canvas: the tool bar's
// "Export…" button (named `name`), and the hidden, centred, word-wrapped label a view shows
// instead of its figure when it has nothing to draw. Both are added to `layout`.
QPushButton* addExportButton(QLayout* layout, const QString& name);
QLabel* addViewMessage(QBoxLayout* layout);
// A label and its box as one item of a wrapping tool bar (views/flowlayout.h): they wrap together.
QWidget* labelledBox(const QString& label, QWidget* box);
