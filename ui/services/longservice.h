// LongService: the Long context tab's computations (issue 33) on the shared pools, for the GUI:
// the needle scan (analysis/needle.h), one run's generated rows over its context for a head (the
// run generated again with its own tokens through the key/value cache, then the rows pooled by
// Trace::pooledMap), the KV-eviction what-if (analysis/kv_eviction.h), and a prompt map's values
// and level of detail. Never computes anything itself: every number comes from core.
//
// Each kind has its own JobTracker, so a new request supersedes the previous one of its kind and
// the superseded job stops at its next progress tick. Results arrive on the GUI thread as
// signals; errors (core's one-line refusals) travel inside them as text.
#pragma once

#include "services/jobtracker.h"
#include "services/pools.h"

#include "attnscope/analysis/kv_eviction.h"
#include "attnscope/analysis/needle.h"
#include "attnscope/attention/trace.h"
#include "attnscope/models/model.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

// What the user typed for the scan: each piece as text (through the tokenizer, no special
// tokens) or as token ids when ids; an empty answer means the needle.
struct NeedleInput {
    QString haystack, needle, question, answer;
    bool ids = false;
    std::vector<int> lengths;
    std::vector<double> depths;
    int newTokens = 16;
};

enum class LongJob { Scan, Rows, Evict, Map };

struct ScanJobResult {
    attnscope::NeedleOptions options;  // the pieces as ids, without the progress callback
    attnscope::NeedleResult result;
    double ms = 0;
    QString error;
    bool cancelled = false;
};

// One run's generated rows (the queries that chose its tokens) over every key of its context.
struct RowsJobResult {
    int run = -1, layer = 0, head = 0;
    std::shared_ptr<const attnscope::Trace> trace;  // context + generated, as the scan ran it
    std::int64_t contextLength = 0;                 // p: row p − 1 + t chose generated[t]
    attnscope::HeadMap rows;                        // [generated, p + generated]
    QStringList rowLabels, keyLabels;               // "→ token" per row; the trace's tokens
    QString error;
};

struct EvictJobResult {
    attnscope::EvictionOptions options;     // without the progress callback
    attnscope::EvictionResult result;       // result.prompt: the prompt's trace, whose maps the policy scored
    QStringList tokensFull, tokensEvicted;  // readable generated tokens
    double ms = 0;
    QString error;
    bool cancelled = false;
};

// A map of a trace: its values, or (pool set) its level of detail for that request.
struct MapJobResult {
    std::shared_ptr<const attnscope::Trace> trace;
    int layer = 0, head = 0;
    bool pooled = false;
    attnscope::PoolRequest request;
    attnscope::HeadMap map;
    QString error;
};

class LongService : public QObject {
    Q_OBJECT
public:
    explicit LongService(QObject* parent = nullptr);
    ~LongService() override;

    // The scan (progress(Scan, permille) per run).
    void requestScan(std::shared_ptr<const attnscope::Model> model, const NeedleInput& input);
    // Run `run` of a scan's result, generated again with its own tokens (reusing `trace` when it
    // is that run's, e.g. another head of it), and the head's generated rows.
    void requestRows(std::shared_ptr<const attnscope::Model> model, const attnscope::NeedleOptions& options,
                     const attnscope::NeedleRun& run, int runIndex, int layer, int head,
                     std::shared_ptr<const attnscope::Trace> trace);
    // The what-if on the prompt's ids (progress(Evict, permille) per step).
    void requestEvict(std::shared_ptr<const attnscope::Model> model, std::vector<std::int64_t> prompt,
                      attnscope::EvictionOptions options);
    // Block 0's map of (layer, head): whole, or pooled for a level of detail.
    void requestMap(std::shared_ptr<const attnscope::Trace> trace, int layer, int head);
    void requestLevelOfDetail(std::shared_ptr<const attnscope::Trace> trace, int layer, int head,
                              const attnscope::PoolRequest& request);

    void cancel(LongJob job);
    void cancelAll();
    void waitForWorkers();
    bool isRunning(LongJob job) const;

signals:
    void progress(LongJob job, int permille);  // -1: busy without a fraction yet
    void scanReady(const ScanJobResult& result);
    void rowsReady(const RowsJobResult& result);
    void evictReady(const EvictJobResult& result);
    void mapReady(const MapJobResult& result);

private:
    JobTracker* tracker(LongJob job);
    // A progress callback for core that stops with the job and posts permille changes.
    attnscope::Progress reporter(LongJob job, const JobTracker::Stop& stop);

    JobTracker scanJobs_{this, modelRunPool()};
    JobTracker rowsJobs_{this, modelRunPool()};
    JobTracker evictJobs_{this, modelRunPool()};
    JobTracker mapJobs_{this, mapPool()};
    JobTracker lodJobs_{this, mapPool()};
};

// The kv head a query head reads its keys from (grouped-query attention: heads / kvHeads query
// heads share one), as the eviction's kept keys are indexed.
int kvHeadOf(int head, int heads, int kvHeads);

Q_DECLARE_METATYPE(LongJob)
Q_DECLARE_METATYPE(ScanJobResult)
Q_DECLARE_METATYPE(RowsJobResult)
Q_DECLARE_METATYPE(EvictJobResult)
Q_DECLARE_METATYPE(MapJobResult)
