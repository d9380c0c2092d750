// ModernBERT (model_type "modernbert", Hugging Face's modeling_modernbert.py): a pre-norm encoder
// on the layer stack with rotary positions and no biases by default. Layer l attends globally
// when l % global_attn_every_n_layers == 0 and otherwise locally, query i seeing keys with
// |i − j| ≤ local_attention / 2; its rotary theta is that of its layer_types entry (full_attention:
// global_rope_theta, sliding_attention: local_rope_theta, or each type's rope_parameters). Layer 0
// has no attention norm; q, k, v are one Wqkv; the MLP is a GeGLU (Wi holds the activated half,
// then the gate); the embeddings and the output are normed. Heads: *ForSequenceClassification
// (head.dense, act, head.norm, classifier; on [CLS] or the mean of the real tokens) and
// *ForMaskedLM (the same head, then decoder, tied to the embeddings unless stored).
#include "attnscope/runtime/error.h"
#include "families.h"
#include "family_common.h"
#include "io/json_util.h"
#include "io/weights.h"
#include "layer_stack.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <map>

namespace attnscope {

namespace {

const StackNames kModernBertNames{
        "attn.", {"Wqkv", "", "", "Wo"}, "attn_norm", "", "", "mlp.Wi", "", "mlp.Wo", "mlp_norm", true, true, false};

constexpr int kPredictions = 5;  // TokenPredictions::k of the MLM head

struct ModernBertConfig {
    int vocab = 0, hidden = 0, inner = 0, layers = 0, heads = 0, positions = 0;
    int localAttention = 128, globalEvery = 3;
    double eps = 1e-5;
    bool normBias = false, attentionBias = false, mlpBias = false, decoderBias = true, classifierBias = false;
    bool tied = true;
    std::string activation, classifierActivation, pooling;
    std::vector<double> theta;  // per layer, from its layer type

    bool local(int layer) const { return layer % globalEvery != 0; }
};

// One layer type's rope theta: rope_parameters[type].rope_theta, else the legacy key, else the
// configuration's default. Only the "default" rope_type is the model's own.
double ropeTheta(const JsonConfig& c, const std::string& type, const char* legacy, double fallback) {
    const double given = c.positiveNumber(legacy, fallback);
    if (!c.has("rope_parameters")) return given;
    const nlohmann::json& all = c.json().at("rope_parameters");
    if (!all.is_object()) c.fail("rope_parameters", "must be an object, found " + jsonExcerpt(all));
    auto it = all.find(type);
    if (it == all.end() || it->is_null()) return given;
    const std::string key = "rope_parameters." + type;
    if (!it->is_object()) c.fail(key, "must be an object, found " + jsonExcerpt(*it));
    if (auto t = it->find("rope_type"); t != it->end() && *t != "default")
        c.fail(key + ".rope_type", jsonExcerpt(*t) + " is not supported (default)");
    auto theta = it->find("rope_theta");
    if (theta == it->end() || theta->is_null()) return given;
    if (!theta->is_number() || !(theta->get<double>() > 0))
        c.fail(key + ".rope_theta", "must be a positive number, found " + jsonExcerpt(*theta));
    return theta->get<double>();
}

// layer_types (one "full_attention" or "sliding_attention" per layer), else every n-th layer full.
std::vector<std::string> layerTypes(const JsonConfig& c, const ModernBertConfig& g) {
    std::vector<std::string> types;
    if (!c.has("layer_types")) {
        for (int l = 0; l < g.layers; ++l) types.push_back(g.local(l) ? "sliding_attention" : "full_attention");
        return types;
    }
    const nlohmann::json& list = c.json().at("layer_types");
    if (!list.is_array() || static_cast<int>(list.size()) != g.layers)
        c.fail("layer_types",
               "must list one type per layer (" + std::to_string(g.layers) + "), found " + jsonExcerpt(list));
    for (const auto& t : list) {
        if (t != "full_attention" && t != "sliding_attention")
            c.fail("layer_types", jsonExcerpt(t) + " is not supported (full_attention, sliding_attention)");
        types.push_back(t.get<std::string>());
    }
    return types;
}

ModernBertConfig parseModernBertConfig(const JsonConfig& c) {
    ModernBertConfig g;  // defaults: ModernBertConfig.__init__ (ModernBERT-base)
    g.vocab = c.optionalPositiveInt("vocab_size").value_or(50368);
    g.hidden = c.optionalPositiveInt("hidden_size").value_or(768);
    g.inner = c.optionalPositiveInt("intermediate_size").value_or(1152);
    g.layers = c.optionalPositiveInt("num_hidden_layers").value_or(22);
    g.heads = c.optionalPositiveInt("num_attention_heads").value_or(12);
    g.positions = c.optionalPositiveInt("max_position_embeddings").value_or(8192);
    g.localAttention = c.optionalPositiveInt("local_attention").value_or(128);
    g.globalEvery = c.optionalPositiveInt("global_attn_every_n_layers").value_or(3);
    g.eps = c.positiveNumber("norm_eps", 1e-5);
    g.normBias = c.boolean("norm_bias", false);
    g.attentionBias = c.boolean("attention_bias", false);
    g.mlpBias = c.boolean("mlp_bias", false);
    g.decoderBias = c.boolean("decoder_bias", true);
    g.classifierBias = c.boolean("classifier_bias", false);
    g.tied = c.boolean("tie_word_embeddings", true);
    g.activation = c.string("hidden_activation", "gelu");
    g.classifierActivation = c.string("classifier_activation", "gelu");
    g.pooling = c.string("classifier_pooling", "cls");
    requireKnown(c, "hidden_activation", g.activation, {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "silu"});
    requireKnown(c, "classifier_activation", g.classifierActivation,
                 {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "silu", "tanh"});
    requireKnown(c, "classifier_pooling", g.pooling, {"cls", "mean"});
    if (g.hidden % g.heads != 0)
        c.fail("num_attention_heads",
               "(" + std::to_string(g.heads) + ") must divide the hidden size (" + std::to_string(g.hidden) + ")");
    if ((g.hidden / g.heads) % 2 != 0)
        c.fail("num_attention_heads", "leaves an odd head width (" + std::to_string(g.hidden / g.heads) +
                                              "), which rotary positions cannot pair");
    if (c.has("rope_scaling")) c.fail("rope_scaling", "is not supported (ModernBERT's rotary is the default one)");
    const double global = ropeTheta(c, "full_attention", "global_rope_theta", 160000.0);
    const double local = ropeTheta(c, "sliding_attention", "local_rope_theta", 10000.0);
    for (const std::string& t : layerTypes(c, g)) g.theta.push_back(t == "full_attention" ? global : local);
    return g;
}

// classifier_pooling "mean": the head on the mean of the rows the padding mask keeps.
at::Tensor maskedMean(const ClassifierHead& head, const at::Tensor& x, const at::Tensor& rows) {
    if (!rows.defined()) return head(x.mean(0, true));
    return head(x.index_select(0, rows.to(x.device()).nonzero().reshape({-1})).mean(0, true));
}

class ModernBertModel final : public TextEncoder<ModernBertConfig> {
public:
    ModernBertModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                    const LoadOptions& options)
        : TextEncoder(parseModernBertConfig(config), folder, device) {
        spec_ = scaledStack(cfg_.hidden, cfg_.heads, cfg_.inner, cfg_.eps, cfg_.activation);
        spec_.preNorm = true;
        spec_.qkvBias = spec_.oBias = cfg_.attentionBias;
        spec_.ffBias = cfg_.mlpBias;
        spec_.normBias = cfg_.normBias;
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        if (w.anyNameStartsWith("model.")) w.setPrefix("model.");  // *ForMaskedLM, *ForSequenceClassification
        const std::int64_t E = cfg_.hidden;
        long long done = 0;
        auto step = [&] { reportProgress(options.progress, ++done, 2 + cfg_.layers); };
        word_ = w.get("embeddings.tok_embeddings.weight", {cfg_.vocab, E});
        embNorm_ = norm(w, "embeddings.norm");
        step();
        layers_ = loadStack(w, spec_, kModernBertNames, "layers.", cfg_.layers, step);
        final_ = norm(w, "final_norm");
        loadHeads(w, config);
        step();
        info_ = familyInfo("modernbert", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads,
                           cfg_.hidden / cfg_.heads, cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        info_.notes.push_back("attention: global every " + std::to_string(cfg_.globalEvery) +
                              " layers, the others local (|i - j| <= " + std::to_string(cfg_.localAttention / 2) + ")");
        if (decoder_.weight.defined()) info_.notes.push_back("output: the masked-LM head's top predictions");
    }

private:
    Norm norm(WeightStore& w, const std::string& name) const {
        return cfg_.normBias ? loadNorm(w, name, cfg_.hidden) : Norm{w.get(name + ".weight", {cfg_.hidden}), {}};
    }

    // The prediction head (head.dense, its activation, head.norm) under classifier or decoder.
    void loadHeads(WeightStore& w, const JsonConfig& config) {
        const std::int64_t E = cfg_.hidden;
        const auto classes = w.shape("classifier.weight");
        if (!w.has("head.dense.weight")) return;  // the bare encoder: its final states are the output
        head_.dense = w.linear("head.dense", E, E, cfg_.classifierBias);
        head_.activation = cfg_.classifierActivation;
        head_.denseNorm = norm(w, "head.norm");
        head_.normEps = cfg_.eps;
        if (classes && classes->size() == 2) {
            head_.out = w.linear("classifier", classes->front(), E);
            if (cfg_.pooling == "mean") head_.pool = maskedMean;
            classNames_ = classNames(config, classes->front());
            return;
        }
        const bool stored = w.has("decoder.weight") || !cfg_.tied;
        decoder_.weight = stored ? w.get("decoder.weight", {cfg_.vocab, E}) : word_;
        if (cfg_.decoderBias) decoder_.bias = w.get("decoder.bias", {cfg_.vocab});
    }

    // The MLM head over the final states `out` [n, E]: the top predictions of every position.
    void addOutputs(Trace::Impl& impl, const at::Tensor& out) const override {
        if (!decoder_.weight.defined()) return;
        ClassifierHead head = head_;
        head.out = decoder_;
        const at::Tensor logits = head(out).to(at::kFloat);  // [n, vocab]: the softmax is taken only at the top k
        const int k = static_cast<int>(std::min<std::int64_t>(kPredictions, cfg_.vocab));
        const auto top = logits.topk(k, -1);
        const at::Tensor p = (std::get<0>(top) - at::logsumexp(logits, -1, true)).exp().to(at::kCPU).contiguous();
        const at::Tensor i = std::get<1>(top).to(at::kCPU).contiguous();
        impl.tokenPredictions.k = k;
        impl.tokenPredictions.probabilities.assign(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
        impl.tokenPredictions.ids.assign(i.data_ptr<std::int64_t>(), i.data_ptr<std::int64_t>() + i.numel());
    }

    // The padding mask, each local layer's window on top of it, and each layer's rotary tables.
    StackPass stackPass(const TextInput& in) const override {
        StackPass pass;
        pass.mask = paddingMask(in, device_);
        const auto n = static_cast<std::int64_t>(in.ids.size()),
                   radius = static_cast<std::int64_t>(cfg_.localAttention / 2);
        MaskSpec local = pass.mask;
        if (n > radius + 1) {  // keys farther than the radius from the query: ModernBERT's sliding_window_mask
            const at::Tensor pos = at::arange(n, at::TensorOptions().dtype(at::kLong).device(device_));
            local.blocked = (pos.unsqueeze(1) - pos.unsqueeze(0)).abs().gt(radius);
        }
        const int d = static_cast<int>(cfg_.hidden / cfg_.heads);
        std::map<double, RopeTables> tables;  // one per theta
        for (int l = 0; l < cfg_.layers; ++l) {
            pass.layerMasks.push_back(cfg_.local(l) ? local : pass.mask);
            const double theta = cfg_.theta[static_cast<std::size_t>(l)];
            if (!tables.count(theta)) tables[theta] = ropeTables(plainRope(theta, d), n, device_);
            pass.rope.push_back(tables[theta]);
        }
        return pass;
    }

    at::Tensor embed(const TextInput& in) const override {
        return layerNorm(word_.index_select(0, idTensor(in.ids, device_)), embNorm_, cfg_.eps);
    }

    void checkInput(const TextInput& in) const override {
        checkIds(in.ids, cfg_.vocab, cfg_.positions);
        if (std::any_of(in.typeIds.begin(), in.typeIds.end(), [](auto t) { return t != 0; }))
            throw Error("modernbert models have no token types; give only ids");
        checkPaddingMask(in);
    }

    at::Tensor word_;
    Norm embNorm_;
    Linear decoder_;  // the MLM head's output [vocab, E] (and bias); undefined without that head
};

}  // namespace

std::shared_ptr<const Model> loadModernBert(const std::filesystem::path& folder, const JsonConfig& config,
                                            c10::Device device, const LoadOptions& options) {
    return std::make_shared<const ModernBertModel>(folder, config, device, options);
}

}  // namespace attnscope
