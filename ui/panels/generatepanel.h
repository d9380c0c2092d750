// GeneratePanel: the generation controls (new tokens; greedy or sampling with its own sampling
// temperature, top-k, top-p and seed), the step slider over the generated tokens and the text
// (prompt + continuation, the current step's token marked). Widgets only: the window's
// GenerateController runs the model and says what to show.
//
// The sampling temperature here picks tokens; the attention temperature is the slider in the
// Controls dock. The labels say which is which.
#pragma once

#include "attnscope/models/generation.h"

#include <QStringList>
#include <QWidget>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QTextBrowser;

class GeneratePanel : public QWidget {
    Q_OBJECT
public:
    explicit GeneratePanel(QWidget* parent = nullptr);

    int tokens() const;
    attnscope::SamplingOptions sampling() const;
    bool queryRowOnly() const;

    QPushButton* generateButton() const { return generate_; }
    QSlider* stepSlider() const { return slider_; }
    QCheckBox* sampleCheck() const { return sample_; }
    QSpinBox* tokensSpin() const { return tokens_; }
    QDoubleSpinBox* samplingTemperatureSpin() const { return temperature_; }
    QSpinBox* topKSpin() const { return topK_; }
    QDoubleSpinBox* topPSpin() const { return topP_; }
    QSpinBox* seedSpin() const { return seed_; }
    QCheckBox* queryRowCheck() const { return rowOnly_; }
    QTextBrowser* text() const { return text_; }
    int step() const;

    // A finished generation: readable labels of prompt and generated tokens; the slider spans
    // the generated tokens and moves to `step`.
    void showGeneration(const QStringList& prompt, const QStringList& generated, int step);
    void clearGeneration(const QString& message);
    void setStatus(const QString& text);
    // Marks generated token `step` in the text and the step label.
    void markStep(int step);

signals:
    void stepChanged(int step);
    void queryRowOnlyChanged();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void updateSamplingEnabled();

    QSpinBox* tokens_ = nullptr;
    QCheckBox* sample_ = nullptr;
    QDoubleSpinBox* temperature_ = nullptr;
    QSpinBox* topK_ = nullptr;
    QDoubleSpinBox* topP_ = nullptr;
    QSpinBox* seed_ = nullptr;
    QPushButton* generate_ = nullptr;
    QSlider* slider_ = nullptr;
    QLabel* stepLabel_ = nullptr;
    QCheckBox* rowOnly_ = nullptr;
    QTextBrowser* text_ = nullptr;
    QLabel* status_ = nullptr;
    QStringList prompt_, generated_;
};
