// CorpusService: the Corpus tab's job on the shared model-run pool (services/pools.h): a corpus
// file run through a model into a results folder (core's runCorpus: every analysis, skipping bad
// lines, resumable), with progress. Two ways to stop it: stop() is the user's Cancel (the run
// ends at its next progress tick and reports that it was cancelled, so the folder can resume);
// cancelAll() is a model change (the run ends and nothing is reported). Never computes anything
// itself: the numbers are core's, written to the folder.
#pragma once

#include "services/jobtracker.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

namespace attnscope {
class Model;
}

// One progress report: the phase ("statistics", "pruning"…), examples done of total, and the
// phase's rate so far (examples per second; 0 before it is known).
struct CorpusProgress {
    QString phase;
    long long done = 0, total = 0;
    double rate = 0;
};

struct CorpusRunResult {
    QString data, outDir;
    QString error;           // core's one-line refusal; empty on success
    bool cancelled = false;  // stop(): the folder holds what was done, and resumes
};

class CorpusService : public QObject {
    Q_OBJECT
public:
    explicit CorpusService(QObject* parent = nullptr) : QObject(parent) {}
    ~CorpusService() override;

    // Runs data through model into outDir; progress() while it runs, then finished(). Ignored
    // while a run is going (one folder at a time).
    void run(std::shared_ptr<const attnscope::Model> model, const QString& data, const QString& outDir);
    void stop();       // the user's Cancel: finished() follows with cancelled set
    void cancelAll();  // a model change: the run stops and no signal follows
    bool isRunning() const { return jobs_.isRunning(); }
    void waitForWorkers() { jobs_.waitForDone(); }
    // For tests: called on the worker at each progress tick, after the report is posted and
    // before the run asks whether to stop, so that a test can hold a run at a known example and
    // stop it there. run() takes the hook set at that time; empty: none.
    void setTickHook(std::function<void(const CorpusProgress&)> hook) { tickHook_ = std::move(hook); }

signals:
    void progress(const CorpusProgress& report);
    void finished(const CorpusRunResult& result);

private:
    JobTracker jobs_{this, modelRunPool()};
    std::shared_ptr<std::atomic<bool>> stopped_;  // the current run's Cancel
    std::function<void(const CorpusProgress&)> tickHook_;
};
