#include "services/corpusservice.h"

#include "attnscope/corpus/corpus_run.h"
#include "attnscope/models/model.h"

#include <chrono>
#include <string>

CorpusService::~CorpusService() {
    cancelAll();
    waitForWorkers();
}

void CorpusService::run(std::shared_ptr<const attnscope::Model> model, const QString& data, const QString& outDir) {
    if (jobs_.isRunning()) return;
    auto stopped = std::make_shared<std::atomic<bool>>(false);
    stopped_ = stopped;
    jobs_.start(
            [this, model, data, outDir, stopped, hook = tickHook_](const JobTracker::Stop& stop) {
                CorpusRunResult r{data, outDir, {}, false};
                // The rate is per phase: each phase counts its own examples from its first report.
                auto since = std::chrono::steady_clock::now();
                std::string lastPhase;
                long long firstDone = 0;
                attnscope::CorpusOptions o;
                o.read.badLines = attnscope::BadLinePolicy::Skip;
                o.progress = [&](const std::string& phase, long long done, long long total) {
                    const auto now = std::chrono::steady_clock::now();
                    if (phase != lastPhase) lastPhase = phase, since = now, firstDone = done;
                    const double secs = std::chrono::duration<double>(now - since).count();
                    const CorpusProgress report{QString::fromStdString(phase), done, total,
                                                secs > 0 ? (done - firstDone) / secs : 0.0};
                    jobs_.post(stop, [this, report] { emit progress(report); });
                    if (hook) hook(report);
                    return !stop.requested() && !stopped->load();
                };
                r.error = guardedJob([&] { attnscope::runCorpus(*model, data.toStdString(), outDir.toStdString(), o); },
                                     r.cancelled);
                return r;
            },
            [this](const CorpusRunResult& r) { emit finished(r); });
}

void CorpusService::stop() {
    if (stopped_) *stopped_ = true;
}

void CorpusService::cancelAll() {
    stop();
    jobs_.cancel();
}
