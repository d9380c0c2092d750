// TrainingCurvesPanel: the Compare tab's training curves. Opens a run folder of `attnscope-cli
// train` or `distil` (its monitors.csv, read by core's readMonitorCsv) and plots per epoch the
// loss, the probe accuracy, each head's mean entropy, each layer's mean pairwise head similarity
// and each head's mean attention distance (QCustomPlot). Heads the monitors flagged (collapsed:
// entropy near 0 or near log n; duplicated: similarity > 0.95 to another head) are listed with the
// epochs they were flagged in, and their curves are drawn dashed.
// Display only: every number shown is the CSV's.
#pragma once

#include "attnscope/analysis/training_monitors.h"

#include <QString>
#include <QWidget>

#include <array>
#include <vector>

class QCustomPlot;
class QLabel;
class QPushButton;
class QTableWidget;

class TrainingCurvesPanel : public QWidget {
    Q_OBJECT
public:
    enum Curve { Loss, Accuracy, Entropy, Similarity, Distance };
    static constexpr int kCurves = 5;

    explicit TrainingCurvesPanel(QWidget* parent = nullptr);

    // Shows folder/monitors.csv (or the CSV file given); a bad or missing file keeps what is shown,
    // says why on the status line, emits failed and returns false.
    bool openRun(const QString& path);
    // The "Open run…" button: a folder dialog, opened without blocking.
    void chooseRun();

    QCustomPlot* plot(Curve curve) const { return plots_[std::size_t(curve)]; }
    // One row per flagged head and flag: head ("self L0 H1"), flag, epochs ("2, 3, 5").
    QTableWidget* flagsTable() const { return flags_; }
    QLabel* statusLabel() const { return status_; }
    const std::vector<attnscope::EpochMonitor>& epochs() const { return epochs_; }

signals:
    void failed(const QString& message);

private:
    void showRun();

    std::array<QCustomPlot*, kCurves> plots_{};
    QTableWidget* flags_ = nullptr;
    QLabel* status_ = nullptr;
    QPushButton* open_ = nullptr;
    std::vector<attnscope::EpochMonitor> epochs_;
};
