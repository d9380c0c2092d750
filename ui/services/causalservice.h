// CausalService: the Causal tab's computations (issue 32) on the shared pools, for the GUI: the
// clean run with its logit lens (analysis/logit_lens.h), direct logit attribution of that run,
// and activation patching on a clean/corrupt pair (analysis/patching.h). Never computes anything
// itself: every number comes from core.
//
// Each kind has its own JobTracker, so a new request supersedes the previous one of its kind and
// the superseded job stops at its next progress tick. Results arrive on the GUI thread as
// signals; errors (core's one-line refusals) travel inside them as text.
#pragma once

#include "figure/causalresults.h"
#include "services/jobtracker.h"
#include "services/pools.h"

#include "attnscope/analysis/logit_lens.h"
#include "attnscope/analysis/patching.h"
#include "attnscope/attention/trace.h"
#include "attnscope/models/model.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

// What the user typed: text through the model's tokenizer, or token ids when ids.
struct CausalInput {
    QString text;
    bool ids = false;
};

enum class CausalJob { Lens, Dla, Patch };

struct LensResult {
    std::shared_ptr<const attnscope::Trace> trace;  // recorded residuals and the attribution position
    std::int64_t position = 0;                      // P, resolved (the last position for -1)
    attnscope::LogitLens lens;                      // top kLensTopK
    QStringList topTexts;                           // readable text of lens.topIds, same order
    QString dlaRefusal;  // why the run kept no attribution parts (a post-norm decoder); "" when it did
    QString error;
};

struct DlaResult {
    std::shared_ptr<const attnscope::Trace> trace;
    std::int64_t token = 0;
    std::optional<std::int64_t> minus;
    attnscope::LogitAttribution dla;
    QString error;
};

struct PatchJobResult {
    attnscope::PatchRequest request;  // without its progress callback
    attnscope::PatchResult result;
    QStringList tokens;  // the clean input's readable tokens (the columns of [L, n] results)
    double ms = 0;
    QString error;
};

class CausalService : public QObject {
    Q_OBJECT
public:
    explicit CausalService(QObject* parent = nullptr);
    ~CausalService() override;

    // Runs the clean input with the residuals recorded and the attribution position P (-1: the
    // last), then its logit lens.
    void requestLens(std::shared_ptr<const attnscope::Model> model, const CausalInput& clean, std::int64_t position);
    // Direct logit attribution of logit(token) − logit(minus) on a lens run's trace.
    void requestDla(std::shared_ptr<const attnscope::Trace> trace, std::int64_t token,
                    std::optional<std::int64_t> minus);
    // Activation patching (request.progress is set here: progress(Patch, permille)).
    void requestPatch(std::shared_ptr<const attnscope::Model> model, const CausalInput& clean,
                      const CausalInput& corrupt, attnscope::PatchRequest request);

    void cancel(CausalJob job);
    void cancelAll();
    void waitForWorkers();
    bool isRunning(CausalJob job) const;

signals:
    void progress(CausalJob job, int permille);  // -1: busy without a fraction yet
    void lensReady(const LensResult& result);
    void dlaReady(const DlaResult& result);
    void patchReady(const PatchJobResult& result);

private:
    JobTracker lensJobs_{this, modelRunPool()};
    JobTracker dlaJobs_{this, mapPool()};
    JobTracker patchJobs_{this, modelRunPool()};
};

Q_DECLARE_METATYPE(CausalJob)
Q_DECLARE_METATYPE(LensResult)
Q_DECLARE_METATYPE(DlaResult)
Q_DECLARE_METATYPE(PatchJobResult)
