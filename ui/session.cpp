#include "session.h"

#include "attnscope/error.h"

#include <exception>
#include <filesystem>

// What a job hands back: a model, a trace, an error to show, or nothing (cancelled).
struct Session::Outcome {
    std::shared_ptr<const attnscope::Model> model;
    std::shared_ptr<const attnscope::Trace> trace;
    QString error;
};

Session::Session(QObject* parent) : QObject(parent) {
    qRegisterMetaType<attnscope::ModelInfo>();
    qRegisterMetaType<std::shared_ptr<const attnscope::Trace>>();
}

Session::~Session() {
    jobs_.cancel();
    jobs_.waitForDone();
}

// Runs work(progress) -> Outcome on a worker, with a progress callback that reports thousandths
// (only when they change) and stops the work once the job is superseded.
template <typename Work>
void Session::startJob(Work work) {
    setBusy(true);
    emit progress(-1);
    jobs_.start(
        [this, work](const JobTracker::Stop& stop) -> Outcome {
            int lastPermille = -1;
            attnscope::Progress report = [this, stop, lastPermille](long long done,
                                                                    long long total) mutable {
                if (stop.requested()) return false;
                const int permille = total > 0 ? static_cast<int>(done * 1000 / total) : -1;
                if (permille != lastPermille) {
                    lastPermille = permille;
                    jobs_.post(stop, [this, permille] { emit progress(permille); });
                }
                return true;
            };
            try {
                return work(report);
            } catch (const attnscope::Cancelled&) {
                return {};
            } catch (const std::exception& e) {
                return {nullptr, nullptr, QString::fromStdString(e.what())};
            } catch (...) {
                return {nullptr, nullptr, QStringLiteral("Unknown error in a background job.")};
            }
        },
        [this](const Outcome& outcome) { finish(outcome); });
}

void Session::openModel(const QString& folder) {
    const std::filesystem::path path = folder.toStdString();
    startJob([path](const attnscope::Progress& report) {
        attnscope::LoadOptions options;
        options.progress = report;
        return Outcome{attnscope::Model::load(path, options), nullptr, {}};
    });
}

void Session::run(std::vector<std::int64_t> ids) {
    if (!model_) {
        emit failed(QStringLiteral("Open a model first (File > Open Model Folder)."));
        return;
    }
    startJob([model = model_, ids = std::move(ids)](const attnscope::Progress& report) {
        attnscope::RunOptions options;
        options.progress = report;
        return Outcome{nullptr, model->forward(ids, options), {}};
    });
}

void Session::cancel() {
    jobs_.cancel();
    setBusy(false);
}

void Session::waitForWorkers() { jobs_.waitForDone(); }

void Session::finish(const Outcome& outcome) {
    setBusy(false);
    if (!outcome.error.isEmpty()) {
        emit failed(outcome.error);
    } else if (outcome.model) {
        model_ = outcome.model;
        trace_.reset();
        emit modelLoaded(model_->info());
    } else if (outcome.trace) {
        trace_ = outcome.trace;
        emit traceReady(trace_);
    }
}

void Session::setBusy(bool busy) {
    if (busy_ == busy) return;
    busy_ = busy;
    emit busyChanged(busy);
}
