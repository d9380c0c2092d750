// The one forward of the decoder-only families (decoder_model.h): loads the tensors the spec
// names (streamed layer by layer when the plan says so) and runs embeddings, the layers and the
// next-token head, with progress, cancel, the memory check and the capture.
#include "attnscope/runtime/error.h"
#include "decoder_model.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>
#include <limits>

namespace attnscope {

namespace {

using Spec = DecoderSpec;

at::Tensor normed(const Spec& s, const at::Tensor& x, const NormWeights& n) { return applyNorm(x, n, s.norm, s.eps); }

at::Tensor project(const Spec& s, const Linear& p, const at::Tensor& x) {
    return linearRows(x, p.weight, p.bias, s.conv1d);
}

NormWeights loadDecoderNorm(WeightStore& w, const Spec& s, const std::string& layer, const std::string& name,
                            std::int64_t size) {
    NormWeights n;
    n.on = !name.empty();
    if (!n.on || (s.norm == Spec::Norm::Layer && !s.affine)) return n;
    n.weight = w.get(layer + name + ".weight", {size});
    if (s.norm == Spec::Norm::Layer) {
        n.bias = w.get(layer + name + ".bias", {size});
    } else if (s.norm != Spec::Norm::Rms) {  // the float32 forms multiply in float32
        n.weight = s.norm == Spec::Norm::RmsPlusOne ? n.weight.to(at::kFloat) + 1.0 : n.weight.to(at::kFloat);
    }
    return n;
}

Linear loadDecoderLinear(WeightStore& w, const Spec& s, const std::string& name, std::int64_t out, std::int64_t in,
                         bool bias) {
    if (!s.conv1d) return w.linear(name, out, in, bias);
    return {w.get(name + ".weight", {in, out}), w.get(name + ".bias", {out})};  // Conv1D: always biased
}

DecoderLayer loadDecoderLayer(WeightStore& w, const Spec& s, const std::string& p, int l) {
    const DecoderNames& nm = s.names;
    const std::int64_t E = s.hidden, I = s.inner, H = s.heads, G = s.kvHeads, d = s.headDim;
    const auto norm = [&](const std::string& name, std::int64_t size) { return loadDecoderNorm(w, s, p, name, size); };
    const auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, bool bias) {
        return loadDecoderLinear(w, s, p + name, out, in, bias);
    };
    DecoderLayer L;
    L.in = norm(nm.inNorm, E);
    L.attnOut = norm(nm.attnOutNorm, E);
    L.ff = norm(nm.ffNorm, E);
    L.ffOut = norm(nm.ffOutNorm, E);
    if (s.qkNorm != Spec::QkNorm::None) {
        const bool flat = s.qkNorm == Spec::QkNorm::Flat;
        L.qNorm = norm(nm.qNorm, flat ? H * d : d);
        L.kNorm = norm(nm.kNorm, flat ? G * d : d);
    }
    if (s.qkv == Spec::Qkv::Separate) {
        L.q = linear(nm.q, H * d, E, s.qkvBias);
        L.k = linear(nm.k, G * d, E, s.qkvBias);
        L.v = linear(nm.v, G * d, E, s.qkvBias);
    } else {
        L.qkv = linear(nm.qkv, (H + 2 * G) * d, E, s.qkvBias);
    }
    L.o = linear(nm.o, E, H * d, s.oBias);
    if (s.moe.any() && s.moe.routed[static_cast<std::size_t>(l)]) {
        L.routed = true;
        L.moe = loadMoeLayer(w, p, s.moe, E);
        return L;
    }
    if (!s.gated) {
        L.up = linear(nm.up, I, E, s.mlpBias);
    } else if (!nm.gateUp.empty()) {
        L.gateUp = linear(nm.gateUp, 2 * I, E, s.mlpBias);
    } else {
        L.gate = linear(nm.gate, I, E, s.mlpBias);
        L.up = linear(nm.up, I, E, s.mlpBias);
    }
    L.down = linear(nm.down, E, I, s.mlpBias);
    return L;
}

// Layer l's queries [H, n, d], keys and values [G, n, d] from its normed input h [n, E].
void queryKeyValue(const Spec& s, int l, const DecoderLayer& L, const at::Tensor& h,
                   const std::vector<RopeTables>& tables, at::Tensor& q, at::Tensor& k, at::Tensor& v) {
    const std::int64_t n = h.size(0), H = s.heads, G = s.kvHeads, d = s.headDim;
    if (s.qkv == Spec::Qkv::Grouped) {  // [n, G, H/G + 2, d]: each group's queries, then its key and value
        const at::Tensor t = project(s, L.qkv, h).view({n, G, H / G + 2, d});
        auto heads = [](const at::Tensor& x) { return x.transpose(0, 1).contiguous(); };
        q = heads(t.narrow(2, 0, H / G).reshape({n, H, d}));  // query head g·(H/G) + i
        k = heads(t.select(2, H / G));
        v = heads(t.select(2, H / G + 1));
    } else {
        if (s.qkv == Spec::Qkv::Fused) {  // [q (H·d) | k (G·d) | v (G·d)]
            const at::Tensor qkv = project(s, L.qkv, h);
            q = qkv.narrow(1, 0, H * d);
            k = qkv.narrow(1, H * d, G * d);
            v = qkv.narrow(1, (H + G) * d, G * d);
        } else {
            q = project(s, L.q, h);
            k = project(s, L.k, h);
            v = project(s, L.v, h);
        }
        if (s.queryScale > 0) q = q * s.queryScale;
        if (s.qkNorm == Spec::QkNorm::Flat) {
            q = normed(s, q, L.qNorm);
            k = normed(s, k, L.kNorm);
        }
        if (s.clipQkv > 0) {
            q = q.clamp(-s.clipQkv, s.clipQkv);
            k = k.clamp(-s.clipQkv, s.clipQkv);
            v = v.clamp(-s.clipQkv, s.clipQkv);
        }
        q = splitHeads(q, H, d);
        k = splitHeads(k, G, d);
        v = splitHeads(v, G, d);
    }
    if (s.qkNorm == Spec::QkNorm::PerHead) {
        q = normed(s, q, L.qNorm);
        k = normed(s, k, L.kNorm);
    }
    if (s.qkFloat) {  // Hugging Face's float32 q·k (GPT-J's float32 sin/cos promote q and k)
        q = q.to(at::kFloat);
        k = k.to(at::kFloat);
    }
    if (!tables.empty()) {
        const RopeTables& rope = tables[static_cast<std::size_t>(s.ropeOf[l])];
        q = applyRope(q, rope);
        k = applyRope(k, rope);
    }
}

at::Tensor mlp(const Spec& s, const DecoderLayer& L, const at::Tensor& h, RouterRecord* router = nullptr) {
    if (L.routed) return moeForward(s.moe, L.moe, h, s.activation, router);
    if (s.moe.any()) recordDenseLayer(router);
    if (!s.gated) return project(s, L.down, activate(s.activation, project(s, L.up, h)));
    at::Tensor gate, up;
    if (L.gateUp.weight.defined()) {  // [gate | up]
        const at::Tensor both = project(s, L.gateUp, h);
        gate = both.narrow(1, 0, s.inner);
        up = both.narrow(1, s.inner, s.inner);
    } else {
        gate = project(s, L.gate, h);
        up = project(s, L.up, h);
    }
    return project(s, L.down, activate(s.activation, gate) * up);
}

// ALTI's inputs (attention/trace_impl.h): the residual the attention output is added to, b_O,
// and the norm between them and the stream (post-norm blocks; sandwich norms on the output).
void recordAltiInputs(const Spec& s, LayerCapture& c, const DecoderLayer& L, const at::Tensor& residual) {
    using N = AttentionResidual::Norm;
    const bool post = s.blocks == Spec::Blocks::Post, branch = !post && L.attnOut.on;
    const NormWeights& n = post ? L.in : L.attnOut;
    if (!post && !branch) return recordResidual(c, residual, L.o.bias);
    recordResidual(c, residual, L.o.bias, post ? N::Post : N::Branch, s.norm != Spec::Norm::Layer, n.weight, n.bias,
                   s.eps);
}

}  // namespace

DecoderModel::DecoderModel(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device,
                           const LoadOptions& options)
    : TextFamilyModel(std::move(spec), folder, device) {
    c10::InferenceMode guard;
    WeightStore w(folder, device);
    stream_ = w.plan(options.memoryLimitBytes, options.weights);
    const Spec& s = cfg_;
    const DecoderNames& nm = s.names;
    if (!nm.prefix.empty() && (!nm.prefixIfPresent || w.anyNameStartsWith(nm.prefix))) w.setPrefix(nm.prefix);
    const std::int64_t E = s.hidden, P = s.embedWidth > 0 ? s.embedWidth : E;
    const long long total = 2 + s.layers;
    embed_ = w.rows(nm.embed + ".weight", {s.vocab, P});
    if (s.positionKind == Spec::Positions::Learned)
        positions_ = w.get(nm.positions + ".weight", {s.positions + s.positionOffset, E});
    embedNorm_ = loadDecoderNorm(w, s, "", nm.embedNorm, E);
    if (P != E) {
        projectIn_ = w.get(nm.projectIn + ".weight", {E, P});
        projectOut_ = w.get(nm.projectOut + ".weight", {P, E});
    }
    reportProgress(options.progress, 1, total);
    for (int l = 0; l < s.layers; ++l) {
        layers_.push_back(loadDecoderLayer(w, s, nm.layer + std::to_string(l) + ".", l));
        reportProgress(options.progress, 2 + l, total);
    }
    finalNorm_ = loadDecoderNorm(w, s, "", nm.finalNorm, E);
    const bool tied = s.tied || (s.tiedIfNoHead && !w.has(nm.head + ".weight"));
    head_.weight = tied ? embed_ : w.rows(nm.head + ".weight", {s.vocab, P});
    if (s.headBias) head_.bias = w.get(nm.head + ".bias", {s.vocab});
    readout_ = makeDecoderReadout(finalNorm_, s.norm, s.eps, projectOut_, head_);
    reportProgress(options.progress, total, total);

    info_ = familyInfo(s.family, folder, w, device, s.layers, s.heads, s.kvHeads, s.headDim, s.hidden);
    info_.vocabSize = s.vocab;
    info_.maxPositions = s.positions;
    info_.notes = s.notes;
}

std::shared_ptr<const Trace> DecoderModel::runForward(const std::vector<std::int64_t>& ids,
                                                      const RunOptions& options) const {
    checkInput(ids, true);
    c10::InferenceMode guard;
    const std::int64_t n = static_cast<std::int64_t>(ids.size());
    requireForwardMemory(footprint(n), device_);
    checkKnockoutLayers(options.knockouts, cfg_.layers);
    const std::int64_t position = options.attributionPosition;  // DLA's parts there when >= 0
    if (position >= 0) checkDecomposable(cfg_, position, n);
    auto impl = newTrace(ids);
    BlockCapture capture;
    LayerHooks hooks;
    if (options.recordResiduals) hooks.resid = &impl->residuals;
    at::Tensor x = embedTokens(ids);
    if (position >= 0) {
        hooks.parts = &impl->parts;
        impl->parts.position = position;
        impl->parts.embed = residualRow(x, position);
    }
    RouterRecord router;
    if (cfg_.moe.any()) hooks.router = &router;
    x = runLayers(x, 0, ropeTablesFor(n), options, &capture, hooks, options.progress);
    if (position >= 0) {
        impl->parts.finalRowAsRun = x.narrow(0, position, 1);
        impl->parts.finalRow = residualRow(x, position);
    }
    if (options.recordResiduals || position >= 0) impl->readout = readout_;
    impl->nextTokenLogits = lastLogits(x);
    if (cfg_.moe.any()) impl->router = finishRouter(cfg_.moe, router, n);
    return finishTrace(std::move(impl), std::move(capture));
}

std::vector<RopeTables> DecoderModel::ropeTablesFor(std::int64_t n) const {
    std::vector<RopeTables> tables;
    for (const RopeSpec& r : cfg_.ropes) tables.push_back(ropeTables(r, n, device_));
    return tables;
}

void DecoderModel::checkInput(const std::vector<std::int64_t>& ids, bool whole) const {
    const bool limited = whole && cfg_.positions > 0;
    checkIds(ids, cfg_.vocab, limited ? cfg_.positions : std::numeric_limits<std::int64_t>::max());
}

ForwardFootprint DecoderModel::footprint(std::int64_t n) const {
    const Spec& s = cfg_;
    return {s.layers, s.heads, s.kvHeads, s.headDim, s.hidden, s.inner, n, n, computeElementSize(embed_)};
}

at::Tensor DecoderModel::runLayers(at::Tensor x, int from, const std::vector<RopeTables>& tables,
                                   const RunOptions& options, BlockCapture* capture, LayerHooks hooks,
                                   const Progress& progress) const {
    StreamPass pass(stream_, progress);
    for (int l = from; l < cfg_.layers; ++l) {
        pass.layer(l);
        if (hooks.resid) hooks.resid->push_back(x);
        if (hooks.cache) hooks.kv = &(*hooks.cache)[static_cast<std::size_t>(l)];
        DecoderLayer copy;
        if (hooks.aliasWeights) {
            copy = aliasedLayer(layers_[static_cast<std::size_t>(l)]);
            hooks.weights = &copy;
        }
        x = layer(l, x, tables, options, capture, hooks);
        if (hooks.retainGrad && x.requires_grad()) x.retain_grad();
        reportProgress(progress, l + 1, cfg_.layers);
    }
    if (hooks.resid) hooks.resid->push_back(x);
    return x;
}

std::vector<float> DecoderModel::lastLogits(const at::Tensor& x) const {
    at::Tensor last = normed(cfg_, x.narrow(0, x.size(0) - 1, 1), finalNorm_);
    if (projectOut_.defined()) last = at::mm(last, projectOut_.t());
    std::vector<float> logits = nextLogits(last, head_.weight, head_.bias);
    if (cfg_.finalSoftcap > 0)
        for (float& v : logits) v = static_cast<float>(cfg_.finalSoftcap * std::tanh(v / cfg_.finalSoftcap));
    return logits;
}

std::shared_ptr<const Trace> DecoderModel::finishTrace(std::unique_ptr<Trace::Impl> impl, BlockCapture capture) const {
    const Spec& s = cfg_;
    BlockInfo block = blockInfo("self", s.layers, s.heads, s.kvHeads, true, impl->displayTokens, impl->displayTokens);
    for (std::int64_t window : s.windows)
        if (window > 0) block.layerWindows = s.windows;
    impl->infos.push_back(std::move(block));
    impl->blocks.push_back(std::move(capture));
    return std::make_shared<const Trace>(std::move(impl));
}

at::Tensor DecoderModel::embedTokens(const std::vector<std::int64_t>& ids, std::int64_t start) const {
    const std::int64_t n = static_cast<std::int64_t>(ids.size());
    at::Tensor x = gatherRows(embed_, ids, device_);
    if (projectIn_.defined()) x = at::mm(x, projectIn_.t());
    if (positions_.defined()) x = x + positions_.narrow(0, cfg_.positionOffset + start, n);
    // Gemma's normalizer is a tensor in the compute dtype, so BF16 models multiply by the
    // rounded sqrt(hidden) (Hugging Face's GemmaModel).
    if (cfg_.embedScale) x = x * at::scalar_tensor(std::sqrt(static_cast<double>(cfg_.hidden)), x.options());
    return normed(cfg_, x, embedNorm_);
}

at::Tensor DecoderModel::layer(int l, at::Tensor x, const std::vector<RopeTables>& tables, const RunOptions& options,
                               BlockCapture* capture, const LayerHooks& hooks) const {
    const Spec& s = cfg_;
    const DecoderLayer& L = hooks.weights ? *hooks.weights : layers_[l];
    MaskSpec mask;
    mask.causal = true;
    mask.window = s.windows.empty() ? 0 : s.windows[static_cast<std::size_t>(l)];
    if (!options.knockouts.empty()) mask.blocked = knockoutCells(options.knockouts, l, x.size(0), mask, device_);
    ScoreSpec score = s.score;
    if (s.scoreByInverseLayer) score.scale /= static_cast<double>(l + 1);
    const at::Tensor h = s.blocks == Spec::Blocks::Post ? x : normed(s, x, L.in);
    at::Tensor q, k, v;
    queryKeyValue(s, l, L, h, tables, q, k, v);
    at::Tensor keys = k, values = v;  // a cached run: the cache's and these rows'
    if (hooks.kv) hooks.kv->extend(k, v, keys, values);
    LayerRun asked = layerRun(options, "self", l);
    asked.alphas = hooks.alphas;
    const at::Tensor context =
            patched(hooks.patch, l, LayerPatch::Site::Heads,
                    mergeHeads(hooks.kv && hooks.kv->kept.defined()
                                       ? attendKept(q, keys, values, mask, score, asked, hooks.kv->kept)
                                       : attendDot(q, keys, values, mask, score, asked)),
                    s.headDim);
    const at::Tensor attn = project(s, L.o, context);
    if (capture) {
        capture->layers.push_back(dotCapture(q, k, score, mask));
        if (options.captureValues) {  // Conv1D stores W_O as [H·d, E] already; streamed weights are reused per layer
            recordValues(capture->layers.back(), v, L.o.weight, !s.conv1d, stream_ != nullptr,
                         layerRun(options, "self", l).maskedHeads);
            recordAltiInputs(s, capture->layers.back(), L, s.residualAfterNorm ? h : x);
        }
    }
    if (hooks.parts) addAttentionParts(s, L.o, L.attnOut, context, attn, *hooks.parts);
    // What the attention and the MLP add (patchable, and recorded for patching and DLA), then the block's sum.
    const at::Tensor a = patched(hooks.patch, l, LayerPatch::Site::AttnOut, normed(s, attn, L.attnOut));
    const auto added = [&](at::Tensor m) {
        m = patched(hooks.patch, l, LayerPatch::Site::MlpOut, m);
        if (hooks.record) {
            for (const at::Tensor& t : {context, a, m})
                if (hooks.retainGrad && t.requires_grad()) t.retain_grad();
            hooks.record->context.push_back(context);
            hooks.record->attnAdded.push_back(a);
            hooks.record->mlpAdded.push_back(m);
        }
        if (hooks.parts) hooks.parts->mlp.push_back(residualRow(m, hooks.parts->position));
        return m;
    };
    switch (s.blocks) {
        case Spec::Blocks::Parallel: {
            const at::Tensor m = added(mlp(s, L, L.ff.on ? normed(s, x, L.ff) : h));
            return s.branchesFirst ? x + (m + a) : x + a + m;
        }
        case Spec::Blocks::Post: {
            x = normed(s, x + a, L.in);
            return normed(s, x + added(mlp(s, L, x)), L.ff);
        }
        case Spec::Blocks::Pre: break;
    }
    x = (s.residualAfterNorm ? h : x) + a;
    const at::Tensor h2 = normed(s, x, L.ff);
    const at::Tensor m = added(normed(s, mlp(s, L, h2, hooks.router), L.ffOut));
    return (s.residualAfterNorm ? h2 : x) + m;
}

std::shared_ptr<const Model> loadDecoder(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device,
                                         const LoadOptions& options) {
    if (spec.score.scale == 0) spec.score.scale = 1.0 / std::sqrt(static_cast<double>(spec.headDim));
    return std::make_shared<const DecoderModel>(folder, std::move(spec), device, options);
}

}  // namespace attnscope
