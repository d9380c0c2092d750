#include "services/longservice.h"

#include "services/causalservice.h"
#include "services/tokenids.h"

#include "attnscope/models/generation.h"
#include "attnscope/runtime/error.h"

#include <QElapsedTimer>

namespace {

// A piece of the context: ids as typed, or the text through the tokenizer without special tokens.
std::vector<std::int64_t> pieceIds(const attnscope::Model& model, const QString& typed, bool ids, const char* what,
                                   bool required) {
    const QString text = ids ? typed.trimmed() : typed;
    if (text.trimmed().isEmpty()) {
        if (required) throw attnscope::Error(std::string(what) + ": nothing given");
        return {};
    }
    if (!ids) return attnscope::needlePieceIds(model, text.toStdString(), what);
    const TokenIdsParse p = parseTokenIds(text, model.info().vocabSize);
    if (!p.ok()) throw attnscope::Error(std::string(what) + ": " + p.error.toStdString());
    return p.ids;
}

}  // namespace

int kvHeadOf(int head, int heads, int kvHeads) {
    if (kvHeads <= 0 || heads <= 0 || heads % kvHeads != 0) return head;
    return head / (heads / kvHeads);
}

LongService::LongService(QObject* parent) : QObject(parent) {
    qRegisterMetaType<LongJob>();
    qRegisterMetaType<ScanJobResult>();
    qRegisterMetaType<RowsJobResult>();
    qRegisterMetaType<EvictJobResult>();
    qRegisterMetaType<MapJobResult>();
}

LongService::~LongService() {
    cancelAll();
    waitForWorkers();
}

attnscope::Progress LongService::reporter(LongJob job, const JobTracker::Stop& stop) {
    auto last = std::make_shared<int>(-2);
    JobTracker* jobs = tracker(job);
    return [this, job, jobs, stop, last](long long done, long long total) {
        if (stop.requested()) return false;
        const int permille = total > 0 ? int(done * 1000 / total) : -1;
        if (permille != *last) {
            *last = permille;
            jobs->post(stop, [this, job, permille] { emit progress(job, permille); });
        }
        return true;
    };
}

void LongService::requestScan(std::shared_ptr<const attnscope::Model> model, const NeedleInput& input) {
    if (!model) return;
    emit progress(LongJob::Scan, -1);
    rowsJobs_.cancel();  // of the previous scan's runs
    scanJobs_.start(
            [=](const JobTracker::Stop& stop) {
                ScanJobResult r;
                if (stop.requested()) return r;
                QElapsedTimer clock;
                clock.start();
                r.error = guardedJob(
                        [&] {
                            attnscope::NeedleOptions& o = r.options;
                            o.haystack = pieceIds(*model, input.haystack, input.ids, "haystack", true);
                            o.needle = pieceIds(*model, input.needle, input.ids, "needle", true);
                            o.question = pieceIds(*model, input.question, input.ids, "question", true);
                            o.answer = pieceIds(*model, input.answer, input.ids, "answer", false);
                            o.lengths = input.lengths;
                            o.depths = input.depths;
                            o.newTokens = input.newTokens;
                            o.endToken = attnscope::endTokenOf(*model);
                            attnscope::checkNeedleOptions(o);
                            attnscope::NeedleOptions run = o;
                            run.progress = reporter(LongJob::Scan, stop);
                            r.result = attnscope::needleScan(*model, run);
                        },
                        r.cancelled);
                r.ms = clock.nsecsElapsed() / 1e6;
                return r;
            },
            [this](const ScanJobResult& r) { emit scanReady(r); });
}

void LongService::requestRows(std::shared_ptr<const attnscope::Model> model, const attnscope::NeedleOptions& options,
                              const attnscope::NeedleRun& run, int runIndex, int layer, int head,
                              std::shared_ptr<const attnscope::Trace> trace) {
    if (!model || run.generated.empty()) return;
    rowsJobs_.start(
            [=](const JobTracker::Stop& stop) {
                RowsJobResult r;
                r.run = runIndex;
                r.layer = layer;
                r.head = head;
                if (stop.requested()) return r;
                bool cancelled = false;
                r.error = guardedJob(
                        [&] {
                            std::int64_t start = 0;
                            const auto context = attnscope::needleContext(options, run.length, run.depth, start);
                            r.contextLength = static_cast<std::int64_t>(context.size());
                            r.trace = trace;
                            if (!r.trace) {  // the run again, with its own tokens
                                attnscope::GenerateOptions g;
                                g.tokens = int(run.generated.size());
                                g.forced = run.generated;
                                g.run = options.run;
                                g.topOutputs = 0;
                                g.progress = [stop](long long, long long) { return !stop.requested(); };
                                r.trace = attnscope::generate(*model, context, g).trace;
                            }
                            const auto T = static_cast<int>(run.generated.size());
                            const auto n = static_cast<int>(r.trace->ids().size());
                            attnscope::PoolRequest rows;
                            rows.rowBegin = int(r.contextLength) - 1;
                            rows.rowEnd = rows.rowBegin + T;
                            rows.colBegin = 0;
                            rows.colEnd = n;
                            rows.outRows = T;  // one bin per cell: the exact weights
                            rows.outCols = n;
                            r.rows = r.trace->pooledMap(0, layer, head, rows);
                            const QStringList generated = vocabularyLabels(*model, run.generated);
                            for (const QString& t : generated) r.rowLabels << QStringLiteral("→ %1").arg(t);
                            for (const auto& t : r.trace->displayTokens()) r.keyLabels << QString::fromStdString(t);
                        },
                        cancelled);
                return r;
            },
            [this](const RowsJobResult& r) { emit rowsReady(r); });
}

void LongService::requestEvict(std::shared_ptr<const attnscope::Model> model, std::vector<std::int64_t> prompt,
                               attnscope::EvictionOptions options) {
    if (!model) return;
    emit progress(LongJob::Evict, -1);
    options.progress = nullptr;
    evictJobs_.start(
            [=](const JobTracker::Stop& stop) {
                EvictJobResult r;
                r.options = options;
                if (stop.requested()) return r;
                QElapsedTimer clock;
                clock.start();
                r.error = guardedJob(
                        [&] {
                            attnscope::EvictionOptions o = options;
                            o.progress = reporter(LongJob::Evict, stop);
                            r.result = attnscope::evictionWhatIf(*model, prompt, o);
                            r.tokensFull = vocabularyLabels(*model, r.result.tokensFull);
                            r.tokensEvicted = vocabularyLabels(*model, r.result.tokensEvicted);
                        },
                        r.cancelled);
                r.ms = clock.nsecsElapsed() / 1e6;
                return r;
            },
            [this](const EvictJobResult& r) { emit evictReady(r); });
}

void LongService::requestMap(std::shared_ptr<const attnscope::Trace> trace, int layer, int head) {
    if (!trace) return;
    mapJobs_.start(
            [=](const JobTracker::Stop& stop) {
                MapJobResult r{trace, layer, head, false, {}, {}, {}};
                if (stop.requested()) return r;
                bool cancelled = false;
                r.error = guardedJob([&] { r.map = trace->map(0, layer, head); }, cancelled);
                return r;
            },
            [this](const MapJobResult& r) { emit mapReady(r); });
}

void LongService::requestLevelOfDetail(std::shared_ptr<const attnscope::Trace> trace, int layer, int head,
                                       const attnscope::PoolRequest& request) {
    if (!trace) return;
    lodJobs_.start(
            [=](const JobTracker::Stop& stop) {
                MapJobResult r{trace, layer, head, true, request, {}, {}};
                if (stop.requested()) return r;
                bool cancelled = false;
                r.error = guardedJob([&] { r.map = trace->pooledMap(0, layer, head, request); }, cancelled);
                return r;
            },
            [this](const MapJobResult& r) { emit mapReady(r); });
}

JobTracker* LongService::tracker(LongJob job) {
    switch (job) {
        case LongJob::Scan: return &scanJobs_;
        case LongJob::Rows: return &rowsJobs_;
        case LongJob::Evict: return &evictJobs_;
        case LongJob::Map: return &mapJobs_;
    }
    return &mapJobs_;
}

void LongService::cancel(LongJob job) {
    tracker(job)->cancel();
    if (job == LongJob::Map) lodJobs_.cancel();
}

void LongService::cancelAll() {
    for (JobTracker* t : {&scanJobs_, &rowsJobs_, &evictJobs_, &mapJobs_, &lodJobs_}) t->cancel();
}

void LongService::waitForWorkers() {
    for (JobTracker* t : {&scanJobs_, &rowsJobs_, &evictJobs_, &mapJobs_, &lodJobs_}) t->waitForDone();
}

bool LongService::isRunning(LongJob job) const {
    switch (job) {
        case LongJob::Scan: return scanJobs_.isRunning();
        case LongJob::Rows: return rowsJobs_.isRunning();
        case LongJob::Evict: return evictJobs_.isRunning();
        case LongJob::Map: return mapJobs_.isRunning() || lodJobs_.isRunning();
    }
    return false;
}
