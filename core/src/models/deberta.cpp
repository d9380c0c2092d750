// DeBERTa v2 and v3 (model_type "deberta-v2", Hugging Face's modeling_deberta_v2.py): a post-norm
// encoder on the layer stack whose attention adds disentangled relative terms to q·k (c2p, p2c:
// deberta_attention.cpp) through StackPass::layerBias, every term scaled by 1/√(d·scale_factor),
// scale_factor = 1 + the number of pos_att_type entries. v2 checkpoints add a convolution after
// layer 0 (ConvLayer, StackPass::afterLayer); v3 ones log-bucket the positions and share the
// attention keys. The embeddings: words, absolute positions when position_biased_input, token
// types when type_vocab_size > 0, projected when embedding_size differs, normed, padding rows
// zeroed. *ForSequenceClassification: ContextPooler (dense on [CLS], pooler_hidden_act) and
// classifier. Defaults are DebertaV2Config's and the modeling code's getattr()s.
#include "attnscope/runtime/error.h"
#include "deberta.h"
#include "families.h"
#include "family_common.h"
#include "io/json_util.h"
#include "io/weights.h"
#include "layer_stack.h"

#include <c10/core/InferenceMode.h>

#include <cctype>
#include <cmath>

namespace attnscope {

namespace {

const StackNames kDebertaNames =
        bertLayerNames("attention.", {"self.query_proj", "self.key_proj", "self.value_proj", "output.dense"});

struct DebertaConfig {
    int vocab = 0, hidden = 0, layers = 0, heads = 0, headDim = 0, inner = 0, positions = 0, typeVocab = 0;
    int embedding = 0;  // embedding_size (hidden_size when absent)
    double eps = 1e-7;
    std::string activation, poolerActivation;
    bool relative = false, positionBiased = true, shareKey = false, normRel = false, c2p = false, p2c = false;
    int buckets = -1, maxRelative = 0;  // maxRelative after max_relative_positions' fallback
    int convKernel = 0, convGroups = 1;
    std::string convActivation;

    int scaleFactor() const { return 1 + (c2p ? 1 : 0) + (p2c ? 1 : 0); }
    std::int64_t span() const { return buckets > 0 ? buckets : maxRelative; }  // att_span (pos_ebd_size)
};

// An integer key that may be negative or zero (position_buckets -1, type_vocab_size 0).
int configInt(const JsonConfig& c, const std::string& key, int fallback) {
    if (!c.has(key)) return fallback;
    const nlohmann::json& v = c.json().at(key);
    const long long limit = 1 << 30;
    if (!v.is_number_integer() || v.get<long long>() < -limit || v.get<long long>() > limit)
        c.fail(key, "must be an integer in [-2^30, 2^30], found " + jsonExcerpt(v));
    return v.get<int>();
}

// "a|b" or ["a", "b"] (pos_att_type, norm_rel_ebd), lower-cased and trimmed.
std::vector<std::string> configList(const JsonConfig& c, const std::string& key, const std::string& fallback) {
    std::vector<std::string> parts;
    auto add = [&](std::string s) {
        for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
        parts.push_back(b == std::string::npos ? "" : s.substr(b, e - b + 1));
    };
    auto split = [&](const std::string& s) {
        std::size_t from = 0;
        for (std::size_t bar; (bar = s.find('|', from)) != std::string::npos; from = bar + 1)
            add(s.substr(from, bar - from));
        add(s.substr(from));
    };
    if (!c.has(key)) {
        if (!fallback.empty()) split(fallback);
        return parts;
    }
    const nlohmann::json& v = c.json().at(key);
    if (v.is_string()) {
        split(v.get<std::string>());
    } else if (v.is_array()) {
        for (const auto& e : v) {
            if (!e.is_string()) c.fail(key, "must list strings, found " + jsonExcerpt(v));
            add(e.get<std::string>());
        }
    } else {
        c.fail(key, "must be a string \"a|b\" or a list of strings, found " + jsonExcerpt(v));
    }
    return parts;
}

void readRelative(const JsonConfig& c, DebertaConfig& g) {
    g.relative = c.boolean("relative_attention", false);
    for (const std::string& t : configList(c, "pos_att_type", "")) {
        if (t == "c2p")
            g.c2p = true;
        else if (t == "p2c")
            g.p2c = true;
        else
            c.fail("pos_att_type", "'" + t + "' is not supported (c2p, p2c)");
    }
    for (const std::string& t : configList(c, "norm_rel_ebd", "none")) {
        if (t == "layer_norm")
            g.normRel = true;
        else if (t != "none")
            c.fail("norm_rel_ebd", "'" + t + "' is not supported (none, layer_norm)");
    }
    g.shareKey = c.boolean("share_att_key", false);
    g.buckets = configInt(c, "position_buckets", -1);
    g.maxRelative = configInt(c, "max_relative_positions", -1);
    if (g.maxRelative < 1) g.maxRelative = g.positions;
    if (g.buckets == 1) c.fail("position_buckets", "must be -1 (none) or at least 2");
    if (g.buckets > 0 && g.buckets / 2 >= g.maxRelative - 1)
        c.fail("position_buckets",
               "(" + std::to_string(g.buckets) + ") must be below 2 · (max_relative_positions - 1)");
}

DebertaConfig parseDebertaConfig(const JsonConfig& c) {
    DebertaConfig g;  // defaults: DebertaV2Config.__init__ and the modeling code's getattr()s
    g.vocab = c.optionalPositiveInt("vocab_size").value_or(128100);
    g.hidden = c.optionalPositiveInt("hidden_size").value_or(1536);
    g.layers = c.optionalPositiveInt("num_hidden_layers").value_or(24);
    g.heads = c.optionalPositiveInt("num_attention_heads").value_or(24);
    g.inner = c.optionalPositiveInt("intermediate_size").value_or(6144);
    g.positions = c.optionalPositiveInt("max_position_embeddings").value_or(512);
    g.typeVocab = configInt(c, "type_vocab_size", 0);
    if (g.typeVocab < 0) c.fail("type_vocab_size", "must be 0 or more");
    g.embedding = c.optionalPositiveInt("embedding_size").value_or(g.hidden);
    g.eps = c.positiveNumber("layer_norm_eps", 1e-7);
    g.activation = c.string("hidden_act", "gelu");
    g.poolerActivation = c.string("pooler_hidden_act", "gelu");
    g.positionBiased = c.boolean("position_biased_input", true);
    requireKnown(c, "hidden_act", g.activation, {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"});
    requireKnown(c, "pooler_hidden_act", g.poolerActivation, {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "tanh"});
    if (g.hidden % g.heads != 0)
        c.fail("num_attention_heads",
               "(" + std::to_string(g.heads) + ") must divide the hidden size (" + std::to_string(g.hidden) + ")");
    g.headDim = c.optionalPositiveInt("attention_head_size").value_or(g.hidden / g.heads);
    if (c.optionalPositiveInt("pooler_hidden_size").value_or(g.hidden) != g.hidden)
        c.fail("pooler_hidden_size", "must equal hidden_size (" + std::to_string(g.hidden) +
                                             "): the classifier reads the pooler's output as hidden_size wide");
    readRelative(c, g);
    g.convKernel = configInt(c, "conv_kernel_size", 0);
    if (g.convKernel < 0) c.fail("conv_kernel_size", "must be 0 (no convolution) or more");
    if (g.convKernel > 0 && g.convKernel % 2 == 0)
        c.fail("conv_kernel_size", "must be odd (padding (k - 1) / 2 keeps the length only then)");
    g.convGroups = c.optionalPositiveInt("conv_groups").value_or(1);
    if (g.hidden % g.convGroups != 0) c.fail("conv_groups", "must divide hidden_size");
    g.convActivation = c.string("conv_act", "tanh");
    requireKnown(c, "conv_act", g.convActivation, {"tanh", "gelu", "gelu_new", "gelu_pytorch_tanh", "relu"});
    return g;
}

// ConvLayer's weights: after layer 0, norm(output + act(conv(input))), padding rows zeroed.
struct ConvWeights {
    at::Tensor weight, bias;  // [E, E / groups, kernel], [E]
    Norm norm;
};

class DebertaModel final : public TextEncoder<DebertaConfig> {
public:
    DebertaModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                 const LoadOptions& options)
        : TextEncoder(parseDebertaConfig(config), folder, device) {
        spec_ = scaledStack(cfg_.hidden, cfg_.heads, cfg_.inner, cfg_.eps, cfg_.activation);
        spec_.headDim = cfg_.headDim;
        spec_.scale = 1.0 / std::sqrt(static_cast<double>(cfg_.headDim) * cfg_.scaleFactor());
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        if (w.anyNameStartsWith("deberta.")) w.setPrefix("deberta.");  // *ForSequenceClassification, *ForMaskedLM
        long long done = 0;
        auto step = [&] { reportProgress(options.progress, ++done, 2 + cfg_.layers); };
        loadEmbeddings(w);
        step();
        layers_ = loadStack(w, spec_, kDebertaNames, "encoder.layer.", cfg_.layers, [&] {});
        for (int l = 0; l < cfg_.layers; ++l) {
            loadRelative(w, l);
            step();
        }
        loadEncoderExtras(w);
        loadHead(w, config, "pooler.dense", "classifier", cfg_.poolerActivation);
        step();
        info_ = familyInfo("deberta-v2", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.headDim,
                           cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        info_.scoreTerms = true;
        addNotes();
    }

private:
    void loadEmbeddings(WeightStore& w) {
        const std::int64_t E = cfg_.hidden, M = cfg_.embedding;
        word_ = w.get("embeddings.word_embeddings.weight", {cfg_.vocab, M});
        if (cfg_.positionBiased) position_ = w.get("embeddings.position_embeddings.weight", {cfg_.positions, M});
        if (cfg_.typeVocab > 0) type_ = w.get("embeddings.token_type_embeddings.weight", {cfg_.typeVocab, M});
        if (M != E) embedProj_ = w.get("embeddings.embed_proj.weight", {E, M});
        embNorm_ = loadNorm(w, "embeddings.LayerNorm", E);
    }

    // Layer l's position projections: its own key_proj / query_proj when shared.
    void loadRelative(WeightStore& w, int l) {
        DisentangledLayer r;
        if (cfg_.relative) {
            const AttentionWeights& a = layers_[static_cast<std::size_t>(l)].self;
            const std::string p = "encoder.layer." + std::to_string(l) + ".attention.self.";
            const std::int64_t inner = std::int64_t{cfg_.heads} * cfg_.headDim;
            if (cfg_.c2p) r.posKey = cfg_.shareKey ? a.k : w.linear(p + "pos_key_proj", inner, cfg_.hidden);
            if (cfg_.p2c) r.posQuery = cfg_.shareKey ? a.q : w.linear(p + "pos_query_proj", inner, cfg_.hidden);
        }
        relative_.push_back(std::move(r));
    }

    void loadEncoderExtras(WeightStore& w) {
        const std::int64_t E = cfg_.hidden;
        if (cfg_.relative) {
            rel_ = w.get("encoder.rel_embeddings.weight", {2 * cfg_.span(), E});
            if (cfg_.normRel) rel_ = layerNorm(rel_, loadNorm(w, "encoder.LayerNorm", E), cfg_.eps);
        }
        if (cfg_.convKernel > 0) {
            conv_.weight = w.get("encoder.conv.conv.weight", {E, E / cfg_.convGroups, cfg_.convKernel});
            conv_.bias = w.get("encoder.conv.conv.bias", {E});
            conv_.norm = loadNorm(w, "encoder.conv.LayerNorm", E);
        }
    }

    void addNotes() {
        std::string terms = cfg_.c2p && cfg_.p2c ? "c2p and p2c" : cfg_.c2p ? "c2p" : cfg_.p2c ? "p2c" : "";
        if (!cfg_.relative || terms.empty()) {
            info_.notes.push_back("no relative attention terms (q·k only)");
        } else {
            std::string where = cfg_.buckets > 0 ? std::to_string(cfg_.buckets) + " log buckets up to " +
                                                           std::to_string(cfg_.maxRelative)
                                                 : "span " + std::to_string(cfg_.maxRelative);
            info_.notes.push_back("disentangled attention: " + terms + " (" + where +
                                  (cfg_.shareKey ? ", shared keys)" : ")"));
        }
        if (cfg_.convKernel > 0)
            info_.notes.push_back("convolution after layer 0 (kernel " + std::to_string(cfg_.convKernel) + ")");
    }

    // The padding mask, the relative terms as each layer's bias and the convolution after layer 0.
    StackPass stackPass(const TextInput& in) const override { return makePass(in, nullptr); }

    StackPass tracePass(const TextInput& in, const RunOptions& options, Trace::Impl& impl) const override {
        if (!options.scoreTerms) return makePass(in, nullptr);
        const auto n = static_cast<int>(in.ids.size());
        impl.scoreTerms = ScoreTerms{cfg_.layers, cfg_.heads, n, n, {}};
        impl.scoreTerms.values.reserve(static_cast<std::size_t>(cfg_.layers) * cfg_.heads * ScoreTerms::kTerms * n * n);
        return makePass(in, &impl.scoreTerms);
    }

    StackPass makePass(const TextInput& in, ScoreTerms* terms) const {
        StackPass pass;
        pass.mask = paddingMask(in, device_);
        const auto n = static_cast<std::int64_t>(in.ids.size());
        DisentangledPass shared;
        shared.heads = cfg_.heads;
        shared.headDim = cfg_.headDim;
        shared.scale = spec_.scale;
        shared.span = cfg_.span();
        if (cfg_.relative) {
            shared.rel = rel_;
            shared.positions = debertaRelativePositions(n, cfg_.buckets, cfg_.maxRelative, device_);
        }
        if (cfg_.relative && (cfg_.c2p || cfg_.p2c || terms))
            pass.layerBias = [this, shared, terms](int l, const at::Tensor& q, const at::Tensor& k) {
                const DisentangledTerms t = disentangledTerms(shared, relative_[static_cast<std::size_t>(l)], q, k);
                if (terms) record(*terms, q, k, t);
                if (!t.c2p.defined()) return t.p2c;
                return t.p2c.defined() ? t.c2p + t.p2c : t.c2p;
            };
        else if (terms)
            pass.layerBias = [this, terms](int, const at::Tensor& q, const at::Tensor& k) {
                record(*terms, q, k, {});
                return at::Tensor();
            };
        if (cfg_.convKernel > 0) {
            const at::Tensor keep = pass.mask.keyAllowed;
            pass.afterLayer = [this, keep](int l, const at::Tensor& input, const at::Tensor& output) {
                return l == 0 ? convolve(input, output, keep) : output;
            };
        }
        return pass;
    }

    // Appends one layer's c2c, c2p, p2c [H, 3, n, n] (zeros for a term left out) to `terms`.
    void record(ScoreTerms& terms, const at::Tensor& q, const at::Tensor& k, const DisentangledTerms& t) const {
        const at::Tensor c2c = at::matmul(q, k.transpose(1, 2)) * spec_.scale;
        auto orZero = [&](const at::Tensor& x) { return x.defined() ? x : at::zeros_like(c2c); };
        const at::Tensor all = at::stack({c2c, orZero(t.c2p), orZero(t.p2c)}, 1).to(at::kCPU, at::kFloat).contiguous();
        terms.values.insert(terms.values.end(), all.data_ptr<float>(), all.data_ptr<float>() + all.numel());
    }

    // ConvLayer: norm(output + act(conv(input))) · mask. (The reference also zeroes the padding rows of
    // conv(input) before the activation; the row-wise norm and the mask make that moot.)
    at::Tensor convolve(const at::Tensor& input, const at::Tensor& output, const at::Tensor& keep) const {
        const bool grad = at::GradMode::is_enabled();
        const at::Tensor weight = grad ? autogradAlias(conv_.weight) : conv_.weight;
        const at::Tensor bias = grad ? autogradAlias(conv_.bias) : conv_.bias;
        const Norm norm = grad ? autogradAlias(conv_.norm) : conv_.norm;
        const std::int64_t stride = 1, padding = (cfg_.convKernel - 1) / 2, dilation = 1;
        at::Tensor c = at::conv1d(input.t().unsqueeze(0), weight, bias, stride, padding, dilation, cfg_.convGroups)
                               .squeeze(0)
                               .t();
        c = cfg_.convActivation == "tanh" ? at::tanh(c) : activate(cfg_.convActivation, c);
        at::Tensor y = layerNorm(output + c, norm, cfg_.eps);
        return keep.defined() ? y * keep.unsqueeze(1).to(y.scalar_type()) : y;
    }

    // Words (+ positions) (+ token types), projected to hidden_size when narrower, normed, padding rows zeroed.
    at::Tensor embed(const TextInput& in) const override {
        const auto n = static_cast<std::int64_t>(in.ids.size());
        at::Tensor x = word_.index_select(0, idTensor(in.ids, device_));
        if (position_.defined()) x = x + position_.narrow(0, 0, n);
        if (type_.defined()) {
            const std::vector<std::int64_t> types = in.typeIds.empty() ? std::vector<std::int64_t>(n, 0) : in.typeIds;
            x = x + type_.index_select(0, idTensor(types, device_));
        }
        if (embedProj_.defined()) x = at::linear(x, embedProj_);
        x = layerNorm(x, embNorm_, cfg_.eps);
        const MaskSpec mask = paddingMask(in, device_);
        return mask.keyAllowed.defined() ? x * mask.keyAllowed.unsqueeze(1).to(x.scalar_type()) : x;
    }

    void checkInput(const TextInput& in) const override {
        checkIds(in.ids, cfg_.vocab, cfg_.positions);
        checkTokenTypes(in, type_.defined() ? cfg_.typeVocab : 0, true,
                        "this deberta-v2 model has no token types (type_vocab_size 0); give only ids");
        checkPaddingMask(in);
    }

    at::Tensor word_, position_, type_, embedProj_, rel_;
    Norm embNorm_;
    std::vector<DisentangledLayer> relative_;
    ConvWeights conv_;
};

}  // namespace

std::shared_ptr<const Model> loadDebertaV2(const std::filesystem::path& folder, const JsonConfig& config,
                                           c10::Device device, const LoadOptions& options) {
    return std::make_shared<const DebertaModel>(folder, config, device, options);
}

}  // namespace attnscope
