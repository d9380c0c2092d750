#include "services/labservice.h"

#include "attnscope/analysis/value_norm.h"
#include "attnscope/attention/score_terms.h"

#include "attnscope/runtime/error.h"
#include "attnscope/analysis/metrics.h"
#include "attnscope/attention/map_rows.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>

namespace {

// A re-run's work(), guarded: its error and how long it took go into r.
template <typename Fn>
void timedRerun(RerunResult& r, Fn work) {
    QElapsedTimer clock;
    clock.start();
    bool cancelled = false;
    r.error = guardedJob(work, cancelled);
    r.ms = clock.nsecsElapsed() / 1e6;
}

// A re-run records what the original did, for the map sources shown from it (values, score terms).
void keepRecording(attnscope::RunOptions& options, const attnscope::Trace& original) {
    options.captureValues = !original.blocks().empty() && attnscope::hasValues(original, 0);
    options.scoreTerms = !attnscope::traceScoreTerms(original).empty();
}

}  // namespace

QString labVariantName(LabVariant v) {
    switch (v) {
        case LabVariant::Native: return QStringLiteral("model's own");
        case LabVariant::Dot: return QStringLiteral("dot");
        case LabVariant::Linear: return QStringLiteral("linear");
        case LabVariant::Additive: return QStringLiteral("additive");
        case LabVariant::Hybrid: return QStringLiteral("hybrid");
        case LabVariant::Local: return QStringLiteral("local");
        case LabVariant::TopK: return QStringLiteral("top-k");
        case LabVariant::Lsh: return QStringLiteral("LSH");
    }
    return {};
}

QString shownKindCaption(const attnscope::BlockInfo& block, int blockIndex, const ShownVariant& variant) {
    const attnscope::VariantSpec& s = variant.spec;
    QString kind;
    switch (s.variant) {
        case LabVariant::Native:
            return QStringLiteral("%1 attention").arg(QString::fromLatin1(attnscope::kindName(block.kind)));
        case LabVariant::Dot: kind = QStringLiteral("dot"); break;
        case LabVariant::Linear:
            kind = s.map.featureMap == attnscope::FeatureMap::Favor  ? QStringLiteral("FAVOR+ M=%1").arg(s.map.features)
                   : s.map.featureMap == attnscope::FeatureMap::Relu ? QStringLiteral("linear relu")
                   : s.map.featureMap == attnscope::FeatureMap::Cos  ? QStringLiteral("linear cos")
                                                                     : QStringLiteral("linear elu+1");
            break;
        case LabVariant::Additive: kind = QStringLiteral("additive"); break;
        case LabVariant::Hybrid: kind = QStringLiteral("hybrid g=%1").arg(s.gate, 0, 'f', 2); break;
        case LabVariant::Local: kind = QStringLiteral("local"); break;
        case LabVariant::TopK: kind = QStringLiteral("top-k"); break;
        case LabVariant::Lsh: kind = QStringLiteral("LSH"); break;
    }
    if (!attnscope::variantNeedsFit(block, s.variant)) return QStringLiteral("%1 attention (lab)").arg(kind);
    // Only the fitted heads of this block have the map; the other tiles stay blank.
    int fitted = 0;
    for (const auto& f : variant.fits)
        if (f.fit && f.block == blockIndex) ++fitted;
    return fitted == 1 ? QStringLiteral("%1 attention (lab: 1 fitted head)").arg(kind)
                       : QStringLiteral("%1 attention (lab: %2 fitted heads)").arg(kind).arg(fitted);
}

bool shownKindUsesTemperature(const attnscope::BlockInfo& block, const ShownVariant& variant) {
    return block.kind != attnscope::AttentionKind::Linear && variant.spec.variant != LabVariant::Linear;
}

attnscope::RunOptions Intervention::runOptions() const {
    attnscope::RunOptions o;
    if (propagate) {
        o.temperature = temperature;
        o.temperatureLayers = layers;
    }
    o.maskHeads = masked;
    o.knockouts = knockouts;
    return o;
}

QString Intervention::describe() const {
    QStringList parts;
    if (propagate) {
        QStringList ls;
        for (int l : layers) ls << QString::number(l);
        parts << QStringLiteral("T = %1 inside %2")
                         .arg(temperature, 0, 'g', 3)
                         .arg(layers.empty() ? QStringLiteral("every layer")
                                             : QStringLiteral("layers ") + ls.join(QLatin1Char(',')));
    }
    if (!masked.empty())
        parts << (masked.size() == 1 ? QStringLiteral("1 head masked")
                                     : QStringLiteral("%1 heads masked").arg(masked.size()));
    if (!knockouts.empty()) parts << QStringLiteral("knockout %1").arg(knockoutSpec);
    return parts.join(QStringLiteral(" · "));
}

LabService::LabService(QObject* parent) : QObject(parent) {
    qRegisterMetaType<LabJob>();
    qRegisterMetaType<RerunResult>();
    qRegisterMetaType<VariantMapResult>();
    qRegisterMetaType<FitResult>();
    qRegisterMetaType<MetricsResult>();
    qRegisterMetaType<BlockViewResult>();
}

LabService::~LabService() {
    cancelAll();
    waitForWorkers();
}

JobTracker& LabService::tracker(LabJob job) {
    return const_cast<JobTracker&>(static_cast<const LabService*>(this)->tracker(job));
}

const JobTracker& LabService::tracker(LabJob job) const {
    switch (job) {
        case LabJob::Rerun: return rerunJobs_;
        case LabJob::Fit: return fitJobs_;
        case LabJob::Prune: return pruneJobs_;
        case LabJob::Metrics: return metricsJobs_;
        case LabJob::BlockView: return blockJobs_;
    }
    return rerunJobs_;
}

// Progress in thousandths (posted only when they change); false once the job is superseded.
attnscope::Progress LabService::reporter(LabJob job, const JobTracker::Stop& stop) {
    auto last = std::make_shared<int>(-1);
    JobTracker* t = &tracker(job);
    return [this, t, job, stop, last](long long done, long long total) {
        if (stop.requested()) return false;
        const int permille = total > 0 ? int(done * 1000 / total) : -1;
        if (permille != *last) {
            *last = permille;
            t->post(stop, [this, job, permille] { emit progress(job, permille); });
        }
        return true;
    };
}

void LabService::requestRerun(ModelPtr model, TracePtr original, const Intervention& intervention, int topK) {
    if (!model || !original) return;
    emit progress(LabJob::Rerun, -1);
    // Newest wins across both kinds: a pending prune would otherwise deliver after this re-run
    // and overwrite it (and the mask list) with an older intervention.
    pruneJobs_.cancel();
    rerunJobs_.start(
            [=](const JobTracker::Stop& stop) {
                RerunResult r{original, intervention, nullptr, {}, {}, 0, {}};
                if (stop.requested()) return r;  // superseded while queued (a slider drag)
                timedRerun(r, [&] {
                    attnscope::RunOptions options = intervention.runOptions();
                    options.progress = reporter(LabJob::Rerun, stop);
                    keepRecording(options, *original);
                    auto rr = attnscope::rerun(*model, *original, options, topK);
                    r.trace = rr.trace;
                    r.change = rr.change;
                });
                return r;
            },
            [this](const RerunResult& r) { emit rerunReady(r); });
}

void LabService::requestPrune(ModelPtr model, TracePtr original, const Intervention& base,
                              attnscope::Importance importance, int count, int topK, bool mostImportant) {
    if (!model || !original) return;
    emit progress(LabJob::Prune, -1);
    rerunJobs_.cancel();  // the pruned run replaces any pending plain re-run
    pruneJobs_.start(
            [=](const JobTracker::Stop& stop) {
                RerunResult r{original, base, nullptr, {}, {}, 0, {}};
                if (stop.requested()) return r;
                timedRerun(r, [&] {
                    attnscope::RunOptions options = base.runOptions();
                    options.progress = reporter(LabJob::Prune, stop);
                    keepRecording(options, *original);
                    auto p = attnscope::pruneByImportance(*model, *original, importance, count, !mostImportant, options,
                                                          topK);
                    r.trace = p.trace;
                    r.change = p.change;
                    r.ranking = p.ranking;
                    r.intervention.masked = base.masked;
                    for (const auto& h : p.masked) r.intervention.masked.push_back(h);
                });
                return r;
            },
            [this](const RerunResult& r) { emit rerunReady(r); });
}

void LabService::requestVariantMap(TracePtr trace, MapKey key, const VariantSpec& spec) {
    if (!trace) return;
    mapJobs_.start(
            [=](const JobTracker::Stop& stop) {
                VariantMapResult r{trace, key, spec, {}, -1, {}};
                if (stop.requested()) return r;
                bool cancelled = false;
                r.error = guardedJob(
                        [&] {
                            attnscope::LabMap m =
                                    attnscope::labMap(*trace, key.block, key.layer, key.head, spec, spec.fit.get(),
                                                      /*withKlFromDot=*/true);
                            r.map = std::move(m.map);
                            r.klFromDot = m.klFromDot;
                        },
                        cancelled);
                return r;
            },
            [this](const VariantMapResult& r) { emit variantMapReady(r); });
}

void LabService::requestFit(TracePtr trace, MapKey key, const attnscope::AdditiveFitOptions& options) {
    if (!trace) return;
    emit progress(LabJob::Fit, -1);
    fitJobs_.start(
            [=](const JobTracker::Stop& stop) {
                FitResult r{trace, key, nullptr, 0, {}};
                if (stop.requested()) return r;
                QElapsedTimer clock;
                clock.start();
                bool cancelled = false;
                r.error = guardedJob(
                        [&] {
                            attnscope::AdditiveFitOptions o = options;
                            o.progress = reporter(LabJob::Fit, stop);
                            r.fit = std::make_shared<const attnscope::AdditiveFit>(
                                    attnscope::fitAdditive(*trace, key.block, key.layer, key.head, o));
                        },
                        cancelled);
                r.ms = clock.nsecsElapsed() / 1e6;
                return r;
            },
            [this](const FitResult& r) { emit fitReady(r); });
}

void LabService::requestMetrics(TracePtr trace, const ShownVariant& variant) {
    if (!trace) return;
    emit progress(LabJob::Metrics, -1);
    const double temperature = variant.source.weights() ? variant.spec.map.temperature : 1.0;
    metricsJobs_.start(
            [=](const JobTracker::Stop& stop) {
                MetricsResult r{trace, temperature, {}, {}, false, 0, variant};
                const attnscope::MapSource source = variant.source.source;
                const bool perHead = attnscope::perHeadSource(source);
                if (variant.source.weights())
                    for (const auto& b : trace->blocks()) r.total += b.layers * b.heads;
                if (stop.requested()) return r;
                bool cancelled = false;
                r.error = guardedJob(
                        [&] {
                            std::vector<int> blocks;  // a map source: the blocks core computes it for
                            if (!variant.source.weights()) {
                                blocks = attnscope::sourceCoveredBlocks(*trace, source);
                                for (int b : blocks) {
                                    const auto& info = trace->blocks()[std::size_t(b)];
                                    r.total += info.layers * (perHead ? info.heads : 1);
                                }
                            }
                            attnscope::MetricsOptions o;  // its map options are the variant's
                            o.progress = reporter(LabJob::Metrics, stop);
                            // The table fills in a layer's worth of maps at a time.
                            const int step = std::max(
                                    1, trace->blocks().empty() || !perHead ? 1 : trace->blocks().front().heads);
                            auto soFar = std::make_shared<std::vector<attnscope::HeadMetrics>>();
                            o.onHead = [&, soFar](const attnscope::HeadMetrics& m) {
                                soFar->push_back(m);
                                if (int(soFar->size()) % step || int(soFar->size()) == r.total) return;
                                MetricsResult partial{trace, temperature, *soFar, {}, true, r.total, variant};
                                metricsJobs_.post(stop, [this, partial] { emit metricsReady(partial); });
                            };
                            r.metrics = variant.source.weights()
                                                ? attnscope::labHeadMetrics(*trace, variant.spec, variant.fits, o)
                                                : attnscope::sourceHeadMetrics(
                                                          *trace, source, shownSourceProvider(*trace, variant.source),
                                                          blocks, o);
                        },
                        cancelled);
                return r;
            },
            [this](const MetricsResult& r) { emit metricsReady(r); });
}

std::vector<int> rolloutRows(int n) {
    std::vector<int> rows;
    if (n <= 0) return rows;
    const int count = std::min(n, kRolloutRows);
    for (int i = 0; i < count; ++i)
        rows.push_back(count == 1 ? n - 1 : int(std::llround(double(i) * (n - 1) / (count - 1))));
    return rows;
}

void LabService::requestBlockView(TracePtr trace, int block, BlockView view, double temperature) {
    if (!trace) return;
    emit progress(LabJob::BlockView, -1);
    blockJobs_.start(
            [=](const JobTracker::Stop& stop) {
                BlockViewResult r{trace, block, view, temperature, {}, {}, {}};
                if (stop.requested()) return r;
                bool cancelled = false;
                r.error = guardedJob(
                        [&] {
                            attnscope::MapOptions o;
                            o.temperature = temperature;
                            const int n = attnscope::mapShape(*trace, block, 0).first;
                            if (view == BlockView::Rollout && n > kFullRolloutLimit) {
                                r.rows = rolloutRows(n);
                                r.map = attnscope::blockRolloutRows(*trace, block, r.rows, o, 0.5,
                                                                    reporter(LabJob::BlockView, stop));
                            } else if (view == BlockView::Rollout) {
                                r.map = attnscope::blockRollout(*trace, block, o);
                            } else if (view == BlockView::Flow) {
                                attnscope::FlowOptions flow;
                                flow.progress = reporter(LabJob::BlockView, stop);
                                r.map = attnscope::blockFlow(*trace, block, o, flow);
                            } else {
                                const auto& info = trace->blocks().at(std::size_t(block));
                                const int k = info.layers * info.heads;
                                r.map.rows = r.map.cols = k;
                                const auto sim = attnscope::blockSimilarity(*trace, block, o);
                                r.map.values.assign(sim.begin(), sim.end());
                            }
                        },
                        cancelled);
                return r;
            },
            [this](const BlockViewResult& r) { emit blockViewReady(r); });
}

void LabService::cancel(LabJob job) { tracker(job).cancel(); }

void LabService::cancelAll() {
    for (JobTracker* t : {&rerunJobs_, &fitJobs_, &pruneJobs_, &metricsJobs_, &blockJobs_, &mapJobs_}) t->cancel();
}

void LabService::waitForWorkers() {
    for (JobTracker* t : {&rerunJobs_, &fitJobs_, &pruneJobs_, &metricsJobs_, &blockJobs_, &mapJobs_}) t->waitForDone();
}

bool LabService::isRunning(LabJob job) const { return tracker(job).isRunning(); }
