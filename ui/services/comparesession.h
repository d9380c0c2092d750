// CompareSession: runs one input through the three attention kinds of a built-in task
// (builtin:TASK-dot, -additive, -linear) on a worker, for the side-by-side comparison.
// Models are loaded once per device and kept; a new run supersedes the previous one
// (JobTracker). Loading and running report progress and stop on cancel(), like Session's jobs.
#pragma once

#include "services/jobtracker.h"
#include "services/pools.h"
#include "services/mapservice.h"

#include "attnscope/models/model.h"

#include <QHash>
#include <QObject>
#include <QStringList>

#include <array>
#include <memory>
#include <optional>

using ModelPtr = std::shared_ptr<const attnscope::Model>;

struct CompareRun {
    std::array<QString, 3> specs;  // builtin:TASK-KIND
    std::array<ModelPtr, 3> models;
    std::array<TracePtr, 3> traces;  // null where the model failed
    std::array<QString, 3> errors;   // per model; empty on success
};
Q_DECLARE_METATYPE(CompareRun)

// The tasks with three built-in kinds, and the kinds in display order.
QStringList compareTasks();             // {"reverse", "sentiment"}
std::array<QString, 3> compareKinds();  // {"dot", "additive", "linear"}
// "builtin:reverse-additive" -> "reverse"; nothing for any other model.
std::optional<QString> compareTaskOf(const QString& modelSpec);
std::array<QString, 3> compareSpecs(const QString& task);

class CompareSession : public QObject {
    Q_OBJECT
public:
    explicit CompareSession(QObject* parent = nullptr);
    ~CompareSession() override;

    // Runs text (or token ids when asIds) through the task's three models, opened on `device`.
    // A non-empty target (encoder-decoder tasks) forces each decoder on it (Model::encodeTarget),
    // so the three cross maps have the same rows; empty = each model generates its own.
    void run(const QString& task, const QString& text, bool asIds,
             attnscope::DeviceChoice device = attnscope::DeviceChoice::Auto, const QString& target = {});
    // Drops the running job: its result never arrives; emits busyChanged(false) and cancelled().
    void cancel();
    bool isBusy() const { return jobs_.isRunning(); }
    void waitForWorkers() { jobs_.waitForDone(); }

signals:
    void finished(const CompareRun& run);
    void busyChanged(bool busy);
    void progress(int permille);  // the whole run (three loads and three runs); -1: unknown
    void cancelled();

private:
    JobTracker jobs_{this, modelRunPool()};
    QHash<QString, ModelPtr> models_;  // "DEVICE|SPEC" -> model; GUI thread only
};
