// Gemma family (model_type "gemma", "gemma2", "gemma3_text") described as a DecoderSpec
// (decoder_spec.h), read side by side with Hugging Face's modeling_gemma*.py:
//   gemma:       RMSNorm with (1 + w) in float32, embeddings × sqrt(hidden), head_dim apart from
//                hidden / heads, grouped-query attention, GeGLU (tanh), tied head.
//   gemma2:      + sandwich norms, scale query_pre_attn_scalar^-1/2, tanh soft-cap of the scaled
//                scores before the mask (attn_logit_softcapping), a soft-cap of the output logits
//                (final_logit_softcapping), sliding window on alternate layers (layer_types, or
//                layers 0, 2, 4, … as Gemma2Config orders them).
//   gemma3_text: + q/k RMSNorm over head_dim before rotary, local layers every layer but each
//                sliding_window_pattern-th (or layer_types) with their own theta
//                (rope_local_base_freq, unscaled); rope_scaling applies to the global layers.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

#include <cmath>

namespace attnscope {

namespace {

// What the three share: sizes, the norm, embeddings, activation, the head.
DecoderSpec gemmaBase(const JsonConfig& c, int defaultKvHeads, int defaultPositions) {
    DecoderSpec s;
    readSizes(c, s, 1e-6);
    readHeads(c, s, /*defaultHeadDim=*/256, defaultKvHeads);
    s.positions = c.optionalPositiveInt("max_position_embeddings").value_or(defaultPositions);
    s.tied = c.boolean("tie_word_embeddings", true);
    s.qkvBias = s.oBias = c.boolean("attention_bias", false);
    s.norm = DecoderSpec::Norm::RmsPlusOne;
    s.embedScale = true;
    // Hugging Face's Gemma MLP reads hidden_activation and ignores hidden_act (a null one means
    // the tanh GELU).
    s.activation = c.has("hidden_activation") ? c.string("hidden_activation") : "gelu_pytorch_tanh";
    requireKnown(c, "hidden_activation", s.activation, {"gelu_pytorch_tanh", "gelu_new", "gelu_fast", "gelu"});
    return s;
}

// Gemma-2/3's four norms: around attention and the MLP, on their inputs and outputs.
void sandwich(DecoderSpec& s) {
    s.names.attnOutNorm = "post_attention_layernorm";
    s.names.ffNorm = "pre_feedforward_layernorm";
    s.names.ffOutNorm = "post_feedforward_layernorm";
}

// Per layer windows of sliding_window: layer_types when the config has them, else `slidingByDefault(l)`.
void readWindows(const JsonConfig& c, DecoderSpec& s, std::int64_t defaultWindow,
                 const std::function<bool(int)>& slidingByDefault) {
    const std::int64_t window = optionalWindow(c, "sliding_window", defaultWindow);
    requireWindowFits(c, "sliding_window", window, s.positions);
    setLayerWindows(c, s, window, slidingByDefault);
}

// query_pre_attn_scalar (default 256) gives the scale; soft-caps as noted.
void readScores(const JsonConfig& c, DecoderSpec& s, double attnCap, double finalCap) {
    const double scalar = c.positiveNumber("query_pre_attn_scalar", 256.0);
    s.score.scale = 1.0 / std::sqrt(scalar);
    s.score.softcap = softcapOf(c, "attn_logit_softcapping", attnCap);
    s.finalSoftcap = softcapOf(c, "final_logit_softcapping", finalCap);
    if (scalar != s.headDim)
        s.notes.push_back("scores scaled by query_pre_attn_scalar " + formatNumber(scalar) + "^-1/2");
    if (s.score.softcap > 0) s.notes.push_back("soft-cap " + formatNumber(s.score.softcap));
    if (s.finalSoftcap > 0) s.notes.push_back("output soft-cap " + formatNumber(s.finalSoftcap));
}

// A config equal to `c` but with rope_parameters replaced (Gemma-3's per-layer-type rope
// objects, or none so that theta alone is read).
JsonConfig withRope(const JsonConfig& c, const nlohmann::json* parameters) {
    nlohmann::json j = c.json();
    j.erase("rope_parameters");
    if (parameters) j["rope_parameters"] = *parameters;
    return JsonConfig(std::move(j), c.file());
}

}  // namespace

DecoderSpec gemmaSpec(const JsonConfig& c) {
    DecoderSpec s = gemmaBase(c, 0, 8192);
    useRope(s, readRope(c, s.headDim));
    addCommonNotes(s);
    return s;
}

DecoderSpec gemma2Spec(const JsonConfig& c) {
    DecoderSpec s = gemmaBase(c, 4, 8192);
    sandwich(s);
    readScores(c, s, 50.0, 30.0);
    readWindows(c, s, 4096, [](int l) { return l % 2 == 0; });  // Gemma2Config: sliding on even layers
    useRope(s, readRope(c, s.headDim));
    addCommonNotes(s);
    return s;
}

DecoderSpec gemma3TextSpec(const JsonConfig& c) {
    DecoderSpec s = gemmaBase(c, 4, 131072);
    sandwich(s);
    s.qkNorm = DecoderSpec::QkNorm::PerHead;
    readScores(c, s, 0.0, 0.0);
    const int pattern = c.optionalPositiveInt("sliding_window_pattern").value_or(6);
    readWindows(c, s, 4096, [pattern](int l) { return (l + 1) % pattern != 0; });
    // Global layers: rope_theta (default 1e6) with rope_scaling; local layers: rope_local_base_freq,
    // no scaling. The newer layout keys rope_parameters by layer type.
    const double localTheta = c.positiveNumber("rope_local_base_freq", 10000.0);
    const nlohmann::json* global = nullptr;
    const nlohmann::json* local = nullptr;
    if (c.has("rope_parameters") && c.json().at("rope_parameters").is_object() &&
        c.json().at("rope_parameters").contains("full_attention")) {
        global = &c.json().at("rope_parameters").at("full_attention");
        if (c.json().at("rope_parameters").contains("sliding_attention"))
            local = &c.json().at("rope_parameters").at("sliding_attention");
    }
    const RopeSpec globalRope = global ? readRope(withRope(c, global), s.headDim, false, {"rope_theta", 1e6})
                                       : readRope(c, s.headDim, false, {"rope_theta", 1e6});
    nlohmann::json plain = {{"rope_type", "default"}, {"rope_theta", localTheta}};
    const RopeSpec localRope = readRope(withRope(c, local ? local : &plain), s.headDim);
    s.ropes = {globalRope, localRope};
    for (int l = 0; l < s.layers; ++l) s.ropeOf.push_back(s.windows[static_cast<std::size_t>(l)] > 0 ? 1 : 0);
    s.notes.push_back("q/k RMSNorm");
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
