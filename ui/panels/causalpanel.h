// CausalPanel: the Causal tab's widgets (issue 32). Above, the inputs: the clean and corrupt
// inputs (text, or token ids with "Token ids"; an empty clean box means the main input), the
// answer T and the wrong token T2 (editable boxes offering the clean run's top predictions at
// P; a typed number is a vocabulary id), the position P (-1: the last), Run (lens and DLA), and
// patching's settings (what, exact or attribution) with Patch, progress and Cancel. Below, the
// three results: the logit-lens grid (LensView), DLA (SignedMapView with the components as
// bars) and patching (SignedMapView). Widgets only; CausalController wires them.
#pragma once

#include "views/causalviews.h"

#include "attnscope/analysis/patching.h"

#include <QWidget>

#include <cstdint>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

class CausalPanel : public QWidget {
    Q_OBJECT
public:
    explicit CausalPanel(QWidget* parent = nullptr);

    QLineEdit* cleanEdit() const { return clean_; }
    QLineEdit* corruptEdit() const { return corrupt_; }
    QCheckBox* idsCheck() const { return ids_; }
    QComboBox* answerCombo() const { return answer_; }
    QComboBox* wrongCombo() const { return wrong_; }
    QSpinBox* positionSpin() const { return position_; }
    QPushButton* runButton() const { return run_; }
    QComboBox* whatCombo() const { return what_; }
    QComboBox* methodCombo() const { return method_; }
    QPushButton* patchButton() const { return patch_; }
    QPushButton* cancelButton() const { return cancel_; }
    QProgressBar* progressBar() const { return progress_; }
    QLabel* statusLabel() const { return status_; }
    QLabel* reasonLabel() const { return reason_; }
    LensView* lensView() const { return lens_; }
    SignedMapView* dlaView() const { return dla_; }
    SignedMapView* patchView() const { return patchView_; }

    // The chosen answer T (an offered prediction or a typed id); none when the box holds no id.
    std::optional<std::int64_t> answer() const;
    // The wrong token T2; none for "(none)" (LD = logit(T)).
    std::optional<std::int64_t> wrong() const;
    // Offers predictions (id, label, probability) in both boxes, keeping chosen ids where given.
    void offerTokens(const std::vector<std::int64_t>& ids, const QStringList& labels, const std::vector<float>& probs,
                     std::optional<std::int64_t> answer, std::optional<std::int64_t> wrong);
    void setAnswer(std::optional<std::int64_t> id);
    void setWrong(std::optional<std::int64_t> id);
    attnscope::PatchWhat what() const;
    void setWhat(attnscope::PatchWhat what);
    bool attribution() const;

    // Enables the tab's actions, or disables them with the reason shown and as their tooltip.
    void setApplicable(bool applicable, const QString& reason);
    // A patching job started (text) or ended (empty text); permille < 0: busy without a fraction.
    void setJob(const QString& text);
    void setJobProgress(int permille);

signals:
    void tokensChanged();    // the answer or the wrong token
    void settingsChanged();  // the clean input, ids mode or position (every result is out of date)

private:
    QWidget* buildInputs();
    QWidget* buildPatchRow();

    QLineEdit* clean_ = nullptr;
    QLineEdit* corrupt_ = nullptr;
    QCheckBox* ids_ = nullptr;
    QComboBox* answer_ = nullptr;
    QComboBox* wrong_ = nullptr;
    QSpinBox* position_ = nullptr;
    QPushButton* run_ = nullptr;
    QComboBox* what_ = nullptr;
    QComboBox* method_ = nullptr;
    QPushButton* patch_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* reason_ = nullptr;
    LensView* lens_ = nullptr;
    SignedMapView* dla_ = nullptr;
    SignedMapView* patchView_ = nullptr;
};
