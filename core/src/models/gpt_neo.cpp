// GPT-Neo (model_type "gpt_neo"): GPT-2's block (pre-LN, learned positions, ln_1 -> attention ->
// ln_2 -> MLP) with nn.Linear weights, q/k/v without biases and out_proj with one, NO 1/√d
// scaling of q·k (computed in float32 whatever the weights' dtype, as Hugging Face does), and
// layers that attend globally or locally (the window_size latest keys) as attention_layers /
// attention_types say. The output embedding is tied to wte unless tie_word_embeddings is false.
// Weights live under "transformer."; lm_head is top level.
#include "attnscope/runtime/error.h"
#include "decoder_parts.h"
#include "families.h"
#include "family_common.h"
#include "io/weights.h"
#include "runtime/memory.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>

namespace attnscope {

namespace {

struct NeoConfig {
    int vocab = 0, hidden = 0, inner = 0, layers = 0, heads = 0, positions = 0, window = 256;
    double eps = 1e-5;
    std::string activation;
    bool tied = true;
    std::vector<bool> local;  // per layer: attends within the window
};

// attention_types [[["global", "local"], 12]] -> 24 entries, as Hugging Face expands it.
std::vector<std::string> expandTypes(const JsonConfig& c) {
    nlohmann::json types = c.has("attention_types") ? c.json().at("attention_types")
                                                    : nlohmann::json::parse(R"([[["global", "local"], 12]])");
    const std::string form = "must be a list of [[kinds...], repeat] pairs";
    if (!types.is_array()) c.fail("attention_types", form + ", found " + types.dump());
    std::vector<std::string> out;
    for (const auto& item : types) {
        if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer() ||
            item[1].get<int>() < 0)
            c.fail("attention_types", form + ", found " + item.dump());
        for (int r = 0; r < item[1].get<int>(); ++r)
            for (const auto& kind : item[0]) {
                if (!kind.is_string()) c.fail("attention_types", "entries must be strings, found " + kind.dump());
                out.push_back(kind.get<std::string>());
            }
    }
    return out;
}

NeoConfig parseNeoConfig(const JsonConfig& c) {
    NeoConfig g;
    g.vocab = c.positiveInt("vocab_size");
    g.positions = c.positiveInt("max_position_embeddings");
    g.hidden = c.positiveInt("hidden_size");
    g.layers = c.positiveInt("num_layers");
    g.heads = c.positiveInt("num_heads");
    g.inner = c.optionalPositiveInt("intermediate_size").value_or(4 * g.hidden);
    g.window = c.optionalPositiveInt("window_size").value_or(256);
    g.eps = c.positiveNumber("layer_norm_epsilon", 1e-5);
    g.activation = c.string("activation_function", "gelu_new");
    requireActivation(c, "activation_function", g.activation);
    g.tied = c.boolean("tie_word_embeddings", true);
    if (g.hidden % g.heads != 0)
        c.fail("hidden_size",
               "(" + std::to_string(g.hidden) + ") must be divisible by num_heads (" + std::to_string(g.heads) + ")");
    const std::vector<std::string> expanded = expandTypes(c);
    if (static_cast<int>(expanded.size()) != g.layers)
        c.fail("attention_types", "expands to " + std::to_string(expanded.size()) + " layers, but num_layers is " +
                                          std::to_string(g.layers));
    // A saved attention_layers is what the model reads; it must agree with attention_types.
    std::vector<std::string> kinds = expanded;
    if (c.has("attention_layers")) {
        const auto& saved = c.json().at("attention_layers");
        if (!saved.is_array() || saved.size() != expanded.size())
            c.fail("attention_layers",
                   "must list one kind per layer (" + std::to_string(g.layers) + "), found " + saved.dump());
        for (std::size_t l = 0; l < saved.size(); ++l) {
            if (!saved[l].is_string()) c.fail("attention_layers", "entries must be strings, found " + saved[l].dump());
            if (saved[l].get<std::string>() != expanded[l])
                c.fail("attention_layers", "says '" + saved[l].get<std::string>() + "' for layer " + std::to_string(l) +
                                                   " where attention_types says '" + expanded[l] + "'");
        }
    }
    for (std::size_t l = 0; l < kinds.size(); ++l) {
        if (kinds[l] != "global" && kinds[l] != "local")
            c.fail(c.has("attention_layers") ? "attention_layers" : "attention_types",
                   "has '" + kinds[l] + "' for layer " + std::to_string(l) + " (known: global, local)");
        g.local.push_back(kinds[l] == "local");
    }
    const bool anyLocal = std::find(g.local.begin(), g.local.end(), true) != g.local.end();
    if (anyLocal && g.window > g.positions)
        c.fail("window_size", "(" + std::to_string(g.window) + ") is larger than max_position_embeddings (" +
                                      std::to_string(g.positions) + ")");
    return g;
}

struct NeoLayer {
    Norm ln1, ln2;
    Linear q, k, v, out, fc, proj;
};

class NeoModel final : public TextFamilyModel<NeoConfig> {
public:
    NeoModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
             const LoadOptions& options)
        : TextFamilyModel(parseNeoConfig(config), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        w.setPrefix("transformer.");
        const std::int64_t E = cfg_.hidden, I = cfg_.inner;
        const long long total = 3 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        wte_ = w.rows("wte.weight", {cfg_.vocab, E});
        wpe_ = w.get("wpe.weight", {cfg_.positions, E});
        step(2);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            NeoLayer L;
            L.ln1 = loadNorm(w, p + "ln_1", E);
            L.q = w.linear(p + "attn.attention.q_proj", E, E, false);
            L.k = w.linear(p + "attn.attention.k_proj", E, E, false);
            L.v = w.linear(p + "attn.attention.v_proj", E, E, false);
            L.out = w.linear(p + "attn.attention.out_proj", E, E);
            L.ln2 = loadNorm(w, p + "ln_2", E);
            L.fc = w.linear(p + "mlp.c_fc", I, E);
            L.proj = w.linear(p + "mlp.c_proj", E, I);
            layers_.push_back(std::move(L));
            step(3 + l);
        }
        lnf_ = loadNorm(w, "ln_f", E);
        head_ = cfg_.tied ? wte_ : w.rows("lm_head.weight", {cfg_.vocab, E});
        step(total);

        info_ = familyInfo("gpt_neo", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.hidden / cfg_.heads,
                           cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        std::vector<int> localLayers;
        for (int l = 0; l < cfg_.layers; ++l)
            if (cfg_.local[l]) localLayers.push_back(l);
        info_.notes.push_back("no 1/√d scaling");
        if (!localLayers.empty())
            info_.notes.push_back("sliding window " + std::to_string(cfg_.window) + " on layers " +
                                  layerListNote(localLayers));
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkIds(ids, cfg_.vocab, cfg_.positions);
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size()), H = cfg_.heads, d = cfg_.hidden / H;
        requireForwardMemory({cfg_.layers, H, H, d, cfg_.hidden, cfg_.inner, n, n, 4}, device_);
        auto impl = newTrace(ids);
        BlockCapture capture;
        ScoreSpec score;  // scale 1: GPT-Neo does not divide by √d

        at::Tensor x = gatherRows(wte_, ids, device_) + wpe_.narrow(0, 0, n);
        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < cfg_.layers; ++l) {
            pass.layer(l);
            const NeoLayer& L = layers_[l];
            MaskSpec mask;
            mask.causal = true;
            mask.window = cfg_.local[l] ? cfg_.window : 0;
            const at::Tensor h = layerNorm(x, L.ln1, cfg_.eps);
            auto heads = [&](const Linear& proj) { return splitHeads(proj(h), H, d).to(at::kFloat); };
            at::Tensor q = heads(L.q), k = heads(L.k), v = splitHeads(L.v(h), H, d);
            x = x + L.out(mergeHeads(attendDot(q, k, v, mask, score, layerRun(options, "self", l))));
            x = x + L.proj(activate(cfg_.activation, L.fc(layerNorm(x, L.ln2, cfg_.eps))));
            capture.layers.push_back(dotCapture(q, k, score, mask));
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        impl->nextTokenLogits = nextLogits(layerNorm(x.narrow(0, n - 1, 1), lnf_, cfg_.eps), head_);
        BlockInfo block = selfBlock(cfg_.layers, cfg_.heads, cfg_.heads, true, impl->displayTokens);
        for (int l = 0; l < cfg_.layers && std::find(cfg_.local.begin(), cfg_.local.end(), true) != cfg_.local.end();
             ++l)
            block.layerWindows.push_back(cfg_.local[l] ? cfg_.window : 0);
        impl->infos.push_back(std::move(block));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    at::Tensor wte_, wpe_, head_;
    Norm lnf_;
    std::vector<NeoLayer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadGptNeo(const std::filesystem::path& folder, const JsonConfig& config,
                                        c10::Device device, const LoadOptions& options) {
    return std::make_shared<const NeoModel>(folder, config, device, options);
}

}  // namespace attnscope
