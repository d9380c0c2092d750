// SourceService: the map sources of the Show selector (attnscope/analysis/map_source.h) for the
// views. The Trace-based sources (value-norm, value-norm-layer, ALTI, ALTI rollout) are core's
// sourceMap over a trace recorded with the values (Session::setCaptureValues); the gradient
// sources (gradient × attention, relevance) need one forward and one backward through the model,
// which requestGradients runs on the shared model-run pool (services/pools.h): a new request
// supersedes the old one, cancel() stops it at its next progress tick, and a superseded result
// is dropped. The ui computes none of these: every number comes from core.
#pragma once

#include "services/jobtracker.h"
#include "services/pools.h"

#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/analysis/map_source.h"
#include "attnscope/attention/trace.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <cstdint>
#include <memory>
#include <optional>

namespace attnscope {
class Model;
struct ModelInfo;
}  // namespace attnscope

// What the maps show: a source and, for the gradient sources, the maps computed for the trace
// `of` (null while they are being computed or when they failed).
struct ShownSource {
    attnscope::MapSource source = attnscope::MapSource::Weights;
    std::shared_ptr<const attnscope::GradientMaps> gradients;
    std::shared_ptr<const attnscope::Trace> of;  // the trace the gradients belong to
    bool weights() const { return source == attnscope::MapSource::Weights; }
    bool operator==(const ShownSource& o) const { return source == o.source && gradients == o.gradients && of == o.of; }
    bool operator!=(const ShownSource& o) const { return !(*this == o); }
};

// One map of the shown source: the weights at display temperature t (Trace::map), a Trace-based
// source (attnscope::sourceMap; head ignored for per-layer sources) or the gradient maps'
// (GradientMaps::map). Throws attnscope::Error: core's message, or that the gradients of this
// trace are not there.
attnscope::HeadMap shownSourceMap(const attnscope::Trace& trace, const ShownSource& shown, int block, int layer,
                                  int head, double temperature);

// The maps of the shown source for core's metrics (attnscope::sourceHeadMetrics): a Trace-based
// source's attnscope::traceMapProvider, or the gradient maps of this trace
// (attnscope::gradientMapProvider). Throws attnscope::Error for the weights (labHeadMetrics
// measures them) and where the gradients of this trace are not there.
attnscope::MapProvider shownSourceProvider(const attnscope::Trace& trace, const ShownSource& shown);

// Why a source does not apply to a model (empty when it does), for the selector's tooltip. model:
// the open model (null: maps from a file); builtin: one of the built-in models. The gradient
// sources' coverage is core's (gradientClassLabels refuses, with the reason, what it does not cover).
QString sourceUnavailableReason(attnscope::MapSource source, const attnscope::Model* model, bool builtin);

// The gradient sources of one trace, or why not.
struct GradientsResult {
    std::shared_ptr<const attnscope::Trace> trace;
    std::optional<std::int64_t> target;  // as asked (none = the model's choice)
    std::shared_ptr<const attnscope::GradientMaps> maps;
    QString error;
};
Q_DECLARE_METATYPE(GradientsResult)

class SourceService : public QObject {
    Q_OBJECT
public:
    explicit SourceService(QObject* parent = nullptr);
    ~SourceService() override;  // cancels and waits for its worker

    // attnscope::gradientSources on the trace's input (its ids, or image for image models) with
    // the run's interventions; gradientsReady follows on the GUI thread unless superseded.
    void requestGradients(std::shared_ptr<const attnscope::Model> model, std::shared_ptr<const attnscope::Trace> trace,
                          std::shared_ptr<const attnscope::RgbImage> image, std::optional<std::int64_t> target,
                          const attnscope::RunOptions& options);
    void cancel();
    void waitForWorkers();
    bool isBusy() const { return jobs_.isRunning(); }

signals:
    void gradientsReady(const GradientsResult& result);
    void progress(int permille);  // -1 until the first report

private:
    JobTracker jobs_{this, modelRunPool()};
};
