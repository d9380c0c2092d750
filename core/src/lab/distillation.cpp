#include "attnscope/lab/distillation.h"

#include "attnscope/io/atomic_file.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace attnscope {

DistilReport distilBuiltin(const TrainOptions& options,
                           const std::function<void(const std::string&, const EpochMonitor&)>& onEpoch) {
    if (options.distillation.teacher.empty()) throw Error("distil: no teacher given");
    if (options.out.empty()) throw Error("distil: no output folder given");
    DistilReport report;
    const auto tell = [&](const char* run) {
        return [&onEpoch, run](const EpochMonitor& e) {
            if (onEpoch) onEpoch(run, e);
        };
    };
    report.distilled.result =
            trainMonitored(options, options.out / "monitors.csv", report.distilled.epochs, {}, tell("distilled"));
    TrainOptions baseline = options;  // the same seed, data and budget; the KL measured, not trained on
    baseline.distillation.lambda = 0;
    baseline.out = options.out / "baseline";
    report.baseline.result =
            trainMonitored(baseline, baseline.out / "monitors.csv", report.baseline.epochs, {}, tell("baseline"));
    writeDistillationCsv(options.out / "distillation.csv", report);
    return report;
}

void writeDistillationCsv(const std::filesystem::path& file, const DistilReport& report) {
    std::ostringstream csv;
    csv << "epoch,step,distilled_loss,distilled_accuracy,distilled_kl,baseline_loss,baseline_accuracy,baseline_kl\n";
    const std::size_t rows = std::min(report.distilled.epochs.size(), report.baseline.epochs.size());
    char line[256];
    for (std::size_t i = 0; i < rows; ++i) {
        const EpochMonitor& d = report.distilled.epochs[i];
        const EpochMonitor& b = report.baseline.epochs[i];
        std::snprintf(line, sizeof line, "%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", d.epoch, d.step, d.loss, d.accuracy,
                      d.kl, b.loss, b.accuracy, b.kl);
        csv << line;
    }
    writeFileAtomically(file, csv.str());
}

}  // namespace attnscope
