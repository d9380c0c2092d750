// Session: the model and trace the window shows, and the background work that produces them.
//
// openModel() and run() do their work on a worker thread (JobTracker) and report back on the
// GUI thread through signals. Starting one supersedes whatever was running: the older job is
// asked to stop at its next progress tick and its result is dropped. Model and Trace are
// immutable and shared (std::shared_ptr<const ...>), so the GUI reads them while workers run.
// Errors from core (attnscope::Error) or anything else arrive as failed(message); a cancelled
// job ends silently.
#pragma once

#include "services/jobtracker.h"
#include "services/pools.h"

#include "attnscope/models/model.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "attnscope/attention/trace.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

Q_DECLARE_METATYPE(attnscope::ModelInfo)
Q_DECLARE_METATYPE(std::shared_ptr<const attnscope::Trace>)

class Session : public QObject {
    Q_OBJECT
public:
    explicit Session(QObject* parent = nullptr);
    ~Session() override;  // cancels and waits for workers

    std::shared_ptr<const attnscope::Model> model() const { return model_; }
    // The latest trace of the current model; null before the first run and after a model change.
    std::shared_ptr<const attnscope::Trace> trace() const { return trace_; }
    bool isBusy() const { return busy_; }

    // Loads a model folder. On success the model replaces the current one and the trace is
    // cleared; on failure the current model stays.
    // device: where the weights go (memory refusals and a missing GPU arrive as failed()).
    void openModel(const QString& folder, attnscope::DeviceChoice device = attnscope::DeviceChoice::Auto);
    // One forward pass of the current model over ids (used as given).
    void run(std::vector<std::int64_t> ids);
    // The typed input: token ids when asIds, else text through the model's tokenizer; encoding
    // errors (an unknown symbol, too many tokens) arrive as failed(). Encoder-decoders: a
    // non-empty target is forced on the decoder (ids from the start token, or a target text
    // through Model::encodeTarget); empty = greedy decoding.
    void runInput(const QString& text, bool asIds, const QString& target = QString());
    // An attention file (attention_file.h: a .npy of maps, tokensJson optional) read on a worker:
    // on success the model is closed (model() is null), modelSpec() is the file,
    // attentionFileLoaded() then traceReady() follow; on failure the current model stays.
    void openAttentionFile(const QString& npy, const QString& tokensJson = QString());
    // Image models: one forward over a decoded image (Model::forwardImage) on a worker.
    void runImage(attnscope::RgbImage image);
    // Image–text models (CLIP, SigLIP): the image and the text (or ids) through both towers
    // (Model::forwardImageText) on a worker.
    void runImageText(attnscope::RgbImage image, const QString& text, bool asIds);
    // The image of the latest runImage or runImageText (the one whose trace arrives; older runs are dropped);
    // null before the first.
    std::shared_ptr<const attnscope::RgbImage> lastImage() const { return lastImage_; }
    // Shows a trace of the current model that was made elsewhere (a generation step,
    // prefixTrace): it becomes trace() and traceReady follows, as after a run.
    void showTrace(std::shared_ptr<const attnscope::Trace> trace);
    // Whether the current model splits text itself (else its input is token ids).
    bool hasTokenizer() const;
    // The model's tokenizer (Model::tokenizer) for readable output tokens, kept alive with the
    // model; null for built-in models and folders without one.
    std::shared_ptr<const attnscope::Tokenizer> tokenizer() const;
    // The folder or builtin:NAME the current model was opened from.
    QString modelSpec() const { return modelSpec_; }
    // How the next forwards keep the captured Q and K (RunOptions::captureDtype): the compute
    // dtype (default) or half precision, which halves the capture's memory (maps stay float32).
    void setCaptureDtype(attnscope::CaptureDtype dtype) { captureDtype_ = dtype; }
    attnscope::CaptureDtype captureDtype() const { return captureDtype_; }
    // Whether the next forwards record the value vectors (RunOptions::captureValues), which the
    // value-weighted and ALTI map sources read; off unless such a source is shown.
    void setCaptureValues(bool capture) { captureValues_ = capture; }
    bool captureValues() const { return captureValues_; }
    // Whether the next forwards record DeBERTa's score terms (RunOptions::scoreTerms), which the
    // score-* map sources read; off unless such a source is shown.
    void setCaptureTerms(bool capture) { captureTerms_ = capture; }
    bool captureTerms() const { return captureTerms_; }
    // Stops the running job; no signal other than busyChanged(false) follows for it.
    void cancel();
    // Blocks until every worker has returned (also superseded ones). For shutdown and tests.
    void waitForWorkers();

signals:
    void busyChanged(bool busy);
    // Thousandths of the current job's work done; -1 until the first report.
    void progress(int permille);
    // The same report in words, for the bar: "Running: layer 12 of 32 · 18 s left".
    void progressText(const QString& text);
    void modelLoaded(const attnscope::ModelInfo& info);
    void attentionFileLoaded(const QString& npy);
    void traceReady(std::shared_ptr<const attnscope::Trace> trace);
    void failed(const QString& message);

private:
    struct Outcome;
    // `what` and `unit` word progressText ("Running", "layer").
    template <typename Work>
    void startJob(Work work, const QString& what, const QString& unit);
    void finish(const Outcome& outcome);
    void setBusy(bool busy);
    // What the next forward records (capture dtype, values, score terms), without its progress.
    attnscope::RunOptions recording() const;

    JobTracker jobs_{this, modelRunPool()};
    bool busy_ = false;
    std::shared_ptr<const attnscope::Model> model_;
    std::shared_ptr<const attnscope::Trace> trace_;
    std::shared_ptr<const attnscope::RgbImage> lastImage_;
    QString modelSpec_;
    attnscope::CaptureDtype captureDtype_ = attnscope::CaptureDtype::Compute;
    bool captureValues_ = false;
    bool captureTerms_ = false;
};
