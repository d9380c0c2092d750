// BERT family encoders: BERT (model_type "bert"), RoBERTa ("roberta": positions offset by
// padding_idx + 1, counted over non-pad tokens) and DistilBERT ("distilbert": no token types,
// its own tensor names). Post-LN layers, GELU, bidirectional attention with a padding mask over
// keys. Weights nn.Linear [out, in], with or without the "bert." / "roberta." / "distilbert."
// prefix; legacy LayerNorm "gamma"/"beta" names are accepted. A checkpoint of
// *ForSequenceClassification (classifier tensors present) outputs its classes, named by id2label.
#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "families.h"
#include "family_common.h"
#include "layer_stack.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

// Where the layers and token types live (the other embeddings have the same names in all three).
struct Names {
    std::string type, layer;
    StackNames stack;
};

const Names kBertNames{"embeddings.token_type_embeddings", "encoder.layer.",
                       bertLayerNames("", {"attention.self.query", "attention.self.key", "attention.self.value",
                                           "attention.output.dense"})};
const Names kDistilNames{"",
                         "transformer.layer.",
                         {"",
                          {"attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin"},
                          "sa_layer_norm",
                          "",
                          "",
                          "ffn.lin1",
                          "",
                          "ffn.lin2",
                          "output_layer_norm"}};

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
    // DistilBERT's keys for BERT's sizes and activation.
    struct Keys {
        const char *hidden, *layers, *heads, *inner, *activation;
    };
    const bool distil = g.type == "distilbert";
    const Keys k =
            distil ? Keys{"dim", "n_layers", "n_heads", "hidden_dim", "activation"}
                   : Keys{"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act"};
    g.hidden = c.positiveInt(k.hidden);
    g.layers = c.positiveInt(k.layers);
    g.heads = c.positiveInt(k.heads);
    g.inner = c.positiveInt(k.inner);
    g.activation = c.string(k.activation, "gelu");
    if (!distil) {
        g.typeVocab = c.optionalPositiveInt("type_vocab_size").value_or(2);
        g.eps = c.positiveNumber("layer_norm_eps", 1e-12);
        const std::string pe = c.string("position_embedding_type", "absolute");
        if (pe != "absolute") c.fail("position_embedding_type", "'" + pe + "' is not supported (absolute)");
    }
    g.roberta = g.type == "roberta";
    if (g.roberta) {
        g.pad = *configTokenId(c, "pad_token_id", 1);
        if (g.pad >= g.vocab) c.fail("pad_token_id", "must be below vocab_size (" + std::to_string(g.vocab) + ")");
        if (g.usablePositions() < 1)
            c.fail("max_position_embeddings", "leaves no positions after RoBERTa's padding offset (pad_token_id + 1)");
    }
    if (g.hidden % g.heads != 0)
        c.fail(k.heads,
               "(" + std::to_string(g.heads) + ") must divide the hidden size (" + std::to_string(g.hidden) + ")");
    requireKnown(c, k.activation, g.activation, {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"});
    return g;
}

class BertModel final : public TextEncoder<BertConfig> {
public:
    BertModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options)
        : TextEncoder(parseBertConfig(config), folder, device) {
        const Names& names = cfg_.type == "distilbert" ? kDistilNames : kBertNames;
        spec_ = scaledStack(cfg_.hidden, cfg_.heads, cfg_.inner, cfg_.eps, cfg_.activation);
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        const std::string prefix = cfg_.type + ".";
        if (w.anyNameStartsWith(prefix)) w.setPrefix(prefix);
        const std::int64_t E = cfg_.hidden;
        const long long total = 2 + cfg_.layers;
        long long done = 0;
        auto step = [&] { reportProgress(options.progress, ++done, total); };
        word_ = w.get("embeddings.word_embeddings.weight", {cfg_.vocab, E});
        position_ = w.get("embeddings.position_embeddings.weight", {cfg_.positions, E});
        if (!names.type.empty()) type_ = w.get(names.type + ".weight", {cfg_.typeVocab, E});
        embNorm_ = loadNorm(w, "embeddings.LayerNorm", E);
        step();
        layers_ = loadStack(w, spec_, names.stack, names.layer, cfg_.layers, step);
        // *ForSequenceClassification: BERT's pooler (dense, tanh) then classifier; RoBERTa's
        // classifier.dense, tanh, classifier.out_proj; DistilBERT's pre_classifier, ReLU, classifier.
        const bool distil = cfg_.type == "distilbert";
        loadHead(w, config,
                 cfg_.roberta ? "classifier.dense"
                 : distil     ? "pre_classifier"
                              : "pooler.dense",
                 cfg_.roberta ? "classifier.out_proj" : "classifier", distil ? "relu" : "tanh");
        step();

        info_ = familyInfo(cfg_.type, folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.hidden / cfg_.heads,
                           cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.usablePositions();
    }

private:
    // The padding mask over keys for a pass over `in`.
    StackPass stackPass(const TextInput& in) const override {
        StackPass pass;
        pass.mask = paddingMask(in, device_);
        return pass;
    }

    // Word, position and token-type embeddings, normed: [n, E].
    at::Tensor embed(const TextInput& in) const override {
        const std::int64_t n = static_cast<std::int64_t>(in.ids.size());
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
        return layerNorm(x, embNorm_, cfg_.eps);
    }

    // The ids, token types and padding mask of `in`.
    void checkInput(const TextInput& in) const override {
        checkIds(in.ids, cfg_.vocab, cfg_.usablePositions());
        checkTokenTypes(in, type_.defined() ? cfg_.typeVocab : 0, false,
                        cfg_.type + " models have no token types; give only ids");
        checkPaddingMask(in);
    }

    at::Tensor word_, position_, type_;
    Norm embNorm_;
};

}  // namespace

std::shared_ptr<const Model> loadBert(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return std::make_shared<const BertModel>(folder, config, device, options);
}

}  // namespace attnscope
