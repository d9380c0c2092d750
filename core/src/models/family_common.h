// Pieces the model families (decoder_forward.cpp, bert.cpp, vit.cpp, t5.cpp, bart.cpp, builtin/models.cpp) share:
// progress and cancellation, ModelInfo's common fields, a text family's labels and tokenizer,
// block descriptions, and the small tensor steps every layer repeats (the layers themselves: layer_stack.h).
#pragma once

#include "attnscope/models/model.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "attention/trace_impl.h"
#include "io/weights.h"
#include "rope.h"
#include "tokenizer/vocab_labels.h"

#include <ATen/ATen.h>
#include <c10/core/Device.h>

#include <array>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>

namespace attnscope {

class JsonConfig;
struct KvLayer;
class WeightStore;
class WeightStream;

// Calls progress(done, total) when it is set; throws Cancelled when it asks to stop.
void reportProgress(const Progress& progress, long long done, long long total);

// ModelInfo with family, path, the attention shape (arguments in ModelInfo's field order) and
// what the loaded weights say: parameters, storage dtype, device.
ModelInfo familyInfo(const std::string& family, const std::filesystem::path& folder, const WeightStore& weights,
                     c10::Device device, int layers, int heads, int kvHeads, int headDim, int hidden);

// A text family's tokenizer (null when the folder has none) and vocabulary labels. The folder's
// tokenizer files are parsed once, here; the labels read the tokenizer's vocabulary.
class FamilyText {
public:
    FamilyText(const std::filesystem::path& folder, std::int64_t vocabSize);

    // Model::tokenizer: owned here, null when the folder has none.
    const Tokenizer* tokenizer() const { return tokenizer_.get(); }
    // Model::tokenLabels: raw vocabulary strings; throws for ids outside [0, vocabSize).
    std::vector<std::string> labels(const std::vector<std::int64_t>& ids) const;
    // Model::encodeText (see tokenizer/model_text.h).
    std::vector<std::int64_t> encode(const std::string& text, const ModelInfo& info) const;
    // A trace's ids, raw labels and readable labels.
    void label(Trace::Impl& impl, const std::vector<std::int64_t>& ids) const;

private:
    std::unique_ptr<Tokenizer> tokenizer_;  // before labels_, which points into it
    VocabLabels labels_;
    std::int64_t vocabSize_;
};

// Base of the text families (decoder_forward.cpp, bert.cpp): the parsed config (a type with
// `vocab`), the device, the folder's labels and tokenizer, ModelInfo (the family fills it), and
// the Model overrides that need only those. The config is parsed before the folder's vocabulary
// and tokenizer are read, and they before the family's weights.
template <class Config>
class TextFamilyModel : public Model {
public:
    const ModelInfo& info() const override { return info_; }

    std::vector<std::string> tokenLabels(const std::vector<std::int64_t>& ids) const override {
        return text_.labels(ids);
    }

    std::vector<std::int64_t> encodeText(const std::string& text) const override { return text_.encode(text, info_); }

    const Tokenizer* tokenizer() const override { return text_.tokenizer(); }

protected:
    TextFamilyModel(Config config, const std::filesystem::path& folder, c10::Device device)
        : cfg_(std::move(config)), device_(device), text_(folder, cfg_.vocab) {}

    // A trace of `ids`, labelled, on this model's device.
    std::unique_ptr<Trace::Impl> newTrace(const std::vector<std::int64_t>& ids) const {
        auto impl = std::make_unique<Trace::Impl>();
        text_.label(*impl, ids);
        impl->device = device_;
        return impl;
    }

    Config cfg_;
    c10::Device device_;
    FamilyText text_;
    ModelInfo info_;
    // WeightStore::plan's stream when the weights are streamed, else null. A family that plans
    // (instead of requireMemory) opens a StreamPass in its forward and calls layer(l) before layer
    // l, fetches its embedding and head with WeightStore::rows and uses them through gatherRows /
    // nextLogits.
    std::shared_ptr<WeightStream> stream_;
};

// Rows `ids` of an embedding table [vocab, E] on `device`, in the compute dtype: a streamed
// table (half precision on the CPU, or a quantised GGUF table) gathers the rows and converts only
// them.
at::Tensor gatherRows(const at::Tensor& table, const std::vector<std::int64_t>& ids, c10::Device device);
// Bytes per element of the compute dtype for a table from rows(): 4 for a streamed one.
std::int64_t computeElementSize(const at::Tensor& table);
// x Wᵀ (+ b) for x [n, in], W [out, in] (transposed: W stored [in, out], Conv1D). One row on the
// CPU goes through BLAS's matrix-vector product, which reads W once (a cached generation step);
// a one-row GEMM packs W first and took 2.7× as long here.
at::Tensor linearRows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {},
                      bool transposed = false);
// x Wᵀ (+ b) for a matrix from rows(): a half-precision W on the CPU is converted in chunks of
// rows into a reused buffer, so the whole of it never exists in float32.
at::Tensor rowsMatmul(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});
// Rows [begin, end) of a table from rows() as a tensor of numbers: a quantised GGUF table
// (io/weights.h's QuantisedTable) dequantised to float32, any other a view (stored dtype).
at::Tensor denseRows(const at::Tensor& table, std::int64_t begin, std::int64_t end);

// A block's description: "self" (a single-stack model, its tokens both queries and keys),
// "encoder", "decoder" or "cross".
BlockInfo blockInfo(const std::string& name, int layers, int heads, int kvHeads, bool causal,
                    std::vector<std::string> queries, std::vector<std::string> keys);

// A classification head's class names from config.json's id2label {"0": "cat", ...} in id order;
// absent ids are "LABEL_i" as in transformers. Fails id2label when it does not name `count` classes.
std::vector<std::string> classNames(const JsonConfig& config, std::int64_t count);

// A config token id (0 allowed, as T5's decoder start and Marian's end are); `fallback` when the
// key is absent or null (nullopt: required). Fails naming the key for anything but an integer >= 0.
std::optional<std::int64_t> configTokenId(const JsonConfig& config, const std::string& key,
                                          std::optional<std::int64_t> fallback);

// Throws unless `input` has no token types but 0 and no padding (the families without them).
void requirePlainTokens(const TextInput& input, const std::string& family);

// Throws unless `input`'s token types are absent or one per id inside [0, typeVocab); with
// typeVocab 0 (no type table) only zeros when zerosAllowed, and `noTypes` is the message.
void checkTokenTypes(const TextInput& input, std::int64_t typeVocab, bool zerosAllowed, const std::string& noTypes);

// Throws unless `input`'s padding mask (TextInput::attend) is empty, or one 0/1 per id with at
// least one 1 (the encoders that take one: BERT family, ModernBERT).
void checkPaddingMask(const TextInput& input);
// The padding mask over keys of `input` (keyAllowed; nothing when every token is real).
MaskSpec paddingMask(const TextInput& input, c10::Device device);

// ids as a 1-D long tensor on `device`.
at::Tensor idTensor(const std::vector<std::int64_t>& ids, c10::Device device);

// [n, count·d] -> [count, n, d], contiguous.
at::Tensor splitHeads(const at::Tensor& x, std::int64_t count, std::int64_t d);
// [count, n, d] -> [n, count·d].
at::Tensor mergeHeads(const at::Tensor& x);

// The feed-forward activations of config.json's hidden_act / activation_function: "silu" and
// "swish", "gelu" (erf), "relu", "quick_gelu" (x·σ(1.702x), CLIP), and every other accepted name
// is the tanh approximation.
at::Tensor activate(const std::string& name, const at::Tensor& x);
// Fails config key `key` unless `value` is one of `known`: "'value' is not supported (a, b, ...)".
void requireKnown(const JsonConfig& config, const std::string& key, const std::string& value,
                  std::initializer_list<const char*> known);

// One attention block of the encoders and encoder-decoders (bert, vit, t5, bart): queries from
// x [n, E], keys and values from kv [m, E] (x itself for self-attention), heads of width d, the
// logits as `score` says, `mask` over keys; records the layer's capture and returns o(context).
struct AttentionWeights {
    Linear q, k, v, o;
};
// prefix + names (q, k, v, o): q/k/v [inner, E], o [E, inner], biased or not.
AttentionWeights loadAttention(WeightStore& weights, const std::string& prefix, std::array<const char*, 4> names,
                               std::int64_t hidden, std::int64_t inner, bool qkvBias = true, bool oBias = true);
// What a layer adds inside its attention block: q and k turned by `rope`'s tables before the
// logits (ModernBERT), as the capture records them; `bias`(q, k) [H, n, m], added to the score's
// bias, from the layer's q [H, n, d] and k [H, m, d] (DeBERTa's disentangled terms); a `cache`
// (kv_cache.h) that the rows' keys and values are appended to and attended with (cached decoding;
// the capture keeps the new rows').
struct BlockExtras {
    const RopeTables* rope = nullptr;
    std::function<at::Tensor(const at::Tensor& q, const at::Tensor& k)> bias;
    KvLayer* cache = nullptr;
};
at::Tensor attentionBlock(const AttentionWeights& w, const at::Tensor& x, const at::Tensor& kv, std::int64_t heads,
                          std::int64_t d, const ScoreSpec& score, const MaskSpec& mask, const LayerRun& run,
                          BlockCapture& capture, const BlockExtras& extras = {});

// LayerNorm weight and bias.
struct Norm {
    at::Tensor weight, bias;
};
// name.weight and name.bias, each [size] (or the legacy name.gamma and name.beta).
Norm loadNorm(WeightStore& weights, const std::string& name, std::int64_t size);
at::Tensor layerNorm(const at::Tensor& x, const Norm& norm, double eps);

// RMSNorm: x / sqrt(mean(x²) + eps) with the statistics in float32, times `weight`: cast back to
// x's dtype before the product (Llama, T5), or the product in float32 and then cast
// (productInFloat: Gemma's and OLMo-2's norms, whose weight the caller gives in float32).
at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps, bool productInFloat = false);

// Next-token logits of the final hidden state `last` [1, E] through head [vocab, E] (and a bias
// [vocab], GPT-J's and Phi's lm_head), float32 on the CPU.
std::vector<float> nextLogits(const at::Tensor& last, const at::Tensor& head, const at::Tensor& bias = {});
// Records final hidden states [n, E] (any device and dtype) as the Trace's float32 CPU output.
void recordFinalHidden(Trace::Impl& impl, const at::Tensor& hidden);

// A weight as an ordinary tensor over the same memory (no copy), which autograd may save for a
// backward pass: loaded weights are inference tensors, which it may not. Valid while the model
// lives; nothing may write through it. Undefined stays undefined.
at::Tensor autogradAlias(const at::Tensor& weight);
Linear autogradAlias(const Linear& layer);
Norm autogradAlias(const Norm& norm);

}  // namespace attnscope
