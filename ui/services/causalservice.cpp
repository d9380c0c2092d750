#include "services/causalservice.h"

#include "services/tokenids.h"

#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"

#include <QElapsedTimer>

QStringList vocabularyLabels(const attnscope::Model& model, const std::vector<std::int64_t>& ids) {
    QStringList out;
    const attnscope::Tokenizer* tokenizer = model.tokenizer();
    for (std::int64_t id : ids)
        out << (tokenizer ? QString::fromStdString(tokenizer->displayToken(id)) : QStringLiteral("#%1").arg(id));
    return out;
}

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
                            const auto n = static_cast<std::int64_t>(ids.size());
                            if (position >= n)
                                throw attnscope::Error("position " + std::to_string(position) +
                                                       " is outside the clean input (0.." + std::to_string(n - 1) +
                                                       ")");
                            attnscope::RunOptions run;
                            run.recordResiduals = true;
                            run.attributionPosition = position < 0 ? n - 1 : position;
                            run.progress = [stop](long long, long long) { return !stop.requested(); };
                            r.position = run.attributionPosition;
                            try {
                                r.trace = model->forward(ids, run);
                            } catch (const attnscope::Error& e) {
                                // DLA's refusal (post-norm decoders): the lens still applies.
                                r.dlaRefusal = QString::fromUtf8(e.what());
                                run.attributionPosition = -1;
                                r.trace = model->forward(ids, run);
                            }
                            attnscope::LensOptions options;
                            options.topK = std::min<int>(kLensTopK, model->info().vocabSize);
                            r.lens = attnscope::logitLens(*r.trace, options);
                            r.topTexts = vocabularyLabels(*model, r.lens.topIds);
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
                            if (const auto* tokenizer = model->tokenizer())
                                for (const auto& t : tokenizer->displayTokens(cleanIds))
                                    r.tokens << QString::fromStdString(t);
                            else
                                for (std::int64_t id : cleanIds) r.tokens << QString::number(id);
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
