// ComparePanel: the three attention kinds of a built-in task (dot, additive, linear) side by
// side on the same input and the same (block, layer, head), each with its mean row entropy, and
// the mean row KL divergence between every pair (core's attnscope/analysis/metrics.h; nats).
//
// The panel runs the input through the three models (CompareSession) and asks MapService for
// the maps and measures whenever the selection or the temperature changes; a linear map has no
// softmax, so the temperature leaves it unchanged (its panel says so). While the models load and
// run, a progress bar and a Cancel button show; the models open on the window's device.
#pragma once

#include "figure/colormaps.h"
#include "services/comparesession.h"
#include "services/mapservice.h"

#include <QWidget>

#include <array>

class HeatmapView;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;
struct Figure;

class ComparePanel : public QWidget {
    Q_OBJECT
public:
    // Each of the three columns is at least this wide (pixels). The three maps are equal and as
    // large as fits: the first column is wider by the query axis it draws, the last by the
    // colour bar, the rest shared equally. Zooming one map zooms the others (shared axes).
    static constexpr int kMinViewWidth = 150;
    static constexpr int kMapGap = 6;  // between the columns
    ComparePanel(MapService* maps, QWidget* parent = nullptr);

    // What to run: the task ("reverse"/"sentiment"), the typed input, the device to open the
    // models on and, for an encoder-decoder task, a target to force (empty = generate). Runs
    // when any of them changed (or the last run was cancelled).
    void setInput(const QString& task, const QString& text, bool asIds,
                  attnscope::DeviceChoice device = attnscope::DeviceChoice::Auto, const QString& target = {});
    // Which map of each model and at which temperature; re-renders without running again.
    void setSelection(const QString& block, int layer, int head, double temperature);
    void setColoring(Colormap colormap, const ColorScale& scale);
    // The map source the window's Show selector picked: each kind shows that source's map where
    // core computes it (MapService::requestCompare), else core's reason in its place (the
    // built-in models record no value vectors and are not covered by the gradient sources).
    // Re-renders without running again.
    void setSource(attnscope::MapSource source);
    attnscope::MapSource source() const { return source_; }

    QString task() const;
    CompareSession* session() const { return session_; }
    QProgressBar* progressBar() const { return progress_; }
    QPushButton* cancelButton() const { return cancel_; }
    QString statusText() const;
    HeatmapView* view(int i) const { return views_[std::size_t(i)]; }
    const CompareRun& lastRun() const { return run_; }
    const CompareResult& lastResult() const { return result_; }
    // The shown maps as one figure (three panels, titled with kind and entropy).
    Figure figure() const;
    bool hasMaps() const;

signals:
    // The user picked another task in the panel's combo box.
    void taskChosen(const QString& task);
    // A run failed as a whole (every model) or a message worth a dialog.
    void failed(const QString& message);
    // Maps and measures are on screen (after a run or a selection change).
    void updated();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void equalizeCells();
    void layoutMaps();
    void onRunFinished(const CompareRun& run);
    void onMaps(const CompareResult& result);
    void requestMaps();
    QString blockToShow() const;

    MapService* maps_;
    CompareSession* session_;
    QComboBox* taskCombo_ = nullptr;
    QLabel* status_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QLabel* selection_ = nullptr;
    QWidget* mapsRow_ = nullptr;  // the three views and their entropy lines (layoutMaps)
    bool layoutPending_ = false;
    std::array<HeatmapView*, 3> views_{};
    std::array<QLabel*, 3> entropy_{};
    QTableWidget* kl_ = nullptr;
    QString text_;
    bool asIds_ = false;
    QString ranTask_, ranText_, ranTarget_;
    bool ranIds_ = false;
    attnscope::DeviceChoice ranDevice_ = attnscope::DeviceChoice::Auto;
    QString block_;
    QString shownBlock_;  // block_, or a block the compared models have
    int layer_ = 0, head_ = 0;
    double temperature_ = 1.0;
    attnscope::MapSource source_ = attnscope::MapSource::Weights;
    Colormap colormap_;  // the window's colours (a source's own range replaces the scale's)
    ColorScale scale_;
    CompareRun run_;
    CompareResult result_;
};
