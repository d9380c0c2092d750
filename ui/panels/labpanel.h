// LabPanel: the attention lab's controls (the "Lab" dock): which map variant of the shown head
// to draw (the model's own, dot, linear with a feature map, additive fitted to the head, or the
// gated hybrid), the additive fit, head masking, pruning by importance (the least important heads
// first, as the Corpus tab's pruning curve) and ablating the most important ones, and the
// progress of the lab's background jobs with a Cancel button. Compact: rows that do not apply
// to the chosen variant are hidden, and the dock is narrow. Widgets only; LabController wires them.
#pragma once

#include "services/labservice.h"

#include <QWidget>

class QComboBox;
class QFormLayout;
class QLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;

class LabPanel : public QWidget {
    Q_OBJECT
public:
    explicit LabPanel(QWidget* parent = nullptr);

    QComboBox* variantCombo() const { return variant_; }
    QComboBox* featureMapCombo() const { return featureMap_; }
    QSpinBox* featuresSpin() const { return features_; }
    QSpinBox* fitWidthSpin() const { return fitWidth_; }
    QSpinBox* fitStepsSpin() const { return fitSteps_; }
    QPushButton* fitButton() const { return fit_; }
    QLabel* fitLabel() const { return fitLabel_; }
    QLabel* variantKlLabel() const { return variantKl_; }
    QSlider* gateSlider() const { return gate_; }
    QListWidget* maskList() const { return masks_; }
    QPushButton* unmaskButton() const { return unmask_; }
    QPushButton* clearMasksButton() const { return clearMasks_; }
    QComboBox* importanceCombo() const { return importance_; }
    QSpinBox* pruneCountSpin() const { return pruneCount_; }
    // Prune: mask the count least important heads. Ablate: mask the count most important.
    QPushButton* pruneButton() const { return prune_; }
    QPushButton* ablateButton() const { return ablate_; }
    // Attention knockout: the spec (the CLI's Q1,Q2:K1,K2@a-b, several separated by ';'), Apply
    // (re-runs the model with it) and Clear, and a line saying what is applied or why not.
    QLineEdit* knockoutEdit() const { return knockout_; }
    QPushButton* knockoutApplyButton() const { return knockoutApply_; }
    QPushButton* knockoutClearButton() const { return knockoutClear_; }
    QLabel* knockoutLabel() const { return knockoutLabel_; }
    QPushButton* cancelButton() const { return cancel_; }
    QProgressBar* progressBar() const { return progress_; }
    QLabel* jobLabel() const { return job_; }

    LabVariant variant() const;
    void setVariant(LabVariant v);
    attnscope::FeatureMap featureMap() const;
    double gate() const;
    attnscope::Importance importance() const;
    // Shows the masked heads ("block L:H"), keeping the list's selection where possible.
    void setMaskedHeads(const std::vector<attnscope::HeadRef>& heads);
    // A job started (text) or ended (empty text); permille < 0 = busy without a fraction.
    void setJob(const QString& text);
    void setJobProgress(int permille);

signals:
    void variantChanged();  // variant, feature map, features or gate

private:
    void updateEnabled();

    QFormLayout* variantForm_ = nullptr;
    QComboBox* variant_ = nullptr;
    QComboBox* featureMap_ = nullptr;
    QSpinBox* features_ = nullptr;
    QSpinBox* fitWidth_ = nullptr;
    QSpinBox* fitSteps_ = nullptr;
    QPushButton* fit_ = nullptr;
    QLabel* fitLabel_ = nullptr;
    QLabel* variantKl_ = nullptr;
    QSlider* gate_ = nullptr;
    QLabel* gateValue_ = nullptr;
    QLayout* gateRow_ = nullptr;
    QListWidget* masks_ = nullptr;
    QPushButton* unmask_ = nullptr;
    QPushButton* clearMasks_ = nullptr;
    QComboBox* importance_ = nullptr;
    QSpinBox* pruneCount_ = nullptr;
    QPushButton* prune_ = nullptr;
    QPushButton* ablate_ = nullptr;
    QLineEdit* knockout_ = nullptr;
    QPushButton* knockoutApply_ = nullptr;
    QPushButton* knockoutClear_ = nullptr;
    QLabel* knockoutLabel_ = nullptr;
    QLabel* job_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancel_ = nullptr;
};
