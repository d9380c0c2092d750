// LabService: the attention lab's computations (core's interventions.h and lab.h) on worker
// threads, for the GUI. Never computes anything itself: every number comes from core.
//
// Each kind of request has its own JobTracker, so a new request supersedes the previous one of
// its kind (newest wins) and the superseded job stops at its next progress tick. Long jobs
// (re-runs, additive fits, pruning, metrics, flow) report progress in thousandths through
// progress(kind, permille); cancel(kind) drops one. Results arrive on the GUI thread as signals;
// errors travel inside them as text.
#pragma once

#include "services/jobtracker.h"
#include "services/pools.h"
#include "services/mapservice.h"

#include "attnscope/lab/interventions.h"
#include "attnscope/lab/lab.h"
#include "attnscope/models/model.h"

#include <QObject>
#include <QString>

#include <memory>
#include <vector>

using ModelPtr = std::shared_ptr<const attnscope::Model>;

// Which map of a head the lab shows (core's choice, attnscope::labMap).
using attnscope::LabVariant;
QString labVariantName(LabVariant v);  // for display: "model's own", "dot", ...
// The kind of attention a block's views show under the variant, for captions: "dot attention"
// (the model's own), "linear elu+1 attention (lab)", "additive attention (lab: 1 fitted head)".
QString shownKindCaption(const attnscope::BlockInfo& block, int blockIndex, const ShownVariant& variant);
// False where the shown maps have no softmax temperature (a linear layer's own map, the linear variant).
bool shownKindUsesTemperature(const attnscope::BlockInfo& block, const ShownVariant& variant);

struct VariantSpec : attnscope::VariantSpec {
    // Additive and Hybrid on a dot-product layer: the fit of this head (null: not fitted yet).
    std::shared_ptr<const attnscope::AdditiveFit> fit;
};

// The interventions a re-run applies (RunOptions without the progress callback).
struct Intervention {
    bool propagate = false;
    double temperature = 1.0;
    std::vector<int> layers;                 // empty = every layer
    std::vector<attnscope::HeadRef> masked;  // heads whose output is zeroed
    // Attention knockouts (RunOptions::knockouts) and the spec they were parsed from
    // (attnscope/attention/knockout_spec.h: "4,3:0,1@0-1").
    std::vector<attnscope::Knockout> knockouts;
    QString knockoutSpec;
    bool active() const { return propagate || !masked.empty() || !knockouts.empty(); }
    attnscope::RunOptions runOptions() const;
    QString describe() const;  // "temperature 0.5 inside every layer · 2 heads masked"
};

enum class LabJob { Rerun, Fit, Prune, Metrics, BlockView };

struct RerunResult {
    TracePtr original;
    Intervention intervention;
    TracePtr trace;
    attnscope::OutputChange change;
    std::vector<attnscope::HeadScore> ranking;  // pruning only
    double ms = 0;
    QString error;
};

struct VariantMapResult {
    TracePtr trace;
    MapKey key;
    VariantSpec spec;
    attnscope::HeadMap map;
    double klFromDot = -1;  // mean row KL(dot map at the same T ‖ map), nats; < 0 when not computed
    QString error;
};

struct FitResult {
    TracePtr trace;
    MapKey key;
    std::shared_ptr<const attnscope::AdditiveFit> fit;
    double ms = 0;
    QString error;
};

struct MetricsResult {
    TracePtr trace;
    double temperature = 1.0;  // variant.spec.map.temperature (1 for a map source)
    // One entry per head that has a map under the variant (attnscope::labHeadMetrics), or per map
    // of the source (attnscope::sourceHeadMetrics: head -1 for a per-layer source).
    std::vector<attnscope::HeadMetrics> metrics;
    QString error;
    // The heads computed so far while the job runs (metricsReady comes once per layer's worth of
    // heads with partial set, then once with every head); total = heads of the whole trace (maps
    // of the covered blocks for a source).
    bool partial = false;
    int total = 0;
    ShownVariant variant;  // the maps measured
};

enum class BlockView { Similarity, Rollout, Flow };

struct BlockViewResult {
    TracePtr trace;
    int block = 0;
    BlockView view = BlockView::Rollout;
    double temperature = 1.0;
    attnscope::HeadMap map;  // similarity: k × k with k = layers · heads
    // Rollout of a long input: the top-layer rows computed (map row r is query rows[r]); empty
    // when the map has every row.
    std::vector<int> rows;
    QString error;
};

// Longer self-attention inputs get their rollout on kRolloutRows evenly spaced rows (the last
// one included) instead of all n, in bounded memory (attnscope::blockRolloutRows).
constexpr int kFullRolloutLimit = 1024;
constexpr int kRolloutRows = 64;
std::vector<int> rolloutRows(int n);

class LabService : public QObject {
    Q_OBJECT
public:
    explicit LabService(QObject* parent = nullptr);
    ~LabService() override;

    // Runs the model again on original's input with the intervention (Model::rerun).
    void requestRerun(ModelPtr model, TracePtr original, const Intervention& intervention, int topK = 5);
    // Masks `count` heads by importance on top of the intervention's and re-runs: pruning masks
    // the least important first (as the Corpus tab's pruning curve); mostImportant ablates the
    // top `count` instead.
    void requestPrune(ModelPtr model, TracePtr original, const Intervention& base, attnscope::Importance importance,
                      int count, int topK = 5, bool mostImportant = false);
    void requestVariantMap(TracePtr trace, MapKey key, const VariantSpec& spec);
    void requestFit(TracePtr trace, MapKey key, const attnscope::AdditiveFitOptions& options);
    // Every head's metrics of the variant's maps (attnscope::labHeadMetrics), or with a map source
    // other than the weights (variant.source) the metrics of that source's maps on the blocks core
    // computes it for (attnscope::sourceHeadMetrics; per-layer sources one entry per layer, head -1).
    void requestMetrics(TracePtr trace, const ShownVariant& variant);
    // The model's own maps at the display temperature.
    void requestMetrics(TracePtr trace, double temperature) {
        requestMetrics(std::move(trace), ShownVariant::modelsOwn(temperature));
    }
    void requestBlockView(TracePtr trace, int block, BlockView view, double temperature);

    void cancel(LabJob job);
    void cancelAll();
    void waitForWorkers();
    bool isRunning(LabJob job) const;

signals:
    void progress(LabJob job, int permille);
    void rerunReady(const RerunResult& result);  // re-runs and pruning
    void variantMapReady(const VariantMapResult& result);
    void fitReady(const FitResult& result);
    void metricsReady(const MetricsResult& result);
    void blockViewReady(const BlockViewResult& result);

private:
    JobTracker& tracker(LabJob job);
    const JobTracker& tracker(LabJob job) const;
    attnscope::Progress reporter(LabJob job, const JobTracker::Stop& stop);

    JobTracker rerunJobs_{this, modelRunPool()};
    JobTracker fitJobs_{this, modelRunPool()};
    JobTracker pruneJobs_{this, modelRunPool()};
    JobTracker metricsJobs_{this, mapPool()};
    JobTracker blockJobs_{this, mapPool()};
    JobTracker mapJobs_{this, mapPool()};
};

Q_DECLARE_METATYPE(LabJob)
Q_DECLARE_METATYPE(RerunResult)
Q_DECLARE_METATYPE(VariantMapResult)
Q_DECLARE_METATYPE(FitResult)
Q_DECLARE_METATYPE(MetricsResult)
Q_DECLARE_METATYPE(BlockViewResult)
