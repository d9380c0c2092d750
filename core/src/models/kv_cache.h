// A key/value cache for the decoder-only families (decoder_model.h): the prompt runs once,
// then each new position's forward computes only its own rows against the cached keys and
// values, and the Trace of the whole sequence is assembled from the rows each run captured (the
// maps one forward over the sequence gives). Generation (generation.cpp), the KV-eviction
// what-if and the needle scan use it; Model's public interface stays as it is (found with
// dynamic_cast, as layer_runner.h is). The encoder-decoders' greedy decoding (seq2seq.cpp) caches
// its decoder's self-attention with the same KvLayer and joins its rows with joinCaptureRows.
#pragma once

#include "attention/trace_impl.h"
#include "rope.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

class Model;
class CachedDecoder;

// One layer's cache: keys and values [G, capacity, d] as attention used them (after q/k norms and
// rotary, so a key keeps the position it was computed at), of which the first `length` are filled.
struct KvLayer {
    at::Tensor k, v;
    // Undefined, or [G, capacity] bool: the keys each kv head still sees (eviction); keys added
    // later are always seen.
    at::Tensor kept;
    std::int64_t length = 0;
    std::int64_t capacity = 0;
    // Appends k, v [G, t, d] (the buffers are made on the first call, in k's dtype and device) and
    // returns every key and value so far through keys / values ([G, length, d] views).
    void extend(const at::Tensor& k, const at::Tensor& v, at::Tensor& keys, at::Tensor& values);
};

// One block's capture of a whole sequence from the captures of the runs that made it (each
// layer's q [H, t, d] rows in order): q concatenated along the rows, and k (with values) too
// when keysGrow (self-attention: each run added its own keys), else the first run's (cross-
// attention: the same memory every run). Scores and masks are the first run's.
BlockCapture joinCaptureRows(const std::vector<BlockCapture>& chunks, bool keysGrow);

// Dot-product attention over the cache when kv heads keep different keys: attendDot per kv group
// with that group's `kept` [G, m] as its key mask (ALiBi slopes and masked heads taken per group).
// q [H, n, d], k / v [G, m, d] -> [H, n, dv].
at::Tensor attendKept(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                      const ScoreSpec& score, const LayerRun& run, const at::Tensor& kept);

// A cached run of one sequence. Not thread-safe; owns its cache; refers to the model, which must
// outlive it.
class KvSession {
public:
    KvSession(const CachedDecoder& model, RunOptions run, std::int64_t capacity);
    // Runs ids at the next positions (length() .. length() + ids.size() - 1) against every key
    // before them and returns the next-token logits after the last. The first call runs the
    // prompt (with run.progress per layer). Throws attnscope::Error past the capacity or for an
    // id outside the vocabulary.
    std::vector<float> append(const std::vector<std::int64_t>& ids);
    // The Trace of every position run so far: Q and K of each run concatenated (the maps a
    // forward over ids() gives; evicted keys are not shown in them), the last run's logits.
    std::shared_ptr<const Trace> trace() const;
    // Eviction: keep[l] [G, length()] bool, the keys kv head g of layer l still sees; later runs
    // see only those and the keys added after.
    void keepKeys(const std::vector<at::Tensor>& keep);
    // An independent copy (its own cache buffers; the captured rows shared, they are never
    // written): a what-if continues from the same prompt without running it again.
    std::unique_ptr<KvSession> clone() const;

    std::int64_t length() const { return static_cast<std::int64_t>(ids_.size()); }
    std::int64_t capacity() const { return capacity_; }
    const std::vector<std::int64_t>& ids() const { return ids_; }
    const RunOptions& run() const { return run_; }

    // For the model's cached forward (DecoderModel::runCached, at the end of kv_cache.cpp).
    std::vector<KvLayer> layers;
    std::vector<RopeTables> tables;    // rotary tables for positions 0 .. capacity - 1
    std::vector<BlockCapture> chunks;  // each run's capture: q [H, t, d], k [G, t, d] (new rows only)
    std::vector<float> logits;         // the last run's next-token logits

private:
    const CachedDecoder& model_;
    RunOptions run_;
    std::int64_t capacity_;
    std::vector<std::int64_t> ids_;
};

// Implemented by the models that cache (the decoder-only families).
class CachedDecoder {
public:
    virtual ~CachedDecoder() = default;
    // Why a cached run of `prompt` then up to `capacity` positions under `run` would not equal
    // forwards over the same ids ("" when it would): knockouts, recorded residuals or parts,
    // rotary frequencies that change with the length.
    virtual std::string cacheRefusal(const RunOptions& run, std::int64_t prompt, std::int64_t capacity) const = 0;

protected:
    friend class KvSession;
    virtual void prepareSession(KvSession& session) const = 0;  // fills layers and tables
    virtual void runCached(KvSession& session, const std::vector<std::int64_t>& ids) const = 0;
    virtual std::shared_ptr<const Trace> cachedTrace(const KvSession& session) const = 0;
};

// A session on `model` when it caches and cacheRefusal is empty, else nullptr (the caller runs
// full forwards).
std::unique_ptr<KvSession> startKvSession(const Model& model, const RunOptions& run, std::int64_t prompt,
                                          std::int64_t capacity);

// The dtype RunOptions::captureDtype keeps Q and K in, nullopt for the compute dtype (model.cpp).
std::optional<c10::ScalarType> captureTypeOf(const RunOptions& options);
// Throws unless the options' temperature is a finite number > 0 (model.cpp).
void checkRunOptions(const RunOptions& options);

}  // namespace attnscope
