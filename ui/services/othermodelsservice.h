// OtherModelsService: the jobs about models other than the open one, for File > Open Model… and
// File > Compare with Another Model…: scanning this machine's model stores for the model browser
// (core's scanModels, headers only, on the map pool) and loading a second model to compare the
// open one with, head by head, on the same ids (core's compareModels, on the model-run pool).
// Each kind has its own JobTracker: a new request supersedes the previous one of its kind, and
// deliver runs on the GUI thread only for the current one. Errors travel inside the results.
#pragma once

#include "services/jobtracker.h"

#include "attnscope/lab/model_comparison.h"
#include "attnscope/models/model_catalog.h"

#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace attnscope {
class Model;
}

struct CatalogScan {
    std::shared_ptr<const std::vector<attnscope::CatalogEntry>> entries;
    double seconds = 0;  // how long the scan took
};

struct ModelComparisonOutcome {
    std::shared_ptr<const attnscope::ModelComparison> comparison;  // null on failure
    QString error;
};

class OtherModelsService : public QObject {
    Q_OBJECT
public:
    explicit OtherModelsService(QObject* parent = nullptr) : QObject(parent) {}
    ~OtherModelsService() override;

    void scan(attnscope::CatalogSources sources, std::function<void(const CatalogScan&)> deliver);
    // Loads spec (anything the model picker opens: resolveModelLocation) as B and compares a
    // with it on ids.
    void compare(std::shared_ptr<const attnscope::Model> a, std::vector<std::int64_t> ids, const QString& spec,
                 std::function<void(const ModelComparisonOutcome&)> deliver);
    bool isScanning() const { return scanJobs_.isRunning(); }
    bool isComparing() const { return compareJobs_.isRunning(); }
    void cancelAll();
    void waitForWorkers();

private:
    JobTracker scanJobs_{this, mapPool()};
    JobTracker compareJobs_{this, modelRunPool()};
};
