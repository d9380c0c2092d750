#include "services/comparesession.h"

#include "services/tokenids.h"

#include "attnscope/runtime/error.h"

#include <QRegularExpression>

#include <exception>

QStringList compareTasks() { return {QStringLiteral("reverse"), QStringLiteral("sentiment")}; }

std::array<QString, 3> compareKinds() {
    return {QStringLiteral("dot"), QStringLiteral("additive"), QStringLiteral("linear")};
}

std::optional<QString> compareTaskOf(const QString& modelSpec) {
    static const QRegularExpression re(QStringLiteral("^builtin:(reverse|sentiment)-(dot|additive|linear)$"));
    const auto m = re.match(modelSpec);
    if (!m.hasMatch()) return std::nullopt;
    return m.captured(1);
}

std::array<QString, 3> compareSpecs(const QString& task) {
    std::array<QString, 3> out;
    const auto kinds = compareKinds();
    for (std::size_t i = 0; i < 3; ++i) out[i] = QStringLiteral("builtin:%1-%2").arg(task, kinds[i]);
    return out;
}

CompareSession::CompareSession(QObject* parent) : QObject(parent) { qRegisterMetaType<CompareRun>(); }

CompareSession::~CompareSession() {
    jobs_.cancel();
    jobs_.waitForDone();
}

namespace {

QString cacheKey(attnscope::DeviceChoice device, const QString& spec) {
    return QString::number(int(device)) + QLatin1Char('|') + spec;
}

}  // namespace

void CompareSession::run(const QString& task, const QString& text, bool asIds, attnscope::DeviceChoice device,
                         const QString& target) {
    CompareRun start;
    start.specs = compareSpecs(task);
    for (std::size_t i = 0; i < 3; ++i) start.models[i] = models_.value(cacheKey(device, start.specs[i]));
    emit busyChanged(true);
    emit progress(-1);
    jobs_.start(
            [this, start, text, asIds, device, target](const JobTracker::Stop& stop) {
                CompareRun r = start;
                // Six equal steps (load and run each model); each reports its own fraction.
                auto step = [this, stop](int index) -> attnscope::Progress {
                    return [this, stop, index, last = -2](long long done, long long total) mutable {
                        if (stop.requested()) return false;
                        const int permille =
                                total > 0 ? int((index * 1000 + done * 1000 / total) / 6) : index * 1000 / 6;
                        if (permille != last) {
                            last = permille;
                            jobs_.post(stop, [this, permille] { emit progress(permille); });
                        }
                        return true;
                    };
                };
                for (std::size_t i = 0; i < 3 && !stop.requested(); ++i) {
                    try {
                        if (!r.models[i]) {
                            attnscope::LoadOptions load;
                            load.device = device;
                            load.progress = step(int(2 * i));
                            r.models[i] = attnscope::Model::load(r.specs[i].toStdString(), load);
                        }
                        attnscope::RunOptions options;
                        options.progress = step(int(2 * i + 1));
                        // The value and ALTI sources' inputs: small for the built-in models, and
                        // what lets Compare follow the Show selector without a second run.
                        options.captureValues = true;
                        if (target.trimmed().isEmpty()) {
                            r.traces[i] = r.models[i]->forward(encodeInput(*r.models[i], text, asIds), options);
                        } else {
                            attnscope::TextInput input;
                            input.ids = encodeInput(*r.models[i], text, asIds);
                            input.targetIds = encodeTargetInput(*r.models[i], target, asIds);
                            r.traces[i] = r.models[i]->forwardText(input, options);
                        }
                    } catch (const attnscope::Cancelled&) {
                        break;  // superseded or cancelled: the result is dropped anyway
                    } catch (const std::exception& e) {
                        r.errors[i] = QString::fromUtf8(e.what());
                    } catch (...) {
                        r.errors[i] = QStringLiteral("Unknown error in a background job.");
                    }
                }
                return r;
            },
            [this, device](const CompareRun& r) {
                for (std::size_t i = 0; i < 3; ++i)
                    if (r.models[i]) models_.insert(cacheKey(device, r.specs[i]), r.models[i]);
                emit busyChanged(false);
                emit finished(r);
            });
}

void CompareSession::cancel() {
    if (!jobs_.isRunning()) return;
    jobs_.cancel();
    emit busyChanged(false);
    emit cancelled();
}
