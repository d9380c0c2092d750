// TemperatureSlider: the display temperature T on a log scale from 0.1 to 10, with 1 (the
// model's own attention) marked and a button to return to it. Emits temperatureChanged while
// dragging, so the shown maps follow live; the model never re-runs for it.
#pragma once

#include <QWidget>

class QLabel;
class QSlider;
class QToolButton;

class TemperatureSlider : public QWidget {
    Q_OBJECT
public:
    explicit TemperatureSlider(QWidget* parent = nullptr);

    double temperature() const;
    // Nearest slider position to t (clamped to 0.1..10).
    void setTemperature(double t);
    // For maps without a softmax (linear attention): greyed out with the reason as a note.
    void setApplicable(bool applicable, const QString& reason = {});
    QSlider* slider() const { return slider_; }

    static constexpr int kSteps = 200;  // 100 steps per decade
    static double temperatureAt(int position);
    static int positionOf(double temperature);

signals:
    void temperatureChanged(double temperature);

private:
    void updateLabel();

    QSlider* slider_ = nullptr;
    QLabel* value_ = nullptr;
    QLabel* note_ = nullptr;
    QToolButton* reset_ = nullptr;
};
