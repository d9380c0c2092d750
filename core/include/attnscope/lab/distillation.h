// Attention distillation runs (issue 36; docs/kinds.md): a built-in student trained twice with
// the same seed and budget, once with the teacher's attention KL term (λ = options'
// distillation.lambda) and once without (λ = 0), each with the training monitors, so the curve
// shows what distillation changed. The loss, the KL floor and the layer/head mapping are defined
// in core/src/models/builtin/distillation.h.
//
// Files: OUT/ the distilled student (a model folder), OUT/monitors.csv, OUT/checkpoints/;
// OUT/baseline/ the same for λ = 0; OUT/distillation.csv, one row per epoch:
//   epoch, step, distilled_loss, distilled_accuracy, distilled_kl, baseline_loss, baseline_accuracy,
//   baseline_kl
// (loss: the mean training objective over the epoch; accuracy: on the monitors' 32 probes; kl: the
// mean KL(teacher ‖ student), nats, on a fixed batch of 64 held-out examples).
#pragma once

#include "attnscope/analysis/training_monitors.h"
#include "attnscope/models/builtin.h"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace attnscope {

struct DistilRun {
    TrainResult result;  // heldOutAccuracy: on the task's full held-out set
    std::vector<EpochMonitor> epochs;
};

struct DistilReport {
    DistilRun distilled, baseline;
};

// options: the student's training (task or task file, attention kind, seed, steps, out) with
// distillation.teacher set. onEpoch (optional) is told "distilled" or "baseline" and each epoch.
// Throws attnscope::Error for a missing or mismatched teacher and the trainer's errors.
DistilReport distilBuiltin(const TrainOptions& options,
                           const std::function<void(const std::string&, const EpochMonitor&)>& onEpoch = {});

void writeDistillationCsv(const std::filesystem::path& file, const DistilReport& report);

}  // namespace attnscope
