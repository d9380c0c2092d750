// BERT family encoders: BERT (model_type "bert"), RoBERTa ("roberta": positions offset by
// padding_idx + 1, counted over non-pad tokens) and DistilBERT ("distilbert": no token types,
// its own tensor names). Post-LN layers, GELU, bidirectional attention with a padding mask over
// keys. Weights nn.Linear [out, in], with or without the "bert." / "roberta." / "distilbert."
// prefix; legacy LayerNorm "gamma"/"beta" names are accepted.
#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "families.h"
#include "family_common.h"
#include "runtime/memory.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

// Where each tensor lives; BERT and RoBERTa share names, DistilBERT has its own.
struct Names {
    std::string word, position, type, embNorm, layer, q, k, v, o, attnNorm, inner, out, outNorm;
};

const Names kBertNames{"embeddings.word_embeddings",
                       "embeddings.position_embeddings",
                       "embeddings.token_type_embeddings",
                       "embeddings.LayerNorm",
                       "encoder.layer.",
                       "attention.self.query",
                       "attention.self.key",
                       "attention.self.value",
                       "attention.output.dense",
                       "attention.output.LayerNorm",
                       "intermediate.dense",
                       "output.dense",
                       "output.LayerNorm"};
const Names kDistilNames{"embeddings.word_embeddings",
                         "embeddings.position_embeddings",
                         "",
                         "embeddings.LayerNorm",
                         "transformer.layer.",
                         "attention.q_lin",
                         "attention.k_lin",
                         "attention.v_lin",
                         "attention.out_lin",
                         "sa_layer_norm",
                         "ffn.lin1",
                         "ffn.lin2",
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

BertConfig parseBertConfig(const JsonConfig& c) {
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
                c.fail("pad_token_id", "must be a token id in [0, vocab_size), found " + jsonExcerpt(v));
            g.pad = v.get<std::int64_t>();
        }
        if (g.usablePositions() < 1)
            c.fail("max_position_embeddings", "leaves no positions after RoBERTa's padding offset (pad_token_id + 1)");
    }
    const std::string heads = g.type == "distilbert" ? "n_heads" : "num_attention_heads";
    if (g.hidden % g.heads != 0)
        c.fail(heads,
               "(" + std::to_string(g.heads) + ") must divide the hidden size (" + std::to_string(g.hidden) + ")");
    requireKnown(c, g.type == "distilbert" ? "activation" : "hidden_act", g.activation,
                 {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"});
    return g;
}

struct BertLayer {
    AttentionWeights attn;
    Linear inner, out;
    Norm attnNorm, outNorm;
};

class BertModel final : public TextFamilyModel<BertConfig> {
public:
    BertModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options)
        : TextFamilyModel(parseBertConfig(config), folder, device),
          names_(cfg_.type == "distilbert" ? kDistilNames : kBertNames) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        const std::string prefix = cfg_.type + ".";
        if (w.anyNameStartsWith(prefix)) w.setPrefix(prefix);
        const std::int64_t E = cfg_.hidden, I = cfg_.inner;
        const long long total = 2 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        word_ = w.get(names_.word + ".weight", {cfg_.vocab, E});
        position_ = w.get(names_.position + ".weight", {cfg_.positions, E});
        if (!names_.type.empty()) type_ = w.get(names_.type + ".weight", {cfg_.typeVocab, E});
        embNorm_ = norm(w, names_.embNorm, E);
        step(1);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = names_.layer + std::to_string(l) + ".";
            BertLayer L;
            L.attn =
                    loadAttention(w, p, {names_.q.c_str(), names_.k.c_str(), names_.v.c_str(), names_.o.c_str()}, E, E);
            L.attnNorm = norm(w, p + names_.attnNorm, E);
            L.inner = w.linear(p + names_.inner, I, E);
            L.out = w.linear(p + names_.out, E, I);
            L.outNorm = norm(w, p + names_.outNorm, E);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        step(total);

        info_ = familyInfo(cfg_.type, folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.hidden / cfg_.heads,
                           cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.usablePositions();
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        TextInput in;
        in.ids = ids;
        return runForwardText(in, options);
    }

    std::shared_ptr<const Trace> runForwardText(const TextInput& in, const RunOptions& options) const override {
        checkIds(in.ids, cfg_.vocab, cfg_.usablePositions());
        const std::int64_t n = static_cast<std::int64_t>(in.ids.size()), E = cfg_.hidden, H = cfg_.heads, d = E / H;
        checkExtras(in);
        c10::InferenceMode guard;
        requireForwardMemory({cfg_.layers, H, H, d, E, cfg_.inner, n, n,
                              static_cast<std::int64_t>(c10::elementSize(word_.scalar_type()))},
                             device_);

        auto impl = newTrace(in.ids);
        BlockCapture capture;
        MaskSpec mask;
        if (std::find(in.attend.begin(), in.attend.end(), 0) != in.attend.end()) {
            std::vector<std::int64_t> allowed(in.attend.begin(), in.attend.end());
            mask.keyAllowed = idTensor(allowed, device_).ne(0);
        }

        at::Tensor idx = idTensor(in.ids, device_);
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
            x = x + type_.index_select(0, idTensor(types, device_));
        }
        x = layerNorm(x, embNorm_, cfg_.eps);
        ScoreSpec score;
        score.scale = 1.0 / std::sqrt(static_cast<double>(d));
        for (int l = 0; l < cfg_.layers; ++l) {
            const BertLayer& L = layers_[l];
            const at::Tensor attn =
                    attentionBlock(L.attn, x, x, H, d, score, mask, layerRun(options, "self", l), capture);
            x = layerNorm(x + attn, L.attnNorm, cfg_.eps);
            x = layerNorm(x + L.out(activate(cfg_.activation, L.inner(x))), L.outNorm, cfg_.eps);
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        // No task head: the last hidden states are the output interventions compare ([n, E] float32, CPU).
        recordFinalHidden(*impl, x);
        impl->infos.push_back(selfBlock(cfg_.layers, cfg_.heads, cfg_.heads, false, impl->displayTokens));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    static Norm norm(WeightStore& w, const std::string& name, std::int64_t E) {
        if (!w.has(name + ".weight") && w.has(name + ".gamma"))  // legacy TF-converted names
            return {w.get(name + ".gamma", {E}), w.get(name + ".beta", {E})};
        return loadNorm(w, name, E);
    }

    void checkExtras(const TextInput& in) const {
        const auto n = in.ids.size();
        if (!in.typeIds.empty()) {
            if (in.typeIds.size() != n)
                throw Error("token types: " + std::to_string(in.typeIds.size()) + " given for " + std::to_string(n) +
                            " tokens");
            if (!type_.defined()) throw Error(cfg_.type + " models have no token types; give only ids");
            for (std::size_t i = 0; i < n; ++i)
                if (in.typeIds[i] < 0 || in.typeIds[i] >= cfg_.typeVocab)
                    throw Error("token type " + std::to_string(in.typeIds[i]) + " at position " + std::to_string(i) +
                                " is outside [0, " + std::to_string(cfg_.typeVocab) + ")");
        }
        if (!in.attend.empty()) {
            if (in.attend.size() != n)
                throw Error("padding mask: " + std::to_string(in.attend.size()) + " values given for " +
                            std::to_string(n) + " tokens");
            for (std::size_t i = 0; i < n; ++i)
                if (in.attend[i] > 1)
                    throw Error("padding mask value at position " + std::to_string(i) + " must be 0 or 1");
            if (std::find(in.attend.begin(), in.attend.end(), 1) == in.attend.end())
                throw Error("padding mask: every token is padding; at least one must be a real token");
        }
    }

    Names names_;
    at::Tensor word_, position_, type_;
    Norm embNorm_;
    std::vector<BertLayer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadBert(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return std::make_shared<const BertModel>(folder, config, device, options);
}

}  // namespace attnscope
