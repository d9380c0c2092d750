// The one forward of the decoder-only families (decoder_spec.h): loads the tensors the spec
// names (streamed layer by layer when the plan says so) and runs embeddings, the layers and the
// next-token head, with progress, cancel, the memory check and the capture.
#include "decoder_spec.h"
#include "family_common.h"
#include "io/weights.h"
#include "runtime/memory.h"

#include <c10/core/InferenceMode.h>

#include <cmath>
#include <limits>

namespace attnscope {

namespace {

using Spec = DecoderSpec;

// A norm's tensors; `on` false where the layout has no norm (then it is the identity).
struct NormWeights {
    at::Tensor weight, bias;  // undefined for a LayerNorm without affine weights
    bool on = false;
};

struct DecoderLayer {
    NormWeights in, attnOut, ff, ffOut, qNorm, kNorm;
    Linear q, k, v, qkv, o, gate, up, gateUp, down;
};

class DecoderModel final : public TextFamilyModel<DecoderSpec> {
public:
    DecoderModel(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device, const LoadOptions& options)
        : TextFamilyModel(std::move(spec), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
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
            layers_.push_back(loadLayer(w, nm.layer + std::to_string(l) + "."));
            reportProgress(options.progress, 2 + l, total);
        }
        finalNorm_ = loadNorm(w, "", nm.finalNorm, E);
        const bool tied = s.tied || (s.tiedIfNoHead && !w.has(nm.head + ".weight"));
        head_.weight = tied ? embed_ : w.rows(nm.head + ".weight", {s.vocab, P});
        if (s.headBias) head_.bias = w.get(nm.head + ".bias", {s.vocab});
        reportProgress(options.progress, total, total);

        info_ = familyInfo(s.family, folder, w, device, s.layers, s.heads, s.kvHeads, s.headDim, s.hidden);
        info_.vocabSize = s.vocab;
        info_.maxPositions = s.positions;
        info_.notes = s.notes;
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        const Spec& s = cfg_;
        checkIds(ids, s.vocab, s.positions > 0 ? s.positions : std::numeric_limits<std::int64_t>::max());
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size());
        requireForwardMemory(
                {s.layers, s.heads, s.kvHeads, s.headDim, s.hidden, s.inner, n, n, computeElementSize(embed_)},
                device_);
        auto impl = newTrace(ids);
        BlockCapture capture;

        at::Tensor x = embedTokens(ids);
        std::vector<RopeTables> tables;
        for (const RopeSpec& r : s.ropes) tables.push_back(ropeTables(r, n, device_));
        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < s.layers; ++l) {
            pass.layer(l);
            x = layer(l, x, tables, options, capture);
            reportProgress(options.progress, l + 1, s.layers);
        }
        at::Tensor last = norm(x.narrow(0, n - 1, 1), finalNorm_);
        if (projectOut_.defined()) last = at::mm(last, projectOut_.t());
        std::vector<float> logits = nextLogits(last, head_.weight, head_.bias);
        if (s.finalSoftcap > 0)
            for (float& v : logits) v = static_cast<float>(s.finalSoftcap * std::tanh(v / s.finalSoftcap));
        impl->nextTokenLogits = std::move(logits);
        BlockInfo block =
                blockInfo("self", s.layers, s.heads, s.kvHeads, true, impl->displayTokens, impl->displayTokens);
        for (std::int64_t window : s.windows)
            if (window > 0) block.layerWindows = s.windows;
        impl->infos.push_back(std::move(block));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
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

    DecoderLayer loadLayer(WeightStore& w, const std::string& p) const {
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

    at::Tensor norm(const at::Tensor& x, const NormWeights& n) const {
        if (!n.on) return x;
        if (cfg_.norm == Spec::Norm::Layer) return at::layer_norm(x, {x.size(-1)}, n.weight, n.bias, cfg_.eps);
        return rmsNorm(x, n.weight, cfg_.eps, cfg_.norm != Spec::Norm::Rms);
    }

    at::Tensor run(const Linear& p, const at::Tensor& x) const {
        return cfg_.conv1d ? at::addmm(p.bias, x, p.weight) : p(x);
    }

    at::Tensor embedTokens(const std::vector<std::int64_t>& ids) const {
        const std::int64_t n = static_cast<std::int64_t>(ids.size());
        at::Tensor x = gatherRows(embed_, ids, device_);
        if (projectIn_.defined()) x = at::mm(x, projectIn_.t());
        if (positions_.defined()) x = x + positions_.narrow(0, cfg_.positionOffset, n);
        // Gemma's normalizer is a tensor in the compute dtype, so BF16 models multiply by the
        // rounded sqrt(hidden) (Hugging Face's GemmaModel).
        if (cfg_.embedScale) x = x * at::scalar_tensor(std::sqrt(static_cast<double>(cfg_.hidden)), x.options());
        return norm(x, embedNorm_);
    }

    // Layer l's queries [H, n, d], keys and values [G, n, d] from its normed input h [n, E].
    void queryKeyValue(int l, const at::Tensor& h, const std::vector<RopeTables>& tables, at::Tensor& q, at::Tensor& k,
                       at::Tensor& v) const {
        const Spec& s = cfg_;
        const DecoderLayer& L = layers_[l];
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

    at::Tensor mlp(const DecoderLayer& L, const at::Tensor& h) const {
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
                     BlockCapture& capture) const {
        const Spec& s = cfg_;
        const DecoderLayer& L = layers_[l];
        MaskSpec mask;
        mask.causal = true;
        mask.window = s.windows.empty() ? 0 : s.windows[static_cast<std::size_t>(l)];
        ScoreSpec score = s.score;
        if (s.scoreByInverseLayer) score.scale /= static_cast<double>(l + 1);
        const at::Tensor h = s.blocks == Spec::Blocks::Post ? x : norm(x, L.in);
        at::Tensor q, k, v;
        queryKeyValue(l, h, tables, q, k, v);
        const at::Tensor attn = run(L.o, mergeHeads(attendDot(q, k, v, mask, score, layerRun(options, "self", l))));
        capture.layers.push_back(dotCapture(q, k, score, mask));
        if (options.captureValues)  // Conv1D stores W_O as [H·d, E] already; streamed weights are reused per layer
            recordValues(capture.layers.back(), v, L.o.weight, !cfg_.conv1d, stream_ != nullptr,
                         layerRun(options, "self", l).maskedHeads);
        switch (s.blocks) {
            case Spec::Blocks::Parallel: {
                const at::Tensor m = mlp(L, L.ff.on ? norm(x, L.ff) : h);
                return s.branchesFirst ? x + (m + attn) : x + attn + m;
            }
            case Spec::Blocks::Post: x = norm(x + attn, L.in); return norm(x + mlp(L, x), L.ff);
            case Spec::Blocks::Pre: break;
        }
        x = (s.residualAfterNorm ? h : x) + norm(attn, L.attnOut);
        const at::Tensor h2 = norm(x, L.ff);
        return (s.residualAfterNorm ? h2 : x) + norm(mlp(L, h2), L.ffOut);
    }

    at::Tensor embed_, positions_, projectIn_, projectOut_;
    NormWeights embedNorm_, finalNorm_;
    Linear head_;
    std::vector<DecoderLayer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadDecoder(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device,
                                         const LoadOptions& options) {
    return std::make_shared<const DecoderModel>(folder, std::move(spec), device, options);
}

}  // namespace attnscope
