// FocusRing: a visible ring (2 px, the palette's highlight colour) around the widget that got the
// keyboard focus by Tab, Backtab or a shortcut, the way browsers show :focus-visible; a click
// hides it. One per window; it follows the focused widget as it moves or resizes.
#pragma once

#include <QPointer>
#include <QWidget>

class FocusRing : public QWidget {
    Q_OBJECT
public:
    // Watches every focus change inside window (which owns the ring through its children).
    explicit FocusRing(QWidget* window);
    QWidget* target() const { return target_; }  // the widget ringed now; null while hidden

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    void ring(QWidget* widget);
    void place();

    QWidget* window_;
    QPointer<QWidget> target_;
};
