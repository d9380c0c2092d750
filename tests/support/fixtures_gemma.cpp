#include "fixtures_gemma.h"

namespace attnscope::testing {

namespace {
namespace fixtures_gemma {  // this file's helpers, apart from the other support files' in a unity build

bool isGemma(const std::string& type) { return type == "gemma" || type == "gemma2" || type == "gemma3_text"; }

nlohmann::json nullIfZero(double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(); }

}  // namespace fixtures_gemma
}  // namespace

int rmsHeadDim(const RmsFamilySpec& s) {
    return s.type == "olmo2" || s.type == "phi3" ? s.hidden / s.heads : s.headDim;
}

Checkpoint makeRmsFamily(const RmsFamilySpec& s, unsigned seed) {
    using namespace fixtures_gemma;
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::int64_t E = s.hidden, I = s.inner, d = rmsHeadDim(s), H = s.heads, G = s.kvHeads;
    const std::string& t = s.type;
    c.config = {{"model_type", t},
                {"vocab_size", s.vocab},
                {"hidden_size", s.hidden},
                {"intermediate_size", s.inner},
                {"num_hidden_layers", s.layers},
                {"num_attention_heads", s.heads},
                {"num_key_value_heads", s.kvHeads},
                {"max_position_embeddings", s.positions},
                {"rms_norm_eps", s.eps},
                {"rope_theta", s.theta},
                {"rope_scaling", s.ropeScaling},
                {"tie_word_embeddings", s.tied}};
    if (t != "phi3") c.config["attention_bias"] = s.attentionBias;
    if (t != "olmo2" && t != "phi3") c.config["head_dim"] = s.headDim;
    if (isGemma(t)) {
        // Gemma's MLP reads hidden_activation; hidden_act is what the original configs carried.
        c.config["hidden_act"] = "gelu";
        c.config["hidden_activation"] = "gelu_pytorch_tanh";
    } else {
        c.config["hidden_act"] = "silu";
    }
    if (t == "gemma2" || t == "gemma3_text") {
        c.config["query_pre_attn_scalar"] = s.queryPreAttnScalar;
        c.config["attn_logit_softcapping"] = nullIfZero(s.attnSoftcap);
        c.config["final_logit_softcapping"] = nullIfZero(s.finalSoftcap);
        c.config["sliding_window"] = nullIfZero(s.window);
    }
    if (t == "gemma3_text") {
        c.config["rope_local_base_freq"] = s.localTheta;
        if (s.slidingPattern > 0) c.config["sliding_window_pattern"] = s.slidingPattern;
    }
    if (t == "qwen3") {
        c.config["use_sliding_window"] = s.useSlidingWindow;
        c.config["sliding_window"] = nullIfZero(s.window);
        c.config["max_window_layers"] = s.maxWindowLayers;
    }
    if (t == "phi3") {
        c.config["sliding_window"] = nullIfZero(s.window);
        if (s.partialRotary != 1.0) c.config["partial_rotary_factor"] = s.partialRotary;
        if (s.originalPositions > 0) c.config["original_max_position_embeddings"] = s.originalPositions;
    }
    if (!s.layerTypes.is_null()) c.config["layer_types"] = s.layerTypes;

    const std::string pre = s.prefix ? "model." : "";
    // Gemma's norms weigh by (1 + w), so its weights sit around 0; the others' around 1.
    const float normOffset = isGemma(t) ? 0.f : 1.f;
    auto norm = [&](const std::string& name, std::int64_t size) {
        c.tensors[name + ".weight"] = randomTensor({size}, rng, 0.1f, normOffset);
    };
    auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, float scale, bool bias) {
        c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
        if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.2f);
    };
    // Gemma multiplies the embeddings by sqrt(hidden): smaller values keep the activations alike.
    c.tensors[pre + "embed_tokens.weight"] = randomTensor({s.vocab, E}, rng, isGemma(t) ? 0.15f : 0.8f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        if (t != "olmo2") norm(p + "input_layernorm", E);
        norm(p + "post_attention_layernorm", E);
        if (t == "gemma2" || t == "gemma3_text") norm(p + "pre_feedforward_layernorm", E);
        if (t == "gemma2" || t == "gemma3_text" || t == "olmo2") norm(p + "post_feedforward_layernorm", E);
        if (t == "phi3") {
            linear(p + "self_attn.qkv_proj", (H + 2 * G) * d, E, 0.35f, false);
        } else {
            linear(p + "self_attn.q_proj", H * d, E, 0.35f, s.attentionBias);
            linear(p + "self_attn.k_proj", G * d, E, 0.35f, s.attentionBias);
            linear(p + "self_attn.v_proj", G * d, E, 0.3f, s.attentionBias);
        }
        linear(p + "self_attn.o_proj", E, H * d, 0.2f, s.attentionBias && t != "phi3");
        if (t == "gemma3_text" || t == "qwen3") {
            norm(p + "self_attn.q_norm", d);
            norm(p + "self_attn.k_norm", d);
        }
        if (t == "olmo2") {
            norm(p + "self_attn.q_norm", H * d);
            norm(p + "self_attn.k_norm", G * d);
        }
        if (t == "phi3") {
            linear(p + "mlp.gate_up_proj", 2 * I, E, 0.2f, false);
        } else {
            linear(p + "mlp.gate_proj", I, E, 0.2f, false);
            linear(p + "mlp.up_proj", I, E, 0.2f, false);
        }
        linear(p + "mlp.down_proj", E, I, 0.2f, false);
    }
    norm(pre + "norm", E);
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    return c;
}

}  // namespace attnscope::testing
