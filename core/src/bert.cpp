// BERT family encoders: BERT (model_type "bert"), RoBERTa ("roberta": positions offset by
// padding_idx + 1, counted over non-pad tokens) and DistilBERT ("distilbert": no token types,
// its own tensor names). Post-LN layers, GELU, bidirectional attention with a padding mask over
// keys. Weights nn.Linear [out, in], with or without the "bert." / "roberta." / "distilbert."
// prefix; legacy LayerNorm "gamma"/"beta" names are accepted.
#include "attnscope/error.h"
#include "device.h"
#include "families.h"
#include "memory.h"
#include "tokenizer/model_text.h"
#include "trace_impl.h"
#include "vocab.h"
#include "weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

// Where each tensor lives; BERT and RoBERTa share names, DistilBERT has its own.
struct Names {
    std::string word, position, type, embNorm, layer, q, k, v, o, attnNorm, inner, out, outNorm;
};

const Names kBertNames{"embeddings.word_embeddings", "embeddings.position_embeddings",
                       "embeddings.token_type_embeddings", "embeddings.LayerNorm", "encoder.layer.",
                       "attention.self.query", "attention.self.key", "attention.self.value",
                       "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
                       "output.dense", "output.LayerNorm"};
const Names kDistilNames{"embeddings.word_embeddings", "embeddings.position_embeddings", "",
                         "embeddings.LayerNorm", "transformer.layer.", "attention.q_lin", "attention.k_lin",
                         "attention.v_lin", "attention.out_lin", "sa_layer_norm", "ffn.lin1", "ffn.lin2",
                         "output_layer_norm"};

struct BertConfig {
    std::string type;
    int vocab = 0, hidden = 0, layers = 0, heads = 0, inner = 0, positions = 0, typeVocab = 0;
    double eps = 1e-12;
    std::string activation;
    std::int64_t pad = 0;  // RoBERTa: padding_idx; positions start at pad + 1
    bool roberta = false;

    // Tokens one input may have: RoBERTa spends pad + 1 position slots before the first token.
    int usablePositions() const { return roberta ? positions - static_cast<int>(pad) - 1 : positions; }
};

BertConfig parseConfig(const JsonConfig& c) {
    BertConfig g;
    g.type = c.string("model_type");
    g.vocab = c.positiveInt("vocab_size");
    g.positions = c.positiveInt("max_position_embeddings");
    if (g.type == "distilbert") {
        g.hidden = c.positiveInt("dim");
        g.layers = c.positiveInt("n_layers");
        g.heads = c.positiveInt("n_heads");
        g.inner = c.positiveInt("hidden_dim");
        g.activation = c.string("activation", "gelu");
    } else {
        g.hidden = c.positiveInt("hidden_size");
        g.layers = c.positiveInt("num_hidden_layers");
        g.heads = c.positiveInt("num_attention_heads");
        g.inner = c.positiveInt("intermediate_size");
        g.activation = c.string("hidden_act", "gelu");
        g.typeVocab = c.optionalPositiveInt("type_vocab_size").value_or(2);
        g.eps = c.positiveNumber("layer_norm_eps", 1e-12);
        const std::string pe = c.string("position_embedding_type", "absolute");
        if (pe != "absolute") c.fail("position_embedding_type", "'" + pe + "' is not supported (absolute)");
    }
    g.roberta = g.type == "roberta";
    if (g.roberta) {
        g.pad = 1;
        if (c.has("pad_token_id")) {
            const auto& v = c.json().at("pad_token_id");
            if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= g.vocab)
                c.fail("pad_token_id", "must be a token id in [0, vocab_size), found " + v.dump());
            g.pad = v.get<std::int64_t>();
        }
        if (g.usablePositions() < 1)
            c.fail("max_position_embeddings", "leaves no positions after RoBERTa's padding offset (pad_token_id + 1)");
    }
    const std::string heads = g.type == "distilbert" ? "n_heads" : "num_attention_heads";
    if (g.hidden % g.heads != 0)
        c.fail(heads, "(" + std::to_string(g.heads) + ") must divide the hidden size (" + std::to_string(g.hidden) + ")");
    static const char* known[] = {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"};
    if (std::find(std::begin(known), std::end(known), g.activation) == std::end(known))
        c.fail(g.type == "distilbert" ? "activation" : "hidden_act",
               "'" + g.activation + "' is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu)");
    return g;
}

struct Norm {
    at::Tensor weight, bias;
};

struct Layer {
    Linear q, k, v, o, inner, out;
    Norm attnNorm, outNorm;
};

class BertModel final : public Model {
public:
    BertModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options)
        : cfg_(parseConfig(config)), names_(cfg_.type == "distilbert" ? kDistilNames : kBertNames), device_(device),
          vocab_(VocabLabels::fromFolder(folder)),
          tokenizer_(Tokenizer::fromFolder(folder)) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        const std::string prefix = cfg_.type + ".";
        if (w.anyNameStartsWith(prefix)) w.setPrefix(prefix);
        const std::int64_t E = cfg_.hidden, I = cfg_.inner;
        const long long total = 2 + cfg_.layers;
        auto step = [&](long long done) {
            if (options.progress && !options.progress(done, total)) throw Cancelled();
        };
        word_ = w.get(names_.word + ".weight", {cfg_.vocab, E});
        position_ = w.get(names_.position + ".weight", {cfg_.positions, E});
        if (!names_.type.empty()) type_ = w.get(names_.type + ".weight", {cfg_.typeVocab, E});
        embNorm_ = norm(w, names_.embNorm, E);
        step(1);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = names_.layer + std::to_string(l) + ".";
            Layer L;
            L.q = w.linear(p + names_.q, E, E);
            L.k = w.linear(p + names_.k, E, E);
            L.v = w.linear(p + names_.v, E, E);
            L.o = w.linear(p + names_.o, E, E);
            L.attnNorm = norm(w, p + names_.attnNorm, E);
            L.inner = w.linear(p + names_.inner, I, E);
            L.out = w.linear(p + names_.out, E, I);
            L.outNorm = norm(w, p + names_.outNorm, E);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        step(total);

        info_.family = cfg_.type;
        info_.path = folder;
        info_.layers = cfg_.layers;
        info_.heads = info_.kvHeads = cfg_.heads;
        info_.headDim = cfg_.hidden / cfg_.heads;
        info_.hidden = cfg_.hidden;
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.usablePositions();
        info_.parameters = w.parametersUsed();
        info_.dtype = w.storageDtype();
        info_.device = deviceName(device);
    }

    const ModelInfo& info() const override { return info_; }

    std::vector<std::string> tokenLabels(const std::vector<std::int64_t>& ids) const override {
        return vocab_.labels(ids, cfg_.vocab);
    }

    std::vector<std::int64_t> encodeText(const std::string& text) const override {
        return encodeModelText(tokenizer_.get(), text, info_);
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids, const RunOptions& options) const override {
        return runForwardText(TextInput{ids, {}, {}}, options);
    }

    std::shared_ptr<const Trace> runForwardText(const TextInput& in, const RunOptions& options) const override {
        checkIds(in.ids, cfg_.vocab, cfg_.usablePositions());
        const std::int64_t n = static_cast<std::int64_t>(in.ids.size()), E = cfg_.hidden, H = cfg_.heads, d = E / H;
        checkExtras(in);
        c10::InferenceMode guard;
        requireForwardMemory({cfg_.layers, H, H, d, E, cfg_.inner, n, n,
                              static_cast<std::int64_t>(c10::elementSize(word_.scalar_type()))},
                             device_);

        auto impl = std::make_unique<Trace::Impl>();
        impl->ids = in.ids;
        impl->tokens = tokenLabels(in.ids);
        impl->displayTokens = displayLabels(tokenizer_.get(), in.ids, impl->tokens);
        impl->device = device_;
        BlockInfo block;
        block.name = "self";
        block.layers = cfg_.layers;
        block.heads = block.kvHeads = cfg_.heads;
        block.causal = false;
        block.queryTokens = block.keyTokens = impl->displayTokens;
        BlockCapture capture;
        if (std::find(in.attend.begin(), in.attend.end(), 0) != in.attend.end()) {
            std::vector<std::int64_t> allowed(in.attend.begin(), in.attend.end());
            capture.mask.keyAllowed = at::tensor(at::ArrayRef<std::int64_t>(allowed), at::kLong).to(device_).ne(0);
        }

        at::Tensor idx = at::tensor(at::ArrayRef<std::int64_t>(in.ids), at::kLong).to(device_);
        at::Tensor positions;
        if (cfg_.roberta) {  // non-pad tokens count up from pad + 1; pad tokens sit at pad
            at::Tensor real = idx.ne(cfg_.pad).to(at::kLong);
            positions = at::cumsum(real, 0) * real + cfg_.pad;
        } else {
            positions = at::arange(n, at::TensorOptions().dtype(at::kLong).device(device_));
        }
        at::Tensor x = word_.index_select(0, idx) + position_.index_select(0, positions);
        if (type_.defined()) {
            std::vector<std::int64_t> types = in.typeIds.empty() ? std::vector<std::int64_t>(n, 0) : in.typeIds;
            x = x + type_.index_select(0, at::tensor(at::ArrayRef<std::int64_t>(types), at::kLong).to(device_));
        }
        x = layerNorm(x, embNorm_);
        const at::Tensor mask = additiveMask(capture.mask, n, n, x.options());
        const double scale = 1.0 / std::sqrt(static_cast<double>(d));
        for (int l = 0; l < cfg_.layers; ++l) {
            const Layer& L = layers_[l];
            auto heads = [&](const Linear& proj) { return proj(x).view({n, H, d}).transpose(0, 1).contiguous(); };
            at::Tensor q = heads(L.q), k = heads(L.k), v = heads(L.v);
            at::Tensor context = attendDot(q, k, v, mask, scale, layerRun(options, "self", l)).transpose(0, 1).reshape({n, E});
            x = layerNorm(x + L.o(context), L.attnNorm);
            x = layerNorm(x + L.out(activation(L.inner(x))), L.outNorm);
            capture.layers.push_back(LayerCapture{q, k, scale, AttentionKind::Dot, {}});
            if (options.progress && !options.progress(l + 1, cfg_.layers)) throw Cancelled();
        }
        impl->infos.push_back(std::move(block));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    static Norm norm(WeightStore& w, const std::string& name, std::int64_t E) {
        if (!w.has(name + ".weight") && w.has(name + ".gamma"))  // legacy TF-converted names
            return {w.get(name + ".gamma", {E}), w.get(name + ".beta", {E})};
        return {w.get(name + ".weight", {E}), w.get(name + ".bias", {E})};
    }

    at::Tensor layerNorm(const at::Tensor& x, const Norm& n) const {
        return at::layer_norm(x, {cfg_.hidden}, n.weight, n.bias, cfg_.eps);
    }

    at::Tensor activation(const at::Tensor& x) const {
        if (cfg_.activation == "gelu") return at::gelu(x);
        if (cfg_.activation == "relu") return at::relu(x);
        return at::gelu(x, "tanh");
    }

    void checkExtras(const TextInput& in) const {
        const auto n = in.ids.size();
        if (!in.typeIds.empty()) {
            if (in.typeIds.size() != n)
                throw Error("token types: " + std::to_string(in.typeIds.size()) + " given for " + std::to_string(n) + " tokens");
            if (!type_.defined()) throw Error(cfg_.type + " models have no token types; give only ids");
            for (std::size_t i = 0; i < n; ++i)
                if (in.typeIds[i] < 0 || in.typeIds[i] >= cfg_.typeVocab)
                    throw Error("token type " + std::to_string(in.typeIds[i]) + " at position " + std::to_string(i) +
                                " is outside [0, " + std::to_string(cfg_.typeVocab) + ")");
        }
        if (!in.attend.empty()) {
            if (in.attend.size() != n)
                throw Error("padding mask: " + std::to_string(in.attend.size()) + " values given for " + std::to_string(n) + " tokens");
            for (std::size_t i = 0; i < n; ++i)
                if (in.attend[i] > 1) throw Error("padding mask value at position " + std::to_string(i) + " must be 0 or 1");
            if (std::find(in.attend.begin(), in.attend.end(), 1) == in.attend.end())
                throw Error("padding mask: every token is padding; at least one must be a real token");
        }
    }

    BertConfig cfg_;
    Names names_;
    c10::Device device_;
    VocabLabels vocab_;
    std::unique_ptr<Tokenizer> tokenizer_;  // null when the folder has none
    ModelInfo info_;
    at::Tensor word_, position_, type_;
    Norm embNorm_;
    std::vector<Layer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadBert(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return std::make_shared<const BertModel>(folder, config, device, options);
}

}  // namespace attnscope
