// The layer stack the encoders (bert.cpp, modernbert.cpp, vit.cpp) and encoder-decoders (seq2seq.h: t5.cpp,
// bart.cpp) share: a StackSpec says what differs between them (norm placement and kind, biases,
// the logits scale, the activation), StackNames where each tensor lives, and runStack is the one
// loop: self-attention, cross-attention (decoders), feed-forward, each a residual sublayer.
#pragma once

#include "attnscope/runtime/error.h"
#include "family_common.h"
#include "gradient_runner.h"
#include "kv_cache.h"
#include "rope.h"

#include <c10/core/InferenceMode.h>

#include <functional>
#include <string>
#include <vector>

namespace attnscope {

struct StackSpec {
    std::int64_t hidden = 0, heads = 0, headDim = 0, ffn = 0;  // widths: E, H, d (H·d may differ from E), FFN
    bool preNorm = false;  // x + f(norm(x)) (ViT, T5, mBART) or norm(x + f(x)) (BERT, BART, Marian)
    bool rms = false;      // T5's RMS norms (weight only) instead of LayerNorm
    double eps = 1e-5;
    double scale = 1.0;  // every attention's logits scale (1/√d, or 1 for T5)
    bool qkvBias = true, oBias = true, ffBias = true;
    bool normBias = true;    // LayerNorms with a bias (ModernBERT's norm_bias: false)
    std::string activation;  // of the feed-forward (see activate)
};

// Heads of width hidden / heads, logits scaled by 1/√d, LayerNorms, all biases (BERT, ViT, BART).
StackSpec scaledStack(std::int64_t hidden, std::int64_t heads, std::int64_t ffn, double eps,
                      const std::string& activation);

// Tensor names under a layer's prefix. Attention names are prefix + self/cross + attention[i].
struct StackNames {
    std::string self;
    std::array<const char*, 4> attention;  // q, k, v, o
    std::string selfNorm;
    std::string cross, crossNorm;          // empty: no cross-attention (encoders)
    std::string inner, gate, out, ffNorm;  // gate empty: ungated, else act(inner x) · gate x
    // inner holds the activated rows then the gate's, stacked [2·FFN, E] (DINOv2's SwiGLU weights_in)
    bool fusedGate = false;
    // attention[0] holds q, k and v stacked [3·H·d, E] (ModernBERT's Wqkv); attention[1..2] unused
    bool fusedQkv = false;
    bool firstSelfNorm = true;  // false: layer 0 has no self-attention norm (ModernBERT's Identity)
};

// BertLayer's names (BERT, RoBERTa, DeBERTa) with the attention's own: attention.output.LayerNorm,
// intermediate.dense, output.dense and output.LayerNorm.
StackNames bertLayerNames(std::string self, std::array<const char*, 4> attention);

// One layer; selfNorm, crossNorm, ffNorm are the norms of the three sublayers (bias undefined when rms).
struct StackLayer {
    AttentionWeights self, cross;
    Norm selfNorm, crossNorm, ffNorm;
    Linear inner, gate, out;
    at::Tensor selfBias;  // this layer's own additive self-attention bias [H, n, n] (BEiT), added to the pass's
};

// Layers prefix + l + "." for l < count, calling step() after each.
std::vector<StackLayer> loadStack(WeightStore& weights, const StackSpec& spec, const StackNames& names,
                                  const std::string& prefix, int count, const std::function<void()>& step);

// prefix + names[0]: q, k and v stacked [3·inner, E] (views of one tensor), names[3]: o [E, inner].
AttentionWeights loadFusedAttention(WeightStore& weights, const std::string& prefix, std::array<const char*, 4> names,
                                    std::int64_t hidden, std::int64_t inner, bool qkvBias, bool oBias);

// What one pass adds to the spec.
struct StackPass {
    at::Tensor bias;  // additive self-attention bias [H, n, n] (T5's positions), or undefined
    MaskSpec mask;    // of the self-attention
    // Per layer, when not empty (ModernBERT's local and global layers): layer l's self-attention
    // mask instead of `mask`, and the rotary tables its q and k turn by (undefined cos: none).
    std::vector<MaskSpec> layerMasks;
    std::vector<RopeTables> rope;
    // When set: layer l's additive self-attention bias from its q and k (BlockExtras::bias;
    // DeBERTa's c2p and p2c), and what follows layer l's output given its input (DeBERTa's conv).
    std::function<at::Tensor(int layer, const at::Tensor& q, const at::Tensor& k)> layerBias;
    std::function<at::Tensor(int layer, const at::Tensor& input, const at::Tensor& output)> afterLayer;
    at::Tensor memory;              // encoder output [S, E] for the cross-attention; undefined: none
    std::string block = "self";     // RunOptions' name of the self-attention block ("cross" for cross)
    BlockCapture* cross = nullptr;  // the cross-attention's captures, with memory
    bool progress = false;          // report (layer, layers) after each layer
    // Gradient sources: each self-attention's α is appended here (LayerRun::alphas).
    std::vector<at::Tensor>* alphas = nullptr;
    // Cached decoding (kv_cache.h): x holds only the new rows; each layer's self-attention keys
    // and values before them are in (*cache)[l], and these rows' are appended. bias and mask then
    // describe the new rows against every key.
    std::vector<KvLayer>* cache = nullptr;
};

// Runs `layers` over x [n, E]; records the self-attention captures in `self`.
at::Tensor runStack(const StackSpec& spec, const std::vector<StackLayer>& layers, at::Tensor x, const StackPass& pass,
                    const RunOptions& options, BlockCapture& self);

// The spec's norm (LayerNorm or RMS) of x; x itself when the norm has no weight (none there).
at::Tensor stackNorm(const StackSpec& spec, const at::Tensor& x, const Norm& norm);

// A sequence or image classification head, as Hugging Face's *ForSequenceClassification and
// *ForImageClassification: out(act(dense(x))), or out(x) without dense, on the first position of
// the final states; with denseNorm, out(norm(act(dense(x)))) (ModernBERT's prediction head).
struct ClassifierHead {
    Linear dense, out;
    // The activation after dense: "tanh" (BERT's pooler, RoBERTa), "relu" (DistilBERT), or one of activate()'s
    std::string activation = "tanh";
    Norm denseNorm;  // after the activation, when its weight is defined (bias optional), with normEps
    double normEps = 1e-5;
    // A family's own pooling (DeiT's two heads, DINOv2's [CLS] and mean, BEiT's normed mean,
    // ModernBERT's masked mean): the class logits from this head, the final states [n, E] and the
    // rows kept; `extra` holds its own weights (aliased with the head's). Null: the first position.
    std::function<at::Tensor(const ClassifierHead&, const at::Tensor& states, const at::Tensor& rows)> pool;
    std::vector<at::Tensor> extra;
    at::Tensor operator()(const at::Tensor& x) const;
    // The class logits [1, labels] of the final states [n, E]; rows: the padding mask's [n] bool
    // of the rows kept (undefined: all).
    at::Tensor logits(const at::Tensor& states, const at::Tensor& rows = {}) const;
    // The same head over autogradAlias()es of its weights (gradient sources).
    ClassifierHead aliased() const;
};

// The classifier `name` [labels, inputs] when the checkpoint has it (2-D), else undefined.
Linear optionalClassifier(WeightStore& weights, const std::string& name, std::int64_t inputs);

// An encoder (BERT family, the image encoders of vision_encoder.h): its layers, final norm (weight undefined: none) and
// optional classifier head, the forward's outputs and the gradient sources' forward. The family embeds.
class EncoderStack : public GradientRunner {
public:
    bool hasOutputToExplain() const override { return head_.out.weight.defined(); }
    std::string gradientRefusal() const override { return ""; }
    bool explainsClasses() const override { return true; }
    std::vector<std::string> classLabels() const override { return classNames_; }
    // The gradient sources' forward (encoder_gradients.cpp): gradientInput's embedded input and
    // pass through the weights' aliases; the outputs are the class logits.
    GradientRun runGradients(const TextInput& text, const std::optional<RgbImage>& image,
                             const RunOptions& options) const override;

protected:
    // The head when the checkpoint has `out` [labels, E] (and `dense` [E, E] when named); its
    // classes from config.json's id2label.
    void loadHead(WeightStore& weights, const JsonConfig& config, const std::string& dense, const std::string& out,
                  const std::string& activation);
    // Runs the layers over the embedded input x [n, E] (after the memory check) into impl: the
    // class probabilities with a head, else the final hidden states; the block "self" over tokens.
    // Returns the final states [n, E] (after the final norm).
    at::Tensor runInto(Trace::Impl& impl, const at::Tensor& x, StackPass pass, const RunOptions& options,
                       const std::vector<std::string>& tokens) const;
    // The gradient sources' input, embedded under inference mode, and its pass into `pass`; throws
    // for the other kind of input and, through requireHead, without a head.
    virtual at::Tensor gradientInput(const TextInput& text, const std::optional<RgbImage>& image,
                                     StackPass& pass) const = 0;
    void requireHead(const std::string& family) const;

    StackSpec spec_;
    std::vector<StackLayer> layers_;
    Norm final_;
    ClassifierHead head_;
    std::vector<std::string> classNames_;
};

// A text encoder (bert.cpp, modernbert.cpp, deberta.cpp): the forward and the gradient sources' entry over
// what the family gives: checkInput, embed (the embedded input [n, E]), stackPass (the pass's
// masks and tables) and addOutputs (what it adds to the Trace from the final states [n, E]).
template <class Config>
class TextEncoder : public TextFamilyModel<Config>, public EncoderStack {
public:
    std::int64_t gradientTokens(const TextInput& text, const std::optional<RgbImage>&) const override {
        return static_cast<std::int64_t>(text.ids.size());
    }

    at::Tensor gradientInput(const TextInput& in, const std::optional<RgbImage>& image,
                             StackPass& pass) const override {
        if (image) throw Error(this->info().family + " takes token ids, not an image");
        requireHead(this->info().family);
        checkInput(in);
        at::Tensor x;
        {
            c10::InferenceMode guard;
            x = embed(in);
        }
        pass = stackPass(in);
        return x;
    }

protected:
    using TextFamilyModel<Config>::TextFamilyModel;

    virtual void checkInput(const TextInput& in) const = 0;
    virtual at::Tensor embed(const TextInput& in) const = 0;
    virtual StackPass stackPass(const TextInput& in) const = 0;
    // The pass of a forward that records into impl: stackPass, plus what the family records
    // beside the captures (DeBERTa's score terms).
    virtual StackPass tracePass(const TextInput& in, const RunOptions&, Trace::Impl&) const { return stackPass(in); }
    virtual void addOutputs(Trace::Impl&, const at::Tensor&) const {}

    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        TextInput in;
        in.ids = ids;
        return runForwardText(in, options);
    }

    std::shared_ptr<const Trace> runForwardText(const TextInput& in, const RunOptions& options) const override {
        checkInput(in);
        c10::InferenceMode guard;
        auto impl = this->newTrace(in.ids);
        addOutputs(*impl, runInto(*impl, embed(in), tracePass(in, options, *impl), options, impl->displayTokens));
        return std::make_shared<const Trace>(std::move(impl));
    }
};

}  // namespace attnscope
