#include "fixtures_neox.h"

namespace attnscope::testing {

namespace {
namespace fixtures_neox {  // this file's helpers, apart from the other support files' in a unity build

// Writes name.weight [out, in] and, when bias, name.bias [out].
struct Writer {
    Checkpoint& c;
    std::mt19937& rng;
    void linear(const std::string& name, std::int64_t out, std::int64_t in, float scale, bool bias = true) {
        c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
        if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.1f);
    }
    void norm(const std::string& name, std::int64_t size) {
        c.tensors[name + ".weight"] = randomTensor({size}, rng, 0.1f, 1.f);
        c.tensors[name + ".bias"] = randomTensor({size}, rng, 0.1f);
    }
};

}  // namespace fixtures_neox
}  // namespace

Checkpoint makeNeox(const NeoxSpec& s, unsigned seed) {
    using namespace fixtures_neox;
    std::mt19937 rng(seed);
    Checkpoint c;
    Writer w{c, rng};
    const std::int64_t E = s.hidden, I = s.inner;
    c.config = {{"model_type", "gpt_neox"},
                {"vocab_size", s.vocab},
                {"hidden_size", s.hidden},
                {"intermediate_size", s.inner},
                {"num_hidden_layers", s.layers},
                {"num_attention_heads", s.heads},
                {"max_position_embeddings", s.positions},
                {"layer_norm_eps", s.eps},
                {"hidden_act", s.activation},
                {"use_parallel_residual", s.parallel},
                {"tie_word_embeddings", s.tied},
                {"rope_scaling", nullptr}};
    if (s.newKeys) {
        c.config["rope_theta"] = s.base;
        c.config["partial_rotary_factor"] = s.rotaryPct;
    } else {
        c.config["rotary_emb_base"] = s.base;
        c.config["rotary_pct"] = s.rotaryPct;
    }
    if (!s.bias) c.config["attention_bias"] = false;
    const std::string pre = s.prefix ? "gpt_neox." : "";
    c.tensors[pre + "embed_in.weight"] = randomTensor({s.vocab, E}, rng, 0.8f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        w.norm(p + "input_layernorm", E);
        w.linear(p + "attention.query_key_value", 3 * E, E, 0.3f, s.bias);
        w.linear(p + "attention.dense", E, E, 0.2f, s.bias);
        w.norm(p + "post_attention_layernorm", E);
        w.linear(p + "mlp.dense_h_to_4h", I, E, 0.2f);
        w.linear(p + "mlp.dense_4h_to_h", E, I, 0.2f);
    }
    w.norm(pre + "final_layer_norm", E);
    if (!s.tied) c.tensors["embed_out.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    return c;
}

Checkpoint makeGptj(const GptjSpec& s, unsigned seed) {
    using namespace fixtures_neox;
    std::mt19937 rng(seed);
    Checkpoint c;
    Writer w{c, rng};
    const std::int64_t E = s.hidden, I = s.inner ? s.inner : 4 * s.hidden;
    c.config = {{"model_type", "gptj"},         {"vocab_size", s.vocab},
                {"n_positions", s.positions},   {"n_embd", s.hidden},
                {"n_layer", s.layers},          {"n_head", s.heads},
                {"rotary_dim", s.rotaryDim},    {"n_inner", s.inner ? nlohmann::json(s.inner) : nlohmann::json()},
                {"layer_norm_epsilon", s.eps},  {"activation_function", s.activation},
                {"tie_word_embeddings", s.tied}};
    const std::string pre = s.prefix ? "transformer." : "";
    c.tensors[pre + "wte.weight"] = randomTensor({s.vocab, E}, rng, 0.8f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "h." + std::to_string(l) + ".";
        w.norm(p + "ln_1", E);
        for (const char* n : {"attn.q_proj", "attn.k_proj", "attn.v_proj"}) w.linear(p + n, E, E, 0.3f, false);
        w.linear(p + "attn.out_proj", E, E, 0.2f, false);
        w.linear(p + "mlp.fc_in", I, E, 0.2f);
        w.linear(p + "mlp.fc_out", E, I, 0.1f);
    }
    w.norm(pre + "ln_f", E);
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    c.tensors["lm_head.bias"] = randomTensor({s.vocab}, rng, 0.2f);
    return c;
}

Checkpoint makeNeo(const NeoSpec& s, unsigned seed) {
    using namespace fixtures_neox;
    std::mt19937 rng(seed);
    Checkpoint c;
    Writer w{c, rng};
    const std::int64_t E = s.hidden, I = s.inner ? s.inner : 4 * s.hidden;
    const int repeat = s.layers / static_cast<int>(s.kinds.size());
    nlohmann::json layers = nlohmann::json::array();
    for (int l = 0; l < s.layers; ++l) layers.push_back(s.kinds[l % s.kinds.size()]);
    c.config = {{"model_type", "gpt_neo"},
                {"vocab_size", s.vocab},
                {"max_position_embeddings", s.positions},
                {"hidden_size", s.hidden},
                {"num_layers", s.layers},
                {"num_heads", s.heads},
                {"intermediate_size", s.inner ? nlohmann::json(s.inner) : nlohmann::json()},
                {"window_size", s.window},
                {"attention_types", nlohmann::json::array({nlohmann::json::array({s.kinds, repeat})})},
                {"layer_norm_epsilon", s.eps},
                {"activation_function", s.activation}};
    if (s.writeLayers) c.config["attention_layers"] = layers;
    if (!s.tied) c.config["tie_word_embeddings"] = false;
    const std::string pre = s.prefix ? "transformer." : "";
    c.tensors[pre + "wte.weight"] = randomTensor({s.vocab, E}, rng, 0.8f);
    c.tensors[pre + "wpe.weight"] = randomTensor({s.positions, E}, rng, 0.3f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "h." + std::to_string(l) + ".";
        w.norm(p + "ln_1", E);
        // Unscaled q·k: small q/k weights keep the logits in the range real checkpoints have.
        for (const char* n : {"attn.attention.q_proj", "attn.attention.k_proj"}) w.linear(p + n, E, E, 0.15f, false);
        w.linear(p + "attn.attention.v_proj", E, E, 0.3f, false);
        w.linear(p + "attn.attention.out_proj", E, E, 0.2f);
        w.norm(p + "ln_2", E);
        w.linear(p + "mlp.c_fc", I, E, 0.2f);
        w.linear(p + "mlp.c_proj", E, I, 0.1f);
    }
    w.norm(pre + "ln_f", E);
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    return c;
}

Checkpoint makePhi(const PhiSpec& s, unsigned seed) {
    using namespace fixtures_neox;
    std::mt19937 rng(seed);
    Checkpoint c;
    Writer w{c, rng};
    const std::int64_t E = s.hidden, I = s.inner, d = s.hidden / s.heads, H = s.heads, G = s.kvHeads;
    c.config = {{"model_type", "phi"},
                {"vocab_size", s.vocab},
                {"hidden_size", s.hidden},
                {"intermediate_size", s.inner},
                {"num_hidden_layers", s.layers},
                {"num_attention_heads", s.heads},
                {"num_key_value_heads", s.kvHeads},
                {"max_position_embeddings", s.positions},
                {"partial_rotary_factor", s.partial},
                {"rope_theta", s.theta},
                {"rope_scaling", nullptr},
                {"layer_norm_eps", s.eps},
                {"hidden_act", s.activation},
                {"qk_layernorm", s.qkNorm},
                {"tie_word_embeddings", s.tied}};
    const std::string pre = s.prefix ? "model." : "";
    c.tensors[pre + "embed_tokens.weight"] = randomTensor({s.vocab, E}, rng, 0.8f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        w.norm(p + "input_layernorm", E);
        w.linear(p + "self_attn.q_proj", H * d, E, 0.3f);
        w.linear(p + "self_attn.k_proj", G * d, E, 0.3f);
        w.linear(p + "self_attn.v_proj", G * d, E, 0.3f);
        w.linear(p + "self_attn.dense", E, H * d, 0.2f);
        if (s.qkNorm) {
            w.norm(p + "self_attn.q_layernorm", d);
            w.norm(p + "self_attn.k_layernorm", d);
        }
        w.linear(p + "mlp.fc1", I, E, 0.2f);
        w.linear(p + "mlp.fc2", E, I, 0.1f);
    }
    w.norm(pre + "final_layernorm", E);
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    c.tensors["lm_head.bias"] = randomTensor({s.vocab}, rng, 0.2f);
    return c;
}

}  // namespace attnscope::testing
