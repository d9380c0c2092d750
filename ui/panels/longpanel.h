// LongPanel: the Long context tab's widgets (issue 33). On the left the two analyses' settings:
// the needle scan (haystack, needle, question and answer as text or token ids, the context
// lengths and depths, new tokens; Scan with progress and Cancel) and the KV-eviction what-if on
// the main input (policy, budget and the policy's options, new tokens; Run with progress and
// Cancel). On the right the results: the scan's depth × length success map, its layer × head
// retrieval map (a click picks a head), the what-if's KL and token agreement per step, and under
// them the long map: a needle run's generated rows over its context with the needle's span
// framed, or the prompt's map of a head with the keys its kv head evicted shaded. Widgets only;
// LongController wires them.
#pragma once

#include "figure/workspace.h"

#include "attnscope/analysis/kv_eviction.h"

#include <QWidget>

#include <vector>

class FigureCanvas;
class HeadMetricMap;
class HeatmapView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;

class LongPanel : public QWidget {
    Q_OBJECT
public:
    explicit LongPanel(QWidget* parent = nullptr);

    // The needle scan's settings.
    QPlainTextEdit* haystackEdit() const { return haystack_; }
    QPushButton* haystackFileButton() const { return haystackFile_; }
    QLineEdit* needleEdit() const { return needle_; }
    QLineEdit* questionEdit() const { return question_; }
    QLineEdit* answerEdit() const { return answer_; }
    QCheckBox* idsCheck() const { return ids_; }
    QLineEdit* lengthsEdit() const { return lengths_; }
    QLineEdit* depthsEdit() const { return depths_; }
    QSpinBox* scanTokensSpin() const { return scanTokens_; }
    QPushButton* scanButton() const { return scan_; }
    QPushButton* scanCancelButton() const { return scanCancel_; }
    QProgressBar* scanProgress() const { return scanProgress_; }
    QLabel* scanStatus() const { return scanStatus_; }
    // The eviction what-if's settings.
    QComboBox* policyCombo() const { return policy_; }
    QSpinBox* budgetSpin() const { return budget_; }
    QSpinBox* recentSpin() const { return recent_; }  // -1: ⌊B/2⌋
    QSpinBox* windowSpin() const { return window_; }
    QSpinBox* kernelSpin() const { return kernel_; }
    QSpinBox* sinksSpin() const { return sinks_; }
    QSpinBox* evictTokensSpin() const { return evictTokens_; }
    QPushButton* evictButton() const { return evict_; }
    QPushButton* evictCancelButton() const { return evictCancel_; }
    QProgressBar* evictProgress() const { return evictProgress_; }
    QLabel* evictStatus() const { return evictStatus_; }
    QLabel* reasonLabel() const { return reason_; }
    // The results.
    HeatmapView* successMap() const { return success_; }
    HeadMetricMap* retrievalMap() const { return retrieval_; }
    FigureCanvas* evictionCanvas() const { return evictionCanvas_; }
    QLabel* evictionMessage() const { return evictionMessage_; }
    HeatmapView* longMap() const { return longMap_; }
    QComboBox* mapWhatCombo() const { return mapWhat_; }  // 0: a needle run's rows, 1: the eviction's prompt map
    QComboBox* runCombo() const { return run_; }
    QSpinBox* layerSpin() const { return layer_; }
    QSpinBox* headSpin() const { return head_; }
    QPushButton* exportButton(int which) const { return exports_[std::size_t(which)]; }  // 0..3 as Result below

    enum Result { Success, Retrieval, Eviction, LongMap };

    attnscope::EvictionPolicy policy() const;
    // The two analyses' settings as the workspace keeps them, and back (the boxes clamp what
    // they cannot show; the results' out-of-date signals follow as for the user's changes).
    Workspace::LongContext settings() const;
    void setSettings(const Workspace::LongContext& s);
    // The options' boxes that apply to the policy shown enabled, the others disabled.
    void syncPolicyOptions();
    // Enables the tab's actions, or disables them with the reason shown and as their tooltip.
    void setApplicable(bool applicable, const QString& reason);
    // A job started (text) or ended (empty text); permille < 0: busy without a fraction.
    void setScanJob(const QString& text);
    void setEvictJob(const QString& text);
    static void setJobProgress(QProgressBar* bar, int permille);
    // Shows the settings page of the needle scan (0) or of the eviction what-if (1), whose
    // figure is on it.
    void showPage(int page);
    QTabWidget* settingsTabs() const { return settingsTabs_; }

signals:
    void scanSettingsChanged();   // the scan's results are out of date
    void evictSettingsChanged();  // the what-if's results are out of date

private:
    QWidget* buildScanBox();
    QWidget* buildEvictBox();
    QWidget* buildResults();
    QWidget* buildEvictionFigure();
    QPushButton* makeExportButton(int which, const QString& name);

    QPlainTextEdit* haystack_ = nullptr;
    QPushButton* haystackFile_ = nullptr;
    QLineEdit *needle_ = nullptr, *question_ = nullptr, *answer_ = nullptr, *lengths_ = nullptr, *depths_ = nullptr;
    QCheckBox* ids_ = nullptr;
    QSpinBox* scanTokens_ = nullptr;
    QPushButton *scan_ = nullptr, *scanCancel_ = nullptr;
    QProgressBar* scanProgress_ = nullptr;
    QLabel* scanStatus_ = nullptr;
    QComboBox* policy_ = nullptr;
    QSpinBox *budget_ = nullptr, *recent_ = nullptr, *window_ = nullptr, *kernel_ = nullptr, *sinks_ = nullptr,
             *evictTokens_ = nullptr;
    QPushButton *evict_ = nullptr, *evictCancel_ = nullptr;
    QProgressBar* evictProgress_ = nullptr;
    QLabel* evictStatus_ = nullptr;
    QLabel* reason_ = nullptr;
    QTabWidget* settingsTabs_ = nullptr;
    HeatmapView* success_ = nullptr;
    HeadMetricMap* retrieval_ = nullptr;
    FigureCanvas* evictionCanvas_ = nullptr;
    QLabel* evictionMessage_ = nullptr;
    HeatmapView* longMap_ = nullptr;
    QComboBox *mapWhat_ = nullptr, *run_ = nullptr;
    QSpinBox *layer_ = nullptr, *head_ = nullptr;
    std::vector<QPushButton*> exports_ = std::vector<QPushButton*>(4, nullptr);
};
