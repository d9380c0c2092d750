#include "services/causalservice.h"

#include "services/tokenids.h"

#include "attnscope/runtime/error.h"

#include <QElapsedTimer>

CausalService::CausalService(QObject* parent) : QObject(parent) {
    qRegisterMetaType<CausalJob>();
    qRegisterMetaType<LensResult>();
    qRegisterMetaType<DlaResult>();
    qRegisterMetaType<PatchJobResult>();
}

CausalService::~CausalService() {
    cancelAll();
    waitForWorkers();
}

void CausalService::requestLens(std::shared_ptr<const attnscope::Model> model, const CausalInput& clean,
                                std::int64_t position) {
    if (!model) return;
    emit progress(CausalJob::Lens, -1);
    dlaJobs_.cancel();  // of the previous run
    lensJobs_.start(
            [=](const JobTracker::Stop& stop) {
                LensResult r;
                if (stop.requested()) return r;
                bool cancelled = false;
                r.error = guardedJob(
                        [&] {
                            const auto ids = encodeInput(*model, clean.text, clean.ids);
                            CausalLensRun run = runCausalLens(
                                    *model, ids, position, [stop](long long, long long) { return !stop.requested(); });
                            r.trace = std::move(run.trace);
                            r.position = run.position;
                            r.lens = std::move(run.lens);
                            r.topTexts = std::move(run.topTexts);
                            r.dlaRefusal = std::move(run.dlaRefusal);
                        },
                        cancelled);
                return r;
            },
            [this](const LensResult& r) { emit lensReady(r); });
}

void CausalService::requestDla(std::shared_ptr<const attnscope::Trace> trace, std::int64_t token,
                               std::optional<std::int64_t> minus) {
    if (!trace) return;
    dlaJobs_.start(
            [=](const JobTracker::Stop& stop) {
                DlaResult r{trace, token, minus, {}, {}};
                if (stop.requested()) return r;
                bool cancelled = false;
                r.error =
                        guardedJob([&] { r.dla = attnscope::directLogitAttribution(*trace, token, minus); }, cancelled);
                return r;
            },
            [this](const DlaResult& r) { emit dlaReady(r); });
}

void CausalService::requestPatch(std::shared_ptr<const attnscope::Model> model, const CausalInput& clean,
                                 const CausalInput& corrupt, attnscope::PatchRequest request) {
    if (!model) return;
    emit progress(CausalJob::Patch, -1);
    request.progress = nullptr;
    patchJobs_.start(
            [=](const JobTracker::Stop& stop) {
                PatchJobResult r{request, {}, {}, 0, {}};
                if (stop.requested()) return r;
                QElapsedTimer clock;
                clock.start();
                bool cancelled = false;
                r.error = guardedJob(
                        [&] {
                            const auto cleanIds = encodeInput(*model, clean.text, clean.ids);
                            const auto corruptIds = encodeInput(*model, corrupt.text, corrupt.ids);
                            attnscope::PatchRequest q = request;
                            auto last = std::make_shared<int>(-2);
                            q.progress = [this, stop, last](long long done, long long total) {
                                if (stop.requested()) return false;
                                const int permille = total > 0 ? int(done * 1000 / total) : -1;
                                if (permille != *last) {
                                    *last = permille;
                                    patchJobs_.post(stop,
                                                    [this, permille] { emit progress(CausalJob::Patch, permille); });
                                }
                                return true;
                            };
                            r.result = attnscope::activationPatching(*model, cleanIds, corruptIds, q);
                            r.tokens = readableTokens(*model, cleanIds);
                        },
                        cancelled);
                r.ms = clock.nsecsElapsed() / 1e6;
                return r;
            },
            [this](const PatchJobResult& r) { emit patchReady(r); });
}

void CausalService::cancel(CausalJob job) {
    switch (job) {
        case CausalJob::Lens: lensJobs_.cancel(); break;
        case CausalJob::Dla: dlaJobs_.cancel(); break;
        case CausalJob::Patch: patchJobs_.cancel(); break;
    }
}

void CausalService::cancelAll() {
    for (JobTracker* t : {&lensJobs_, &dlaJobs_, &patchJobs_}) t->cancel();
}

void CausalService::waitForWorkers() {
    for (JobTracker* t : {&lensJobs_, &dlaJobs_, &patchJobs_}) t->waitForDone();
}

bool CausalService::isRunning(CausalJob job) const {
    switch (job) {
        case CausalJob::Lens: return lensJobs_.isRunning();
        case CausalJob::Dla: return dlaJobs_.isRunning();
        case CausalJob::Patch: return patchJobs_.isRunning();
    }
    return false;
}
