// ModelViewController: the Model tab (ModelViewPanel) kept in step with the ViewState: the shown
// block's thumbnails (the same MapService results as the Explore overview, of the lab's variant),
// its selection and masked heads, and every head's metrics from core (LabService::requestMetrics,
// of the variant the lab shows at the temperature the maps are drawn at), asked for only while the
// tab is shown and not yet known for this trace and variant. With a map source other than the
// weights shown (setSource), the thumbnails are that source's (the Explore overview's) and the
// metrics core's of its maps (attnscope::sourceHeadMetrics; a per-layer source's values on each
// of the layer's heads). A click on a thumbnail or a metric cell selects that head in the window.
#pragma once

#include "services/labservice.h"

#include "attnscope/analysis/detectors.h"

#include <QObject>

#include <string>

class LabController;
class MapService;
class ModelViewPanel;
class OverviewGrid;
class Session;
class ViewState;

class ModelViewController : public QObject {
    Q_OBJECT
public:
    // Every argument outlives the controller. maps: the thumbnails the Explore overview asked
    // for (overview already holds the latest), shown here too.
    ModelViewController(ViewState* state, Session* session, MapService* maps, LabController* lab,
                        const OverviewGrid* overview, QObject* parent);

    ModelViewPanel* panel() const { return panel_; }
    LabService* service() const { return service_; }

    // The Model tab's settings as plain values (workspace files save and restore them); metric
    // keys are headMetricList()'s (attnscope/analysis/head_metric_list.h).
    struct State {
        std::string orderKey;               // empty = head number (natural order)
        bool descending = true;             // largest first
        bool frames = true;                 // frame tiles by pattern class
        std::string metricKey = "entropy";  // the layer × head map's metric
    };
    State state() const;
    // Unknown keys are ignored (an older file, a metric since renamed).
    void setState(const State& state);
    // The trace and variant (temperature included) whose metrics the panel shows (complete or arriving).
    TracePtr metricsTrace() const { return metricsTrace_; }
    const ShownVariant& metricsVariant() const { return metricsVariant_; }
    // Follows the window's selection, block and trace; asks for metrics when shown.
    void refresh();
    // The map source the Show selector picked (SourceController::shown()).
    void setSource(const ShownSource& source);
    // The head detectors' scores of the current model (GenerateController::startDetectors); they
    // fill the detector entries of the order and map until another model opens.
    void setDetectors(std::vector<attnscope::HeadDetectors> heads);

signals:
    // A detector metric was picked while the detectors have not run for this model.
    void detectorsWanted();

private:
    bool shownNow() const;
    void metricPicked(const QString& key);
    // The trace the tab shows: the gradients' own for a gradient source, else the lab's.
    TracePtr shownTrace() const;
    void onMetrics(const MetricsResult& r);

    ViewState* state_;
    LabController* lab_;
    const OverviewGrid* overview_;
    ModelViewPanel* panel_ = nullptr;
    LabService* service_ = nullptr;
    TracePtr blockTrace_;  // the trace and block the panel's shape belongs to
    int block_ = -1;
    TracePtr metricsTrace_;
    ShownVariant metricsVariant_;
    ShownSource source_;
    std::vector<attnscope::HeadMetrics> metrics_;      // the latest of metricsTrace_ (every block)
    std::vector<attnscope::HeadDetectors> detectors_;  // of the current model; empty until run
    bool detectorsAsked_ = false;
};
