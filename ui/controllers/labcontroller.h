// LabController: the attention lab. It makes the lab's widgets, which the window places:
//   - temperatureRow(), under the temperature slider: "inside the model", then the slider's T
//     re-runs the model with RunOptions{temperature, layers} (newest wins) instead of rescaling
//     the maps;
//   - panel() (LabPanel, the "Lab" dock): map variant of the shown head, additive fit, hybrid gate,
//     head masking (the window's overview asks toggleMask() and headMenu(); masked heads are
//     crossed out through maskedHeadsShown) and pruning by importance, with progress and Cancel;
//   - changeView(), under the output: how the intervention changed it (OutputChangeView);
//   - metrics() (MetricsPanel, the "Metrics" tab): per-head metrics, rollout, flow and head similarity.
// It reads what is shown from the ViewState (selection, temperature, tab) and changes it there
// (a head picked in the Metrics table, the masked heads); what it draws goes out as signals
// (detailMap, mapsStale, status) that the window routes to its views. The window calls the
// on…() handlers for its own widgets' events. Every number comes from core through LabService workers. The
// window asks shownTrace(), displayTemperature() and takesDetail() before drawing, and calls
// requestDetail() when the lab draws the detail map.
#pragma once

#include "figure/workspace.h"
#include "services/labservice.h"

#include <QObject>

class Session;
class ViewState;
class LabPanel;
class MetricsPanel;
class OutputChangeView;
class QCheckBox;
class QLineEdit;
class QMenu;
class QWidget;

class LabController : public QObject {
    Q_OBJECT
public:
    // state and session must outlive the controller. The widgets are made without a parent: the
    // window places them (panel, metrics, changeView, temperatureRow) and owns them from then on.
    LabController(ViewState* state, Session* session, QObject* parent);
    ~LabController() override;

    // What the host calls for its widgets' events: the slider moved, another block is shown,
    // another tab is current.
    void onTemperatureChanged();
    void onBlockChanged();
    void onTabChanged();
    // The context menu for a head of the shown block (mask or unmask it, clear all masks), made
    // with parent and WA_DeleteOnClose; null while there is no trace. The host pops it up.
    QMenu* headMenu(int layer, int head, QWidget* parent);

    // The trace the views show: the intervention's re-run when there is a current one, else
    // the session's trace.
    TracePtr shownTrace() const;
    // The temperature maps are drawn at: 1 while the temperature is inside the model.
    double displayTemperature(double sliderTemperature) const;
    // True while the slider's temperature is inside the model ("Inside the model" checked): a new
    // temperature re-runs the model, and the re-run redraws the maps when it arrives.
    bool temperatureInside() const;
    // True when the lab, not MapService, draws the detail map (a variant or an intervention).
    bool takesDetail() const;
    void requestDetail(MapKey key);
    // The variant the detail map shows now, with the fit that applies to key (if any).
    VariantSpec variantSpec(MapKey key) const;
    // The variant the whole-block views (overview, Model tab) show: variantSpec's, with the fits of
    // the shown trace where the variant uses them.
    ShownVariant shownVariant() const;

    // The map source the Show selector picked (SourceController::shown()): the Metrics tab's table
    // measures its maps (core's sourceHeadMetrics, on the blocks core computes it for); the block
    // views (rollout, flow, head similarity) measure the weights and say so.
    void setSource(const ShownSource& source);
    const ShownSource& source() const { return source_; }

    const Intervention& intervention() const { return intervention_; }
    void toggleMask(const QString& block, int layer, int head);
    bool isMasked(const QString& block, int layer, int head) const;
    void clearMasks();
    // Replaces the masked heads and re-runs once (a workspace being opened).
    void setMaskedHeads(std::vector<attnscope::HeadRef> heads);
    // Attention knockouts from a spec (the CLI's "4,3:0,1@0-1", parsed by core's
    // attention/knockout_spec.h; empty = none): a malformed spec is refused (false, its reason in
    // the dock and the status line) and the intervention kept; else it becomes the intervention's
    // and, with apply, the model re-runs.
    bool setKnockoutSpec(const QString& spec, bool apply = true);
    QString knockoutSpec() const { return intervention_.knockoutSpec; }
    // Fits the current head with the Lab dock's settings, or key with the options given.
    void fitAdditive();
    void fitAdditive(MapKey key, const attnscope::AdditiveFitOptions& options);
    // The head the current fit is for and the options it was made with; false when there is no
    // fit of the shown trace.
    bool currentFit(MapKey& key, attnscope::AdditiveFitOptions& options) const;
    // Masks the Lab dock's count of heads by its importance: pruning the least important first
    // (as the Corpus tab's pruning curve), or with mostImportant ablating the top ones.
    void prune(bool mostImportant = false);
    // Stops and waits for every lab worker (window shutdown, tests).
    void shutdown();
    // The Lab's settings live in the ViewState (tabSettings().lab, variant(), inside()): the
    // panel's changes, the current fit (it goes with the trace it was made on) and the applied
    // knockouts are written there as they happen, and the panel follows the state's variant,
    // feature map, features, gate and fit settings (a workspace being opened).
    void syncState();

    LabService* service() const { return service_; }
    LabPanel* panel() const { return panel_; }
    MetricsPanel* metrics() const { return metrics_; }
    OutputChangeView* changeView() const { return change_; }
    QCheckBox* propagateCheck() const { return propagate_; }
    QLineEdit* layersEdit() const { return layers_; }
    QWidget* temperatureRow() const { return temperatureRow_; }
    std::shared_ptr<const attnscope::AdditiveFit> lastFit() const { return fit_; }

signals:
    // The shown trace changed (an intervention's run arrived or was dropped).
    void shownTraceChanged();
    // "Inside the model" was ticked or unticked (the slider's caption says which temperature it sets).
    void temperatureInsideChanged(bool inside);
    // What the lab changed that the window's views show: the shown head's map and the overview
    // are stale; the lab drew the detail map (rows = queries) or a message in its place; the
    // masked heads of the shown block (layer, head); a transient status line (ms).
    void mapsStale();
    void detailMap(const attnscope::HeadMap& map, const QStringList& queryLabels, const QStringList& keyLabels,
                   const QString& title);
    void detailMessage(const QString& message);
    void maskedHeadsShown(const std::vector<std::pair<int, int>>& heads);
    void status(const QString& message, int timeoutMs);

private:
    void buildPropagateRow();
    void onBaseTrace();
    void onModelLoaded();
    void applyIntervention();
    void onRerun(const RerunResult& r);
    void onVariantMap(const VariantMapResult& r);
    void onFit(const FitResult& r);
    void onMetrics(const MetricsResult& r);
    void onBlockView(const BlockViewResult& r);
    void onProgress(LabJob job, int permille);
    void jobStarted(const QString& text);
    void jobEnded(const QString& text = {});
    void refreshMetrics();
    void refreshBlockView();
    void updateMaskViews();
    void showMasksOnOverview();
    void followState();
    Workspace::Lab labFromPanel() const;  // the settings as the panel and the current fit have them

    MapKey currentKey() const;  // the state's selection
    QString blockName() const;  // the state's block, "self" while there is none
    bool metricsShown() const;  // the Metrics tab is the current one
    // The trace the metrics table measures: the gradients' own for a gradient source, else shownTrace().
    TracePtr metricsTraceNow() const;

    ViewState* state_;
    Session* session_;
    LabService* service_ = nullptr;
    LabPanel* panel_ = nullptr;
    MetricsPanel* metrics_ = nullptr;
    OutputChangeView* change_ = nullptr;
    QCheckBox* propagate_ = nullptr;
    QLineEdit* layers_ = nullptr;
    QWidget* temperatureRow_ = nullptr;

    Intervention intervention_;   // what the user asked for
    TracePtr base_, rerunTrace_;  // the re-run of base_ under intervention_
    std::shared_ptr<const attnscope::AdditiveFit> fit_;
    TracePtr fitTrace_;
    MapKey fitKey_;
    attnscope::AdditiveFitOptions fitOptions_;  // of the fit asked for last
    TracePtr metricsTrace_;                     // what the metrics table shows
    double metricsTemperature_ = 0;
    ShownSource source_, metricsSource_;  // shown; measured by the table
    int blockViewBlock_ = -1;             // the block the block view was asked for
    bool following_ = false;              // the panel is being set from the state (followState)
    QString jobText_;
    attnscope::ProgressClock jobClock_;  // the running job's time left
};
