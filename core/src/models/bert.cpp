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
#include "gradient_runner.h"
#include "layer_stack.h"
#include "runtime/memory.h"
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

const Names kBertNames{
        "embeddings.token_type_embeddings",
        "encoder.layer.",
        {"",
         {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"},
         "attention.output.LayerNorm",
         "",
         "",
         "intermediate.dense",
         "",
         "output.dense",
         "output.LayerNorm"}};
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

// The sequence classification heads on the first token's final state, as Hugging Face's
// *ForSequenceClassification: BERT's pooler (dense, tanh) then classifier; RoBERTa's
// classifier.dense, tanh, classifier.out_proj; DistilBERT's pre_classifier, ReLU, classifier.
struct ClassifierHead {
    Linear dense, out;
    bool relu = false;
    bool defined() const { return out.weight.defined(); }
    at::Tensor operator()(const at::Tensor& first) const {
        const at::Tensor h = dense(first);
        return out(relu ? at::relu(h) : at::tanh(h));
    }
};

class BertModel final : public TextFamilyModel<BertConfig>, public GradientRunner {
public:
    BertModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options)
        : TextFamilyModel(parseBertConfig(config), folder, device),
          names_(cfg_.type == "distilbert" ? kDistilNames : kBertNames),
          spec_(scaledStack(cfg_.hidden, cfg_.heads, cfg_.inner, cfg_.eps, cfg_.activation)) {
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
        if (!names_.type.empty()) type_ = w.get(names_.type + ".weight", {cfg_.typeVocab, E});
        embNorm_ = loadNorm(w, "embeddings.LayerNorm", E);
        step();
        layers_ = loadStack(w, spec_, names_.stack, names_.layer, cfg_.layers, step);
        loadHead(w, config);
        step();

        info_ = familyInfo(cfg_.type, folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.hidden / cfg_.heads,
                           cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.usablePositions();
    }

    bool hasOutputToExplain() const override { return head_.defined(); }
    std::string gradientRefusal() const override { return ""; }
    bool explainsClasses() const override { return true; }
    std::vector<std::string> classLabels() const override { return classNames_; }
    std::int64_t gradientTokens(const TextInput& text, const std::optional<RgbImage>&) const override {
        return static_cast<std::int64_t>(text.ids.size());
    }

    // The forward with autograd through the weights' aliases; outputs are the class logits.
    GradientRun runGradients(const TextInput& in, const std::optional<RgbImage>& image,
                             const RunOptions& options) const override {
        if (image) throw Error(cfg_.type + " takes token ids, not an image");
        if (!head_.defined()) throw Error("this " + cfg_.type + " model has no classification head");
        checkIds(in.ids, cfg_.vocab, cfg_.usablePositions());
        checkExtras(in);
        at::Tensor x;
        {
            c10::InferenceMode guard;
            x = embed(in);
        }
        at::AutoGradMode enable(true);
        x = x.clone().requires_grad_(true);  // an ordinary tensor: autograd may not keep inference ones
        GradientRun out;
        StackPass pass = stackPass(in);
        pass.alphas = &out.alphas;
        BlockCapture capture;
        x = runStack(spec_, aliasStack(layers_), x, pass, options, capture);
        const auto alias = [](const Linear& p) { return Linear{autogradAlias(p.weight), autogradAlias(p.bias)}; };
        const ClassifierHead head{alias(head_.dense), alias(head_.out), head_.relu};
        out.outputs = head(x.narrow(0, 0, 1)).reshape({-1}).to(at::kFloat);
        return out;
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
        at::Tensor x = runStack(spec_, layers_, embed(in), stackPass(in), options, capture);
        if (head_.defined()) {
            const at::Tensor probs =
                    at::softmax(head_(x.narrow(0, 0, 1)).to(at::kFloat), -1).reshape({-1}).to(at::kCPU).contiguous();
            impl->classLabels = classNames_;
            impl->classProbabilities.assign(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
        } else {  // no task head: the last hidden states are the output interventions compare ([n, E] float32, CPU)
            recordFinalHidden(*impl, x);
        }
        impl->infos.push_back(blockInfo("self", cfg_.layers, cfg_.heads, cfg_.heads, false, impl->displayTokens,
                                        impl->displayTokens));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    // The padding mask over keys (and progress per layer) for a pass over `in`.
    StackPass stackPass(const TextInput& in) const {
        StackPass pass;
        pass.progress = true;
        if (std::find(in.attend.begin(), in.attend.end(), 0) != in.attend.end()) {
            std::vector<std::int64_t> allowed(in.attend.begin(), in.attend.end());
            pass.mask.keyAllowed = idTensor(allowed, device_).ne(0);
        }
        return pass;
    }

    // Word, position and token-type embeddings, normed: [n, E].
    at::Tensor embed(const TextInput& in) const {
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

    // The classification head when the checkpoint has one (its out projection names the classes).
    void loadHead(WeightStore& w, const JsonConfig& config) {
        const std::int64_t E = cfg_.hidden;
        const bool distil = cfg_.type == "distilbert";
        const std::string out = cfg_.roberta ? "classifier.out_proj" : "classifier";
        const auto shape = w.shape(out + ".weight");
        if (!shape || shape->size() != 2) return;
        const std::int64_t labels = shape->front();
        head_.dense = w.linear(cfg_.roberta ? "classifier.dense" : distil ? "pre_classifier" : "pooler.dense", E, E);
        head_.out = w.linear(out, labels, E);
        head_.relu = distil;
        classNames_ = classNames(config, labels);
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
    StackSpec spec_;
    at::Tensor word_, position_, type_;
    Norm embNorm_;
    std::vector<StackLayer> layers_;
    ClassifierHead head_;
    std::vector<std::string> classNames_;
};

}  // namespace

std::shared_ptr<const Model> loadBert(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return std::make_shared<const BertModel>(folder, config, device, options);
}

}  // namespace attnscope
