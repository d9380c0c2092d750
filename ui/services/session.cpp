#include "services/session.h"

#include "services/tokenids.h"

#include "attnscope/io/model_location.h"
#include "attnscope/attention/attention_file.h"
#include "attnscope/runtime/error.h"

#include <exception>
#include <filesystem>
#include <memory>

namespace {
QString progressWords(const QString& what, const QString& unit, long long done, long long total, double secondsLeft);
}

// What a job hands back: a model, a trace, an error to show, or nothing (cancelled).
struct Session::Outcome {
    std::shared_ptr<const attnscope::Model> model;
    std::shared_ptr<const attnscope::Trace> trace;
    QString error;
    QString spec;
    bool attentionFile = false;  // trace is a maps-only Trace read from spec
};

Session::Session(QObject* parent) : QObject(parent) {
    qRegisterMetaType<attnscope::ModelInfo>();
    qRegisterMetaType<std::shared_ptr<const attnscope::Trace>>();
}

Session::~Session() {
    jobs_.cancel();
    jobs_.waitForDone();
}

namespace {
QString progressWords(const QString& what, const QString& unit, long long done, long long total, double secondsLeft) {
    QString text = QStringLiteral("%1: %2 %3 of %4").arg(what, unit).arg(done).arg(total);
    if (secondsLeft >= 0 && done < total)
        text += QStringLiteral(" · %1 left").arg(QString::fromStdString(attnscope::ProgressClock::format(secondsLeft)));
    return text;
}
}  // namespace

// Runs work(progress) -> Outcome on a worker, with a progress callback that reports thousandths
// and words with the time left (only when they change) and stops the work once the job is
// superseded.
template <typename Work>
void Session::startJob(Work work, const QString& what, const QString& unit) {
    setBusy(true);
    emit progress(-1);
    emit progressText(what + QStringLiteral("…"));
    jobs_.start(
            [this, work, what, unit](const JobTracker::Stop& stop) -> Outcome {
                int lastPermille = -1;
                auto clock = std::make_shared<attnscope::ProgressClock>();
                attnscope::Progress report = [this, stop, lastPermille, clock, what, unit](long long done,
                                                                                           long long total) mutable {
                    if (stop.requested()) return false;
                    const int permille = total > 0 ? static_cast<int>(done * 1000 / total) : -1;
                    const double left = clock->secondsLeft(done, total);
                    if (permille != lastPermille) {
                        lastPermille = permille;
                        const QString text = progressWords(what, unit, done, total, left);
                        jobs_.post(stop, [this, permille, text] {
                            emit progress(permille);
                            emit progressText(text);
                        });
                    }
                    return true;
                };
                try {
                    return work(report);
                } catch (const attnscope::Cancelled&) {
                    return {};
                } catch (const std::exception& e) {
                    return {nullptr, nullptr, QString::fromStdString(e.what()), {}};
                } catch (...) {
                    return {nullptr, nullptr, QStringLiteral("Unknown error in a background job."), {}};
                }
            },
            [this](const Outcome& outcome) { finish(outcome); });
}

void Session::openModel(const QString& folder, attnscope::DeviceChoice device) {
    const std::filesystem::path path = folder.toStdString();
    startJob(
            [path, folder, device](const attnscope::Progress& report) {
                attnscope::LoadOptions options;
                options.device = device;
                options.progress = report;
                // A folder, a file of one, builtin:NAME or a model id in the Hugging Face cache.
                return Outcome{attnscope::Model::load(attnscope::resolveModelLocation(path.string()), options),
                               nullptr,
                               {},
                               folder};
            },
            tr("Loading"), tr("step"));
}

attnscope::RunOptions Session::recording() const {
    attnscope::RunOptions options;
    options.captureDtype = captureDtype_;
    options.captureValues = captureValues_;
    options.scoreTerms = captureTerms_;
    return options;
}

void Session::run(std::vector<std::int64_t> ids) {
    if (!model_) {
        emit failed(QStringLiteral("Open a model first (File > Open Model Folder)."));
        return;
    }
    startJob(
            [model = model_, ids = std::move(ids), base = recording()](const attnscope::Progress& report) {
                attnscope::RunOptions options = base;
                options.progress = report;
                return Outcome{nullptr, model->forward(ids, options), {}, {}};
            },
            tr("Running"), tr("layer"));
}

void Session::runInput(const QString& text, bool asIds, const QString& target) {
    if (!model_) {
        emit failed(QStringLiteral("Open a model first (File > Open Model Folder)."));
        return;
    }
    startJob(
            [model = model_, text, asIds, target, base = recording()](const attnscope::Progress& report) {
                attnscope::RunOptions options = base;
                const std::vector<std::int64_t> ids = encodeInput(*model, text, asIds);
                options.progress = report;
                if (target.trimmed().isEmpty()) return Outcome{nullptr, model->forward(ids, options), {}, {}};
                attnscope::TextInput input;
                input.ids = ids;
                input.targetIds = encodeTargetInput(*model, target, asIds);
                return Outcome{nullptr, model->forwardText(input, options), {}, {}};
            },
            tr("Running"), tr("layer"));
}

void Session::openAttentionFile(const QString& npy, const QString& tokensJson) {
    startJob(
            [npy, tokensJson](const attnscope::Progress& report) {
                auto trace = attnscope::openAttentionFile(npy.toStdString(), tokensJson.toStdString(), report);
                return Outcome{nullptr, std::move(trace), {}, npy, true};
            },
            tr("Checking maps"), tr("map"));
}

void Session::runImage(attnscope::RgbImage image) {
    if (!model_) {
        emit failed(QStringLiteral("Open a model first (File > Open Model Folder)."));
        return;
    }
    lastImage_ = std::make_shared<const attnscope::RgbImage>(image);
    startJob(
            [model = model_, image = std::move(image), base = recording()](const attnscope::Progress& report) {
                attnscope::RunOptions options = base;
                options.progress = report;
                return Outcome{nullptr, model->forwardImage(image, options), {}, {}};
            },
            tr("Running"), tr("layer"));
}

void Session::runImageText(attnscope::RgbImage image, const QString& text, bool asIds) {
    if (!model_) {
        emit failed(QStringLiteral("Open a model first (File > Open Model Folder)."));
        return;
    }
    lastImage_ = std::make_shared<const attnscope::RgbImage>(image);
    startJob(
            [model = model_, image = std::move(image), text, asIds,
             base = recording()](const attnscope::Progress& report) {
                attnscope::RunOptions options = base;
                options.progress = report;
                attnscope::TextInput input;
                input.ids = encodeInput(*model, text, asIds);
                return Outcome{nullptr, model->forwardImageText(image, input, options), {}, {}};
            },
            tr("Running"), tr("layer"));
}

bool Session::hasTokenizer() const { return model_ && model_->hasTokenizer(); }

std::shared_ptr<const attnscope::Tokenizer> Session::tokenizer() const {
    // Shares ownership with the model, which owns its tokenizer.
    if (!model_ || !model_->tokenizer()) return nullptr;
    return std::shared_ptr<const attnscope::Tokenizer>(model_, model_->tokenizer());
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
        modelSpec_ = outcome.spec;
        trace_.reset();
        emit modelLoaded(model_->info());
    } else if (outcome.trace && outcome.attentionFile) {
        model_.reset();
        modelSpec_ = outcome.spec;
        trace_ = outcome.trace;
        emit attentionFileLoaded(outcome.spec);
        emit traceReady(trace_);
    } else if (outcome.trace) {
        trace_ = outcome.trace;
        emit traceReady(trace_);
    }
}

void Session::showTrace(std::shared_ptr<const attnscope::Trace> trace) {
    if (!trace || !model_) return;
    trace_ = std::move(trace);
    emit traceReady(trace_);
}

void Session::setBusy(bool busy) {
    if (busy_ == busy) return;
    busy_ = busy;
    emit busyChanged(busy);
}
