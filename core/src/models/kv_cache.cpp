#include "kv_cache.h"

#include "attnscope/models/model.h"
#include "decoder_model.h"
#include "attnscope/runtime/error.h"
#include "runtime/capture_type.h"
#include "runtime/torch_errors.h"

#include <c10/core/InferenceMode.h>

namespace attnscope {

void KvLayer::extend(const at::Tensor& newK, const at::Tensor& newV, at::Tensor& keys, at::Tensor& values) {
    const std::int64_t t = newK.size(1);
    if (!k.defined()) {  // one buffer for the whole run: no copy of the cache per step
        k = at::empty({newK.size(0), capacity, newK.size(2)}, newK.options());
        v = at::empty({newV.size(0), capacity, newV.size(2)}, newV.options());
    }
    if (length + t > capacity)
        throw Error("key/value cache: " + std::to_string(length + t) + " positions exceed its capacity of " +
                    std::to_string(capacity));
    k.narrow(1, length, t).copy_(newK);
    v.narrow(1, length, t).copy_(newV);
    length += t;
    keys = k.narrow(1, 0, length);
    values = v.narrow(1, 0, length);
}

BlockCapture joinCaptureRows(const std::vector<BlockCapture>& chunks, bool keysGrow) {
    BlockCapture out;
    if (chunks.empty()) return out;
    for (std::size_t l = 0; l < chunks.front().layers.size(); ++l) {
        LayerCapture c = chunks.front().layers[l];
        const auto joined = [&](at::Tensor LayerCapture::*part) {
            std::vector<at::Tensor> rows;
            for (const BlockCapture& chunk : chunks) rows.push_back(chunk.layers[l].*part);
            return rows.size() == 1 ? rows.front() : at::cat(rows, 1);
        };
        c.q = joined(&LayerCapture::q);
        if (keysGrow) {
            c.k = joined(&LayerCapture::k);
            if (c.values.defined()) c.values = joined(&LayerCapture::values);
        }
        out.layers.push_back(std::move(c));
    }
    return out;
}

at::Tensor attendKept(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                      const ScoreSpec& score, const LayerRun& run, const at::Tensor& kept) {
    const std::int64_t H = q.size(0), G = k.size(0), r = H / G, m = k.size(1);
    std::vector<at::Tensor> groups;
    for (std::int64_t g = 0; g < G; ++g) {
        MaskSpec gm = mask;
        gm.keyAllowed = kept.select(0, g).narrow(0, 0, m);
        ScoreSpec gs = score;
        if (!score.alibiSlopes.empty())
            gs.alibiSlopes.assign(score.alibiSlopes.begin() + g * r, score.alibiSlopes.begin() + (g + 1) * r);
        LayerRun gr = run;
        gr.maskedHeads.clear();
        for (int h : run.maskedHeads)
            if (h / r == g) gr.maskedHeads.push_back(static_cast<int>(h - g * r));
        groups.push_back(attendDot(q.narrow(0, g * r, r), k.narrow(0, g, 1), v.narrow(0, g, 1), gm, gs, gr));
    }
    return at::cat(groups, 0);
}

KvSession::KvSession(const CachedDecoder& model, RunOptions run, std::int64_t capacity)
    : model_(model), run_(std::move(run)), capacity_(capacity) {
    model_.prepareSession(*this);
}

std::vector<float> KvSession::append(const std::vector<std::int64_t>& ids) {
    if (ids.empty()) throw Error("key/value cache: nothing to append");
    if (length() + static_cast<std::int64_t>(ids.size()) > capacity_)
        throw Error("key/value cache: " + std::to_string(length() + static_cast<std::int64_t>(ids.size())) +
                    " positions exceed its capacity of " + std::to_string(capacity_));
    CaptureTypeScope capture(captureTypeOf(run_));
    translateTorchErrors("running the model on " + std::to_string(ids.size()) + " cached tokens",
                         [&] { model_.runCached(*this, ids); });
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    return logits;
}

std::shared_ptr<const Trace> KvSession::trace() const {
    if (ids_.empty()) throw Error("key/value cache: no position has run");
    auto trace = translateTorchErrors("assembling the cached trace", [&] { return model_.cachedTrace(*this); });
    auto& impl = const_cast<Trace::Impl&>(trace->impl());  // nothing else holds it yet
    for (std::size_t b = 0; b < impl.blocks.size(); ++b)
        for (std::size_t l = 0; l < impl.blocks[b].layers.size(); ++l)
            impl.blocks[b].layers[l].temperature = layerRun(run_, impl.infos[b].name, static_cast<int>(l)).temperature;
    return trace;
}

void KvSession::keepKeys(const std::vector<at::Tensor>& keep) {
    if (keep.size() != layers.size())
        throw Error("key/value cache: " + std::to_string(keep.size()) + " keep masks for " +
                    std::to_string(layers.size()) + " layers");
    c10::InferenceMode guard;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        KvLayer& layer = layers[l];
        const at::Tensor& mask = keep[l];
        if (!layer.k.defined() || mask.dim() != 2 || mask.size(0) != layer.k.size(0) || mask.size(1) != layer.length)
            throw Error("key/value cache: layer " + std::to_string(l) + "'s keep mask must be [kv heads, " +
                        std::to_string(layer.length) + "]");
        if (!layer.kept.defined())
            layer.kept = at::ones({layer.k.size(0), capacity_},
                                  at::TensorOptions().dtype(at::kBool).device(layer.k.device()));
        layer.kept.narrow(1, 0, layer.length).copy_(mask.to(layer.kept.device(), at::kBool));
    }
}

std::unique_ptr<KvSession> KvSession::clone() const {
    c10::InferenceMode guard;
    auto copy = std::unique_ptr<KvSession>(new KvSession(*this));
    for (KvLayer& layer : copy->layers)
        for (at::Tensor* t : {&layer.k, &layer.v, &layer.kept})
            if (t->defined()) *t = t->clone();
    return copy;
}

// ---- the decoder-only families' cached run (decoder_model.h) ----

std::string DecoderModel::cacheRefusal(const RunOptions& run, std::int64_t prompt, std::int64_t capacity) const {
    if (!run.knockouts.empty()) return "attention knockout blocks cells of the whole sequence's map";
    if (run.recordResiduals || run.attributionPosition >= 0) return "residuals and parts are recorded per forward";
    if (run.captureValues) return "the value sources' inputs (values, residuals, norms) are recorded per forward";
    if (cfg_.moe.any()) return "the routers' choices are recorded per forward";
    for (const RopeSpec& r : cfg_.ropes)
        if (r.frequenciesFor(prompt) != r.frequenciesFor(capacity))
            return "the rotary frequencies (" + r.type + " scaling) change with the sequence's length";
    return "";
}

void DecoderModel::prepareSession(KvSession& session) const {
    if (cfg_.positions > 0 && session.capacity() > cfg_.positions)
        throw Error("key/value cache: " + std::to_string(session.capacity()) + " positions exceed the model's " +
                    std::to_string(cfg_.positions));
    session.layers.assign(static_cast<std::size_t>(cfg_.layers), KvLayer{});
    for (KvLayer& layer : session.layers) layer.capacity = session.capacity();
    session.tables = ropeTablesFor(session.capacity());
}

// The rows of ids at positions session.length().. through every layer, each attending to the
// cached keys and its own; the next-token logits after the last go into the session.
void DecoderModel::runCached(KvSession& session, const std::vector<std::int64_t>& ids) const {
    checkInput(ids, false);
    c10::InferenceMode guard;
    const std::int64_t start = session.length(), t = static_cast<std::int64_t>(ids.size());
    if (start == 0) requireForwardMemory(footprint(session.capacity()), device_);
    std::vector<RopeTables> tables = session.tables;
    for (RopeTables& r : tables) r.cos = r.cos.narrow(0, start, t), r.sin = r.sin.narrow(0, start, t);
    BlockCapture capture;
    LayerHooks hooks;
    hooks.cache = &session.layers;
    const at::Tensor x = runLayers(embedTokens(ids, start), 0, tables, session.run(), &capture, hooks,
                                   start == 0 ? session.run().progress : Progress{});
    session.chunks.push_back(std::move(capture));
    session.logits = lastLogits(x);
}

// One forward's Trace from the runs' captures: each layer's Q and K rows (and values) in order.
std::shared_ptr<const Trace> DecoderModel::cachedTrace(const KvSession& session) const {
    auto impl = newTrace(session.ids());
    impl->nextTokenLogits = session.logits;
    return finishTrace(std::move(impl), joinCaptureRows(session.chunks, true));
}

std::unique_ptr<KvSession> startKvSession(const Model& model, const RunOptions& run, std::int64_t prompt,
                                          std::int64_t capacity) {
    const auto* cached = dynamic_cast<const CachedDecoder*>(&model);
    if (!cached || !cached->cacheRefusal(run, prompt, capacity).empty()) return nullptr;
    checkRunOptions(run);
    return std::make_unique<KvSession>(*cached, run, capacity);
}

}  // namespace attnscope
