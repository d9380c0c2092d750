#include "services/comparesession.h"

#include "services/tokenids.h"

#include <QRegularExpression>

#include <exception>

QStringList compareTasks() { return {QStringLiteral("reverse"), QStringLiteral("sentiment")}; }

std::array<QString, 3> compareKinds() { return {QStringLiteral("dot"), QStringLiteral("additive"), QStringLiteral("linear")}; }

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

void CompareSession::run(const QString& task, const QString& text, bool asIds) {
    CompareRun start;
    start.specs = compareSpecs(task);
    for (std::size_t i = 0; i < 3; ++i) start.models[i] = models_.value(start.specs[i]);
    emit busyChanged(true);
    jobs_.start(
        [start, text, asIds](const JobTracker::Stop& stop) {
            CompareRun r = start;
            for (std::size_t i = 0; i < 3 && !stop.requested(); ++i) {
                try {
                    if (!r.models[i]) r.models[i] = attnscope::Model::load(r.specs[i].toStdString());
                    r.traces[i] = r.models[i]->forward(encodeInput(*r.models[i], text, asIds));
                } catch (const std::exception& e) {
                    r.errors[i] = QString::fromUtf8(e.what());
                }
            }
            return r;
        },
        [this](const CompareRun& r) {
            for (std::size_t i = 0; i < 3; ++i)
                if (r.models[i]) models_.insert(r.specs[i], r.models[i]);
            emit busyChanged(false);
            emit finished(r);
        });
}
