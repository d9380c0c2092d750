#include "services/generateservice.h"

#include "attnscope/runtime/error.h"

GenerateService::~GenerateService() {
    cancelAll();
    waitForWorkers();
}

void GenerateService::generate(std::shared_ptr<const attnscope::Model> model, std::vector<std::int64_t> prompt,
                               attnscope::GenerateOptions options, std::function<void(long long, long long)> progress,
                               std::function<void(const GenerationResult&)> deliver) {
    jobs_.start(
            [this, model, prompt, options, progress](const JobTracker::Stop& stop) mutable {
                GenerationResult out;
                options.progress = [this, stop, progress](long long done, long long total) {
                    jobs_.post(stop, [progress, done, total] { progress(done, total); });
                    return !stop.requested();
                };
                try {
                    out.generation = attnscope::generate(*model, prompt, options);
                } catch (const attnscope::Cancelled&) {
                } catch (const std::exception& e) {
                    out.error = QString::fromUtf8(e.what());
                }
                return out;
            },
            std::move(deliver));
}

void GenerateService::detectors(std::shared_ptr<const attnscope::Model> model,
                                std::function<void(const DetectorsResult&)> deliver) {
    detectorJobs_.start(
            [model](const JobTracker::Stop&) {
                DetectorsResult r;
                try {
                    r.report = attnscope::headDetectors(*model, {}, {});
                } catch (const std::exception& e) {
                    r.error = QString::fromUtf8(e.what());
                }
                return r;
            },
            std::move(deliver));
}

void GenerateService::cancelAll() {
    jobs_.cancel();
    detectorJobs_.cancel();
}

void GenerateService::waitForWorkers() {
    jobs_.waitForDone();
    detectorJobs_.waitForDone();
}
