// GPT-Neo (model_type "gpt_neo"): GPT-2's block (pre-LN, learned positions, ln_1 -> attention ->
// ln_2 -> MLP) with nn.Linear weights, q/k/v without biases and out_proj with one, NO 1/√d
// scaling of q·k (computed in float32 whatever the weights' dtype, as Hugging Face does), and
// layers that attend globally or locally (the window_size latest keys) as attention_layers /
// attention_types say. The output embedding is tied to wte unless tie_word_embeddings is false.
// Weights live under "transformer."; lm_head is top level.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

#include <algorithm>

namespace attnscope {

namespace {

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

// Per layer: attends within the window (attention_layers, checked against attention_types).
std::vector<bool> readLocalLayers(const JsonConfig& c, int layers) {
    const std::vector<std::string> expanded = expandTypes(c);
    if (static_cast<int>(expanded.size()) != layers)
        c.fail("attention_types", "expands to " + std::to_string(expanded.size()) + " layers, but num_layers is " +
                                          std::to_string(layers));
    // A saved attention_layers is what the model reads; it must agree with attention_types.
    if (c.has("attention_layers")) {
        const auto& saved = c.json().at("attention_layers");
        if (!saved.is_array() || saved.size() != expanded.size())
            c.fail("attention_layers",
                   "must list one kind per layer (" + std::to_string(layers) + "), found " + saved.dump());
        for (std::size_t l = 0; l < saved.size(); ++l) {
            if (!saved[l].is_string()) c.fail("attention_layers", "entries must be strings, found " + saved[l].dump());
            if (saved[l].get<std::string>() != expanded[l])
                c.fail("attention_layers", "says '" + saved[l].get<std::string>() + "' for layer " + std::to_string(l) +
                                                   " where attention_types says '" + expanded[l] + "'");
        }
    }
    std::vector<bool> local;
    for (std::size_t l = 0; l < expanded.size(); ++l) {
        if (expanded[l] != "global" && expanded[l] != "local")
            c.fail(c.has("attention_layers") ? "attention_layers" : "attention_types",
                   "has '" + expanded[l] + "' for layer " + std::to_string(l) + " (known: global, local)");
        local.push_back(expanded[l] == "local");
    }
    return local;
}

}  // namespace

DecoderSpec gptNeoSpec(const JsonConfig& c) {
    DecoderSpec s;
    readGpt2Sizes(c, s, {"max_position_embeddings", "hidden_size", "num_layers", "num_heads", "intermediate_size"});
    const int window = c.optionalPositiveInt("window_size").value_or(256);
    s.tied = c.boolean("tie_word_embeddings", true);
    for (bool local : readLocalLayers(c, s.layers)) s.windows.push_back(local ? window : 0);
    if (std::count(s.windows.begin(), s.windows.end(), 0) < s.layers)
        requireWindowFits(c, "window_size", window, s.positions);
    s.norm = DecoderSpec::Norm::Layer;
    s.positionKind = DecoderSpec::Positions::Learned;
    s.score.scale = 1.0;  // GPT-Neo does not divide by √d
    s.qkFloat = true;
    s.gated = false;
    s.oBias = s.mlpBias = true;
    s.names = gpt2Names(false, "wpe");
    s.names.q = "attn.attention.q_proj";
    s.names.k = "attn.attention.k_proj";
    s.names.v = "attn.attention.v_proj";
    s.names.o = "attn.attention.out_proj";
    addCommonNotes(s);  // the window's
    s.notes.insert(s.notes.begin(), "no 1/√d scaling");
    return s;
}

}  // namespace attnscope
