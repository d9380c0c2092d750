// The one forward of the decoder-only families (decoder_spec.h): loads the tensors the spec
// names (streamed layer by layer when the plan says so) and runs embeddings, the layers and the
// next-token head, with progress, cancel, the memory check and the capture.
#include "attnscope/runtime/error.h"
#include "decoder_readout.h"
#include "decoder_spec.h"
#include "gradient_runner.h"
#include "kv_cache.h"
#include "family_common.h"
#include "layer_runner.h"
#include "io/weights.h"
#include "runtime/memory.h"

#include <c10/core/InferenceMode.h>

#include <cmath>
#include <limits>

namespace attnscope {

namespace {

using Spec = DecoderSpec;

at::Tensor rowOf(const at::Tensor& x, std::int64_t position) {
    return x.narrow(0, position, 1).reshape({-1}).to(at::kCPU, at::kDouble);
}

// What a layer is asked to keep or change beyond its output (all optional): DLA's parts, the
// activations patching reads, and one patched activation.
struct DecoderLayer;
struct LayerHooks {
    ResidualParts* parts = nullptr;
    LayerActivations* record = nullptr;
    const LayerPatch* patch = nullptr;
    const DecoderLayer* weights = nullptr;  // the layer's weights when not the model's own (copies)
    bool retainGrad = false;                // recorded activations keep their gradients
    // Gradient sources: each layer's α is appended here (LayerRun::alphas).
    std::vector<at::Tensor>* alphas = nullptr;
    KvLayer* kv = nullptr;  // cached run: the layer's keys and values before these rows
    // For the loop over layers (runLayers): the residual entering each layer and the final one
    // appended here; each layer's keys and values cached here; the weights as aliases (autograd).
    std::vector<at::Tensor>* resid = nullptr;
    std::vector<KvLayer>* cache = nullptr;
    bool aliasWeights = false;
    RouterRecord* router = nullptr;  // mixture of experts: each layer's router rows (moe.h)
};

struct DecoderLayer {
    NormWeights in, attnOut, ff, ffOut, qNorm, kNorm;
    Linear q, k, v, qkv, o, gate, up, gateUp, down;
    bool routed = false;  // the MoE MLP (moe.h) instead of gate/up/down
    MoeLayer moe;
};

class DecoderModel final : public TextFamilyModel<DecoderSpec>,
                           public LayerRunner,
                           public GradientRunner,
                           public CachedDecoder {
public:
    DecoderModel(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device, const LoadOptions& options)
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
        embedNorm_ = loadNorm(w, "", nm.embedNorm, E);
        if (P != E) {
            projectIn_ = w.get(nm.projectIn + ".weight", {E, P});
            projectOut_ = w.get(nm.projectOut + ".weight", {P, E});
        }
        reportProgress(options.progress, 1, total);
        for (int l = 0; l < s.layers; ++l) {
            layers_.push_back(loadLayer(w, nm.layer + std::to_string(l) + ".", l));
            reportProgress(options.progress, 2 + l, total);
        }
        finalNorm_ = loadNorm(w, "", nm.finalNorm, E);
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

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkInput(ids, true);
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size());
        requireForwardMemory(footprint(n), device_);
        checkKnockoutLayers(options.knockouts, cfg_.layers);
        const bool parts = options.attributionPosition >= 0;
        if (parts) checkDecomposable(options.attributionPosition, n);
        auto impl = newTrace(ids);
        BlockCapture capture;
        LayerHooks hooks;
        if (options.recordResiduals) hooks.resid = &impl->residuals;
        at::Tensor x = embedTokens(ids);
        if (parts) {
            hooks.parts = &impl->parts;
            impl->parts.position = options.attributionPosition;
            impl->parts.embed = rowOf(x, options.attributionPosition);
        }
        RouterRecord router;
        if (cfg_.moe.any()) hooks.router = &router;
        x = runLayers(x, 0, ropeTablesFor(n), options, &capture, hooks, options.progress);
        if (parts) {
            impl->parts.finalRowAsRun = x.narrow(0, options.attributionPosition, 1);
            impl->parts.finalRow = rowOf(x, options.attributionPosition);
        }
        if (options.recordResiduals || parts) impl->readout = readout_;
        impl->nextTokenLogits = lastLogits(x);
        if (cfg_.moe.any()) impl->router = finishRouter(cfg_.moe, router, n);
        return finishTrace(std::move(impl), std::move(capture));
    }

    // ---- the key/value cache (kv_cache.h) ----
    std::string cacheRefusal(const RunOptions& run, std::int64_t prompt, std::int64_t capacity) const override {
        if (!run.knockouts.empty()) return "attention knockout blocks cells of the whole sequence's map";
        if (run.recordResiduals || run.attributionPosition >= 0) return "residuals and parts are recorded per forward";
        if (run.captureValues) return "the value sources' inputs (values, residuals, norms) are recorded per forward";
        if (cfg_.moe.any()) return "the routers' choices are recorded per forward";
        for (const RopeSpec& r : cfg_.ropes)
            if (r.frequenciesFor(prompt) != r.frequenciesFor(capacity))
                return "the rotary frequencies (" + r.type + " scaling) change with the sequence's length";
        return "";
    }

    void prepareSession(KvSession& session) const override {
        if (cfg_.positions > 0 && session.capacity() > cfg_.positions)
            throw Error("key/value cache: " + std::to_string(session.capacity()) + " positions exceed the model's " +
                        std::to_string(cfg_.positions));
        session.layers.assign(static_cast<std::size_t>(cfg_.layers), KvLayer{});
        for (KvLayer& layer : session.layers) layer.capacity = session.capacity();
        session.tables = ropeTablesFor(session.capacity());
    }

    // The rows of ids at positions session.length().. through every layer, each attending to the
    // cached keys and its own; the next-token logits after the last go into the session.
    void runCached(KvSession& session, const std::vector<std::int64_t>& ids) const override {
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
    std::shared_ptr<const Trace> cachedTrace(const KvSession& session) const override {
        auto impl = newTrace(session.ids());
        impl->nextTokenLogits = session.logits;
        return finishTrace(std::move(impl), joinCaptureRows(session.chunks, true));
    }

    LayerActivations runRecording(const std::vector<std::int64_t>& ids) const override {
        checkInput(ids, true);
        c10::InferenceMode guard;
        LayerActivations acts;
        LayerHooks hooks;
        hooks.record = &acts;
        hooks.resid = &acts.resid;
        runLayers(embedTokens(ids), 0, ropeTablesFor(static_cast<std::int64_t>(ids.size())), {}, nullptr, hooks);
        return acts;
    }

    at::Tensor runFrom(const std::vector<std::int64_t>& ids, int from, const at::Tensor& entering,
                       const LayerPatch& patch) const override {
        c10::InferenceMode guard;
        LayerHooks hooks;
        hooks.patch = &patch;
        return runLayers(entering, from, ropeTablesFor(static_cast<std::int64_t>(ids.size())), {}, nullptr, hooks);
    }

    LayerActivations runWithGradients(const std::vector<std::int64_t>& ids, std::int64_t position,
                                      const std::vector<std::int64_t>& tokens, LayerActivations& grads) const override {
        checkInput(ids, true);
        at::AutoGradMode enable(true);
        LayerActivations acts;
        LayerHooks hooks;
        hooks.record = &acts;
        hooks.resid = &acts.resid;
        hooks.retainGrad = hooks.aliasWeights = true;
        const at::Tensor x = runLayers(embedTokens(ids).detach().requires_grad_(true), 0,
                                       ropeTablesFor(static_cast<std::int64_t>(ids.size())), {}, nullptr, hooks);
        // LD from the final norm (an alias) and the two unembedding rows (index_select makes new tensors).
        const at::Tensor z = aliasedReadout()->logitsOf(x.narrow(0, position, 1), tokens).reshape({-1});
        const at::Tensor ld = tokens.size() > 1 ? z[0] - z[1] : z[0];
        ld.backward();
        using List = std::vector<at::Tensor>;
        const std::pair<List*, List*> lists[] = {{&acts.resid, &grads.resid},
                                                 {&acts.context, &grads.context},
                                                 {&acts.attnAdded, &grads.attnAdded},
                                                 {&acts.mlpAdded, &grads.mlpAdded}};
        for (const auto& [list, out] : lists)
            for (at::Tensor& t : *list) {
                out->push_back(t.grad().defined() ? t.grad() : at::zeros_like(t));
                t = t.detach();
            }
        return acts;
    }

    const Readout& finalReadout() const override { return *readout_; }

    std::string gradientRefusal() const override {
        return stream_ ? "this model streams its weights from the file, and the backward pass needs them held "
                         "(open it with --weights convert)"
                       : "";
    }
    bool hasOutputToExplain() const override { return true; }
    bool explainsClasses() const override { return false; }
    std::int64_t gradientTokens(const TextInput& text, const std::optional<RgbImage>&) const override {
        return static_cast<std::int64_t>(text.ids.size());
    }

    // The forward with autograd through the weights' aliases; the logits at the last position are
    // taken before any final soft-cap (issue 31's s).
    GradientRun runGradients(const TextInput& text, const std::optional<RgbImage>& image,
                             const RunOptions& options) const override {
        if (image) throw Error(cfg_.family + " takes token ids, not an image");
        requirePlainTokens(text, cfg_.family);
        checkInput(text.ids, true);
        checkKnockoutLayers(options.knockouts, cfg_.layers);
        at::AutoGradMode enable(true);
        GradientRun out;
        LayerHooks hooks;
        hooks.alphas = &out.alphas;
        hooks.aliasWeights = true;
        const std::int64_t n = static_cast<std::int64_t>(text.ids.size());
        const at::Tensor x = runLayers(embedTokens(text.ids).detach().requires_grad_(true), 0, ropeTablesFor(n),
                                       options, nullptr, hooks, options.progress);
        out.outputs = aliasedReadout()->logits(x.narrow(0, n - 1, 1)).reshape({-1});
        return out;
    }

    std::string patchingRefusal() const override {
        return stream_ ? "activation patching re-runs layers from held activations, but this model streams its "
                         "weights from the file (open it with --weights convert)"
                       : "";
    }

private:
    // The weights as ordinary tensors over the same memory (no copy), which autograd may save for
    // the backward pass: the loaded ones are inference tensors, which it may not. Valid while the
    // model lives; nothing writes through them.
    static at::Tensor alias(const at::Tensor& t) { return autogradAlias(t); }
    static NormWeights copyNorm(NormWeights n) {
        n.weight = alias(n.weight), n.bias = alias(n.bias);
        return n;
    }
    static DecoderLayer copyLayer(const DecoderLayer& L) {
        DecoderLayer c = L;
        for (NormWeights* n : {&c.in, &c.attnOut, &c.ff, &c.ffOut, &c.qNorm, &c.kNorm}) *n = copyNorm(*n);
        for (Linear* p : {&c.q, &c.k, &c.v, &c.qkv, &c.o, &c.gate, &c.up, &c.gateUp, &c.down}) *p = autogradAlias(*p);
        if (L.routed) c.moe = mapMoeLayer(L.moe, alias);
        return c;
    }

    std::vector<RopeTables> ropeTablesFor(std::int64_t n) const {
        std::vector<RopeTables> tables;
        for (const RopeSpec& r : cfg_.ropes) tables.push_back(ropeTables(r, n, device_));
        return tables;
    }

    // The ids against the vocabulary and, for a whole sequence, the positions.
    void checkInput(const std::vector<std::int64_t>& ids, bool whole) const {
        const bool limited = whole && cfg_.positions > 0;
        checkIds(ids, cfg_.vocab, limited ? cfg_.positions : std::numeric_limits<std::int64_t>::max());
    }

    // Working set of a forward over n positions (requireForwardMemory).
    ForwardFootprint footprint(std::int64_t n) const {
        const Spec& s = cfg_;
        return {s.layers, s.heads, s.kvHeads, s.headDim, s.hidden, s.inner, n, n, computeElementSize(embed_)};
    }

    // The final norm and unembedding over the weights' aliases (a backward pass through them).
    std::shared_ptr<const Readout> aliasedReadout() const {
        return makeDecoderReadout(copyNorm(finalNorm_), cfg_.norm, cfg_.eps, alias(projectOut_), autogradAlias(head_));
    }

    // Layers from..L-1 over x (the weights streamed in as each needs them), with the hooks;
    // progress after each layer.
    at::Tensor runLayers(at::Tensor x, int from, const std::vector<RopeTables>& tables, const RunOptions& options,
                         BlockCapture* capture, LayerHooks hooks, const Progress& progress = {}) const {
        StreamPass pass(stream_, progress);
        for (int l = from; l < cfg_.layers; ++l) {
            pass.layer(l);
            if (hooks.resid) hooks.resid->push_back(x);
            if (hooks.cache) hooks.kv = &(*hooks.cache)[static_cast<std::size_t>(l)];
            DecoderLayer copy;
            if (hooks.aliasWeights) {
                copy = copyLayer(layers_[static_cast<std::size_t>(l)]);
                hooks.weights = &copy;
            }
            x = layer(l, x, tables, options, capture, hooks);
            if (hooks.retainGrad && x.requires_grad()) x.retain_grad();
            reportProgress(progress, l + 1, cfg_.layers);
        }
        if (hooks.resid) hooks.resid->push_back(x);
        return x;
    }

    // t with the patched row (AttnOut / MlpOut at the patch's position) when `site` is patched in layer l.
    static at::Tensor patched(at::Tensor t, int l, const LayerHooks& hooks, LayerPatch::Site site) {
        if (!hooks.patch || hooks.patch->site != site || hooks.patch->layer != l) return t;
        t = t.clone();
        t.select(0, hooks.patch->position).copy_(hooks.patch->value);
        return t;
    }

    NormWeights loadNorm(WeightStore& w, const std::string& layer, const std::string& name, std::int64_t size) const {
        NormWeights n;
        n.on = !name.empty();
        if (!n.on || (cfg_.norm == Spec::Norm::Layer && !cfg_.affine)) return n;
        n.weight = w.get(layer + name + ".weight", {size});
        if (cfg_.norm == Spec::Norm::Layer) {
            n.bias = w.get(layer + name + ".bias", {size});
        } else if (cfg_.norm != Spec::Norm::Rms) {  // the float32 forms multiply in float32
            n.weight = cfg_.norm == Spec::Norm::RmsPlusOne ? n.weight.to(at::kFloat) + 1.0 : n.weight.to(at::kFloat);
        }
        return n;
    }

    Linear loadLinear(WeightStore& w, const std::string& name, std::int64_t out, std::int64_t in, bool bias) const {
        if (!cfg_.conv1d) return w.linear(name, out, in, bias);
        return {w.get(name + ".weight", {in, out}), w.get(name + ".bias", {out})};  // Conv1D: always biased
    }

    DecoderLayer loadLayer(WeightStore& w, const std::string& p, int l) const {
        const Spec& s = cfg_;
        const DecoderNames& nm = s.names;
        const std::int64_t E = s.hidden, I = s.inner, H = s.heads, G = s.kvHeads, d = s.headDim;
        DecoderLayer L;
        L.in = loadNorm(w, p, nm.inNorm, E);
        L.attnOut = loadNorm(w, p, nm.attnOutNorm, E);
        L.ff = loadNorm(w, p, nm.ffNorm, E);
        L.ffOut = loadNorm(w, p, nm.ffOutNorm, E);
        if (s.qkNorm != Spec::QkNorm::None) {
            const bool flat = s.qkNorm == Spec::QkNorm::Flat;
            L.qNorm = loadNorm(w, p, nm.qNorm, flat ? H * d : d);
            L.kNorm = loadNorm(w, p, nm.kNorm, flat ? G * d : d);
        }
        if (s.qkv == Spec::Qkv::Separate) {
            L.q = loadLinear(w, p + nm.q, H * d, E, s.qkvBias);
            L.k = loadLinear(w, p + nm.k, G * d, E, s.qkvBias);
            L.v = loadLinear(w, p + nm.v, G * d, E, s.qkvBias);
        } else {
            L.qkv = loadLinear(w, p + nm.qkv, (H + 2 * G) * d, E, s.qkvBias);
        }
        L.o = loadLinear(w, p + nm.o, E, H * d, s.oBias);
        if (s.moe.any() && s.moe.routed[static_cast<std::size_t>(l)]) {
            L.routed = true;
            L.moe = loadMoeLayer(w, p, s.moe, E);
            return L;
        }
        if (!s.gated) {
            L.up = loadLinear(w, p + nm.up, I, E, s.mlpBias);
        } else if (!nm.gateUp.empty()) {
            L.gateUp = loadLinear(w, p + nm.gateUp, 2 * I, E, s.mlpBias);
        } else {
            L.gate = loadLinear(w, p + nm.gate, I, E, s.mlpBias);
            L.up = loadLinear(w, p + nm.up, I, E, s.mlpBias);
        }
        L.down = loadLinear(w, p + nm.down, E, I, s.mlpBias);
        return L;
    }

    at::Tensor norm(const at::Tensor& x, const NormWeights& n) const { return applyNorm(x, n, cfg_.norm, cfg_.eps); }

    // The next-token logits after x's last row (x: the final residual, [n, hidden]).
    std::vector<float> lastLogits(const at::Tensor& x) const {
        at::Tensor last = norm(x.narrow(0, x.size(0) - 1, 1), finalNorm_);
        if (projectOut_.defined()) last = at::mm(last, projectOut_.t());
        std::vector<float> logits = nextLogits(last, head_.weight, head_.bias);
        if (cfg_.finalSoftcap > 0)
            for (float& v : logits) v = static_cast<float>(cfg_.finalSoftcap * std::tanh(v / cfg_.finalSoftcap));
        return logits;
    }

    // The Trace of impl's ids with the self-attention block's capture (and its windows).
    std::shared_ptr<const Trace> finishTrace(std::unique_ptr<Trace::Impl> impl, BlockCapture capture) const {
        const Spec& s = cfg_;
        BlockInfo block =
                blockInfo("self", s.layers, s.heads, s.kvHeads, true, impl->displayTokens, impl->displayTokens);
        for (std::int64_t window : s.windows)
            if (window > 0) block.layerWindows = s.windows;
        impl->infos.push_back(std::move(block));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

    // Direct logit attribution needs the final residual to be the sum of what the blocks add.
    void checkDecomposable(std::int64_t position, std::int64_t n) const {
        if (position >= n)
            throw Error("attribution position " + std::to_string(position) + " is outside the input (0.." +
                        std::to_string(n - 1) + ")");
        if (cfg_.blocks == Spec::Blocks::Post || cfg_.residualAfterNorm)
            throw Error(cfg_.family + " normalises its residual stream inside the blocks (post-norm), so the final "
                                      "residual is not a sum of the blocks' outputs: direct logit attribution is "
                                      "defined for pre-norm decoders");
    }

    // Layer l's attention parts at the attribution position: each head's output through its
    // columns of W_O and the output bias, after the block's post-attention norm where there is
    // one (linearised at the block's output there, so the parts still sum to what was added).
    void addAttentionParts(const DecoderLayer& L, const at::Tensor& context, const at::Tensor& attn,
                           ResidualParts& parts) const {
        const std::int64_t H = cfg_.heads, d = cfg_.headDim, E = cfg_.hidden, P = parts.position;
        const at::Tensor z = rowOf(context, P).view({H, d});
        const at::Tensor w = L.o.weight.to(at::kCPU, at::kDouble);
        at::Tensor heads = cfg_.conv1d ? at::einsum("hd,hde->he", {z, w.view({H, d, E})})
                                       : at::einsum("hd,ehd->he", {z, w.view({E, H, d})});
        at::Tensor bias = L.o.bias.defined() ? L.o.bias.to(at::kCPU, at::kDouble)
                                             : at::zeros({E}, at::TensorOptions().dtype(at::kDouble));
        if (L.attnOut.on) {
            const LinearNorm post = linearised(L.attnOut, cfg_.norm, cfg_.eps, rowOf(attn, P));
            heads = post.apply(heads);
            bias = post.apply(bias) + post.bias;
        }
        parts.heads.push_back(heads);
        parts.attnBias.push_back(bias);
    }

    // ALTI's inputs (attention/trace_impl.h): the residual the attention output is added to, b_O,
    // and the norm between them and the stream (post-norm blocks; sandwich norms on the output).
    void recordAltiInputs(LayerCapture& c, const DecoderLayer& L, const at::Tensor& residual) const {
        using N = AttentionResidual::Norm;
        const bool post = cfg_.blocks == Spec::Blocks::Post, branch = !post && L.attnOut.on;
        const NormWeights& n = post ? L.in : L.attnOut;
        if (!post && !branch) return recordResidual(c, residual, L.o.bias);
        recordResidual(c, residual, L.o.bias, post ? N::Post : N::Branch, cfg_.norm != Spec::Norm::Layer, n.weight,
                       n.bias, cfg_.eps);
    }

    at::Tensor run(const Linear& p, const at::Tensor& x) const { return linearRows(x, p.weight, p.bias, cfg_.conv1d); }

    // The embeddings of ids at positions start.. (learned positions from that row).
    at::Tensor embedTokens(const std::vector<std::int64_t>& ids, std::int64_t start = 0) const {
        const std::int64_t n = static_cast<std::int64_t>(ids.size());
        at::Tensor x = gatherRows(embed_, ids, device_);
        if (projectIn_.defined()) x = at::mm(x, projectIn_.t());
        if (positions_.defined()) x = x + positions_.narrow(0, cfg_.positionOffset + start, n);
        // Gemma's normalizer is a tensor in the compute dtype, so BF16 models multiply by the
        // rounded sqrt(hidden) (Hugging Face's GemmaModel).
        if (cfg_.embedScale) x = x * at::scalar_tensor(std::sqrt(static_cast<double>(cfg_.hidden)), x.options());
        return norm(x, embedNorm_);
    }

    // Layer l's queries [H, n, d], keys and values [G, n, d] from its normed input h [n, E].
    void queryKeyValue(int l, const DecoderLayer& L, const at::Tensor& h, const std::vector<RopeTables>& tables,
                       at::Tensor& q, at::Tensor& k, at::Tensor& v) const {
        const Spec& s = cfg_;
        const std::int64_t n = h.size(0), H = s.heads, G = s.kvHeads, d = s.headDim;
        if (s.qkv == Spec::Qkv::Grouped) {  // [n, G, H/G + 2, d]: each group's queries, then its key and value
            const at::Tensor t = run(L.qkv, h).view({n, G, H / G + 2, d});
            auto heads = [](const at::Tensor& x) { return x.transpose(0, 1).contiguous(); };
            q = heads(t.narrow(2, 0, H / G).reshape({n, H, d}));  // query head g·(H/G) + i
            k = heads(t.select(2, H / G));
            v = heads(t.select(2, H / G + 1));
        } else {
            if (s.qkv == Spec::Qkv::Fused) {  // [q (H·d) | k (G·d) | v (G·d)]
                const at::Tensor qkv = run(L.qkv, h);
                q = qkv.narrow(1, 0, H * d);
                k = qkv.narrow(1, H * d, G * d);
                v = qkv.narrow(1, (H + G) * d, G * d);
            } else {
                q = run(L.q, h);
                k = run(L.k, h);
                v = run(L.v, h);
            }
            if (s.queryScale > 0) q = q * s.queryScale;
            if (s.qkNorm == Spec::QkNorm::Flat) {
                q = norm(q, L.qNorm);
                k = norm(k, L.kNorm);
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
            q = norm(q, L.qNorm);
            k = norm(k, L.kNorm);
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

    at::Tensor mlp(const DecoderLayer& L, const at::Tensor& h, RouterRecord* router = nullptr) const {
        if (L.routed) return moeForward(cfg_.moe, L.moe, h, cfg_.activation, router);
        if (cfg_.moe.any()) recordDenseLayer(router);
        if (!cfg_.gated) return run(L.down, activate(cfg_.activation, run(L.up, h)));
        at::Tensor gate, up;
        if (L.gateUp.weight.defined()) {  // [gate | up]
            const at::Tensor both = run(L.gateUp, h);
            gate = both.narrow(1, 0, cfg_.inner);
            up = both.narrow(1, cfg_.inner, cfg_.inner);
        } else {
            gate = run(L.gate, h);
            up = run(L.up, h);
        }
        return run(L.down, activate(cfg_.activation, gate) * up);
    }

    at::Tensor layer(int l, at::Tensor x, const std::vector<RopeTables>& tables, const RunOptions& options,
                     BlockCapture* capture, const LayerHooks& hooks) const {
        const Spec& s = cfg_;
        const DecoderLayer& L = hooks.weights ? *hooks.weights : layers_[l];
        MaskSpec mask;
        mask.causal = true;
        mask.window = s.windows.empty() ? 0 : s.windows[static_cast<std::size_t>(l)];
        if (!options.knockouts.empty()) mask.blocked = knockoutCells(options.knockouts, l, x.size(0), mask, device_);
        ScoreSpec score = s.score;
        if (s.scoreByInverseLayer) score.scale /= static_cast<double>(l + 1);
        const at::Tensor h = s.blocks == Spec::Blocks::Post ? x : norm(x, L.in);
        at::Tensor q, k, v;
        queryKeyValue(l, L, h, tables, q, k, v);
        at::Tensor keys = k, values = v;  // a cached run: the cache's and these rows'
        if (hooks.kv) hooks.kv->extend(k, v, keys, values);
        LayerRun asked = layerRun(options, "self", l);
        asked.alphas = hooks.alphas;
        at::Tensor context = mergeHeads(hooks.kv && hooks.kv->kept.defined()
                                                ? attendKept(q, keys, values, mask, score, asked, hooks.kv->kept)
                                                : attendDot(q, keys, values, mask, score, asked));
        if (hooks.patch && hooks.patch->site == LayerPatch::Site::Heads && hooks.patch->layer == l) {
            context = context.clone();
            context.narrow(1, hooks.patch->head * s.headDim, s.headDim).copy_(hooks.patch->value);
        }
        const at::Tensor attn = run(L.o, context);
        if (capture) {
            capture->layers.push_back(dotCapture(q, k, score, mask));
            if (options.captureValues) {  // Conv1D stores W_O as [H·d, E] already; streamed weights are reused per
                                          // layer
                recordValues(capture->layers.back(), v, L.o.weight, !cfg_.conv1d, stream_ != nullptr,
                             layerRun(options, "self", l).maskedHeads);
                recordAltiInputs(capture->layers.back(), L, s.residualAfterNorm ? h : x);
            }
        }
        if (hooks.parts) addAttentionParts(L, context, attn, *hooks.parts);
        // What the attention and the MLP add (patchable), then the block's sum.
        const auto added = [&](const at::Tensor& a, const at::Tensor& m) {
            if (hooks.record) {
                for (const at::Tensor& t : {context, a, m})
                    if (hooks.retainGrad && t.requires_grad()) t.retain_grad();
                hooks.record->context.push_back(context);
                hooks.record->attnAdded.push_back(a);
                hooks.record->mlpAdded.push_back(m);
            }
            if (hooks.parts) hooks.parts->mlp.push_back(rowOf(m, hooks.parts->position));
        };
        switch (s.blocks) {
            case Spec::Blocks::Parallel: {
                const at::Tensor a = patched(attn, l, hooks, LayerPatch::Site::AttnOut);
                const at::Tensor m = patched(mlp(L, L.ff.on ? norm(x, L.ff) : h), l, hooks, LayerPatch::Site::MlpOut);
                added(a, m);
                return s.branchesFirst ? x + (m + a) : x + a + m;
            }
            case Spec::Blocks::Post: {
                const at::Tensor a = patched(attn, l, hooks, LayerPatch::Site::AttnOut);
                x = norm(x + a, L.in);
                const at::Tensor m = patched(mlp(L, x), l, hooks, LayerPatch::Site::MlpOut);
                added(a, m);
                return norm(x + m, L.ff);
            }
            case Spec::Blocks::Pre: break;
        }
        const at::Tensor a = patched(norm(attn, L.attnOut), l, hooks, LayerPatch::Site::AttnOut);
        x = (s.residualAfterNorm ? h : x) + a;
        const at::Tensor h2 = norm(x, L.ff);
        const at::Tensor m = patched(norm(mlp(L, h2, hooks.router), L.ffOut), l, hooks, LayerPatch::Site::MlpOut);
        added(a, m);
        return (s.residualAfterNorm ? h2 : x) + m;
    }

    at::Tensor embed_, positions_, projectIn_, projectOut_;
    NormWeights embedNorm_, finalNorm_;
    Linear head_;
    std::vector<DecoderLayer> layers_;
    std::shared_ptr<const Readout> readout_;
};

}  // namespace

std::shared_ptr<const Model> loadDecoder(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device,
                                         const LoadOptions& options) {
    if (spec.score.scale == 0) spec.score.scale = 1.0 / std::sqrt(static_cast<double>(spec.headDim));
    return std::make_shared<const DecoderModel>(folder, std::move(spec), device, options);
}

}  // namespace attnscope
