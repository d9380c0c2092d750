#include "services/othermodelsservice.h"

#include "attnscope/io/model_location.h"
#include "attnscope/models/model.h"

#include <QElapsedTimer>

OtherModelsService::~OtherModelsService() {
    cancelAll();
    waitForWorkers();
}

void OtherModelsService::scan(attnscope::CatalogSources sources, std::function<void(const CatalogScan&)> deliver) {
    scanJobs_.start(
            [sources = std::move(sources)](const JobTracker::Stop&) {
                QElapsedTimer t;
                t.start();
                CatalogScan r;
                r.entries =
                        std::make_shared<const std::vector<attnscope::CatalogEntry>>(attnscope::scanModels(sources));
                r.seconds = double(t.elapsed()) / 1000.0;
                return r;
            },
            std::move(deliver));
}

void OtherModelsService::compare(std::shared_ptr<const attnscope::Model> a, std::vector<std::int64_t> ids,
                                 const QString& spec, std::function<void(const ModelComparisonOutcome&)> deliver) {
    compareJobs_.start(
            [a = std::move(a), ids = std::move(ids), s = spec.toStdString()](const JobTracker::Stop&) {
                ModelComparisonOutcome out;
                bool cancelled = false;
                out.error = guardedJob(
                        [&] {
                            const auto b = attnscope::Model::load(attnscope::resolveModelLocation(s));
                            out.comparison = std::make_shared<const attnscope::ModelComparison>(
                                    attnscope::compareModels(*a, *b, ids));
                        },
                        cancelled);
                return out;
            },
            std::move(deliver));
}

void OtherModelsService::cancelAll() {
    scanJobs_.cancel();
    compareJobs_.cancel();
}

void OtherModelsService::waitForWorkers() {
    scanJobs_.waitForDone();
    compareJobs_.waitForDone();
}
