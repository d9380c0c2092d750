// KindsPanel: the Compare tab's kinds report. Opens a folder of `attnscope-cli kinds-report`
// (kinds.csv and scaling.csv, read by core's readKindsReport), shows both as tables (rows that
// were not measured with their reason) and as the three figures of figure/kindsfigures.h
// (accuracy by input length, forward time and peak memory against n), drawn exactly as Export…
// writes them. Display only: every number shown is the CSVs'.
// It also opens a folder of `attnscope-cli distil --per-head` (lab/hedgehog.h, read by
// readHedgehogReport): the per-head KL and the loss figures, a table of each head's KL and one of
// the output change when the distilled (or untrained) heads replace the originals.
#pragma once

#include "figure/curvefigure.h"

#include "attnscope/lab/hedgehog.h"
#include "attnscope/lab/kinds_report.h"

#include <QString>
#include <QStringList>
#include <QWidget>

#include <array>
#include <vector>

class FigureCanvas;
class QLabel;
class QPushButton;
class QTableWidget;

class KindsPanel : public QWidget {
    Q_OBJECT
public:
    explicit KindsPanel(QWidget* parent = nullptr);

    // Shows folder/kinds.csv and folder/scaling.csv, or a distil --per-head folder (one with
    // feature_maps.json); a bad or missing file keeps what is shown, says why on the status line,
    // emits failed and returns false.
    bool openReport(const QString& folder);
    void chooseReport();  // the "Open report…" button: a folder dialog, opened without blocking
    // Writes the figures into `folder` (writeKindsFigures); errors emit failed and return none.
    QStringList exportFigures(const QString& folder, const QString& ext = QStringLiteral("png"));

    QTableWidget* kindsTable() const { return kinds_; }
    QTableWidget* scalingTable() const { return scaling_; }
    QLabel* statusLabel() const { return status_; }
    const attnscope::KindsReport& report() const { return report_; }
    // The per-head distillation shown, when the folder was one (else no heads).
    const attnscope::HedgehogResult& hedgehog() const { return hedgehog_; }
    // The figures on screen: accuracy, seconds, memory.
    const std::vector<CurveFigure>& figures() const { return figures_; }
    FigureCanvas* canvas(int i) const { return canvases_[std::size_t(i)]; }

signals:
    void failed(const QString& message);

private:
    void showReport();
    void showHedgehog();
    bool fail(const QString& message);

    attnscope::KindsReport report_;
    attnscope::HedgehogResult hedgehog_;
    bool showsHedgehog_ = false;
    std::vector<CurveFigure> figures_;
    std::array<FigureCanvas*, 3> canvases_{};
    QTableWidget* kinds_ = nullptr;
    QTableWidget* scaling_ = nullptr;
    QLabel* status_ = nullptr;
    QPushButton* open_ = nullptr;
    QPushButton* export_ = nullptr;
};
