// GenerateController: generation in the window. Generate continues the input last run (its ids)
// on a worker (attnscope::generate: greedy or sampled); each step of the slider then shows
// core's prefixTrace of the whole sequence through Session::showTrace, so every view (overview,
// heat map, metrics, export) shows that step: by default only the query row that chose the
// current token, over the prompt and what was generated before it. A new run or model ends
// the generation.
// It also runs the head detectors for the Metrics table (attnscope::headDetectors: one forward
// of the model on the detector's probe, on a worker), since both are runs of the model beyond
// the input.
#pragma once

#include "services/generateservice.h"

#include "attnscope/analysis/detectors.h"
#include "attnscope/models/generation.h"

#include <QObject>

#include <memory>
#include <optional>

namespace attnscope {
class Trace;
}
class GeneratePanel;
class OutputPanel;
class Session;

class GenerateController : public QObject {
    Q_OBJECT
public:
    GenerateController(Session* session, QObject* parent = nullptr);
    ~GenerateController() override;

    GeneratePanel* panel() const { return panel_; }
    // The finished generation, if any.
    const std::optional<attnscope::Generation>& generation() const { return generation_; }
    // Starts a generation from the session's current input (what Generate does).
    void start();
    // Shows generated token `step` (0-based) in every view.
    void showStep(int step);
    // The step shown (0-based), -1 without a generation.
    int shownStep() const { return generation_ ? shownStep_ : -1; }
    // The options the shown generation was made with (its sampling, not the panel's now).
    const attnscope::GenerateOptions& generationOptions() const { return options_; }
    // When `trace` is the step trace this controller had the session show: writes that step's
    // output (the chosen token and the model's distribution there) into `outputs`, true. The
    // step's prefix trace has no next-token logits of its own, so the window asks here first.
    bool showStepOutput(const std::shared_ptr<const attnscope::Trace>& trace, OutputPanel* outputs) const;
    // Shows a saved generation again (a workspace): the panel takes `options`' settings, the
    // model replays `generated` after `prompt` (GenerateOptions::forced: the same maps and step
    // outputs, whatever sampling would pick now) and the views show `step`; finished() follows,
    // or failed() when the ids do not fit the model.
    void replay(const std::vector<std::int64_t>& prompt, const std::vector<std::int64_t>& generated,
                const attnscope::GenerateOptions& options, int step);
    bool isRunning() const { return service_->isGenerating(); }
    // Scores every head of the current model on the detector's probe; detectorsReady follows.
    void startDetectors();
    void waitForWorkers() { service_->waitForWorkers(); }

signals:
    void failed(const QString& message);
    void finished();
    // Empty heads with a message when the detectors could not run.
    void detectorsReady(const std::vector<attnscope::HeadDetectors>& heads, const QString& text);

private:
    void onTrace(const std::shared_ptr<const attnscope::Trace>& trace);
    void updateEnabled(const std::shared_ptr<const attnscope::Trace>& trace);
    void run(const std::vector<std::int64_t>& prompt, attnscope::GenerateOptions options, int step);
    void deliver(const GenerationResult& outcome, const attnscope::GenerateOptions& options, int step);

    Session* session_;
    QString disabledReason_;  // why Generate is disabled for the current model (shown in the panel)
    GeneratePanel* panel_;
    GenerateService* service_;  // owns the jobs (a child)
    std::optional<attnscope::Generation> generation_;
    std::shared_ptr<const attnscope::Trace> shown_;  // the step trace the session shows, if ours
    int shownStep_ = 0;
    attnscope::GenerateOptions options_;  // of generation_ (progress and forced ids cleared)
};
