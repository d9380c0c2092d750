// GenerateService: the jobs of the Generate dock and the head detectors, on the shared model-run
// pool (services/pools.h): a generation (attnscope::generate, token by token, with progress and
// cancel) and the detectors' probe run (attnscope::headDetectors). A new request supersedes the
// previous one of its kind; deliver runs on the GUI thread only for the current one.
#pragma once

#include "services/jobtracker.h"

#include "attnscope/analysis/detectors.h"
#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"

#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

struct GenerationResult {
    std::optional<attnscope::Generation> generation;  // none when cancelled or failed
    QString error;
};
struct DetectorsResult {
    attnscope::DetectorReport report;
    QString error;
};

class GenerateService : public QObject {
    Q_OBJECT
public:
    explicit GenerateService(QObject* parent = nullptr) : QObject(parent) {}
    ~GenerateService() override;

    // Generates after prompt; progress(done, total) on the GUI thread while current.
    void generate(std::shared_ptr<const attnscope::Model> model, std::vector<std::int64_t> prompt,
                  attnscope::GenerateOptions options, std::function<void(long long, long long)> progress,
                  std::function<void(const GenerationResult&)> deliver);
    void detectors(std::shared_ptr<const attnscope::Model> model, std::function<void(const DetectorsResult&)> deliver);
    bool isGenerating() const { return jobs_.isRunning(); }
    void cancelAll();  // a model change: neither result will arrive
    void waitForWorkers();

private:
    JobTracker jobs_{this, modelRunPool()};
    JobTracker detectorJobs_{this, modelRunPool()};
};
