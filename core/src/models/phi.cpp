// Phi (model_type "phi": phi-1, phi-1.5, phi-2): one input_layernorm (LayerNorm with bias) feeds
// attention and the MLP in parallel, x + dense(attn(ln(x))) + fc2(act(fc1(ln(x)))); q/k/v/dense
// with biases; optional per-head q/k LayerNorm (qk_layernorm) before rotary; rotary (rotate-half)
// on the first int(d · partial_rotary_factor) dims, default 0.5; grouped kv heads when
// num_key_value_heads says so; final_layernorm; lm_head with a bias. Weights under "model.".
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

namespace attnscope {

DecoderSpec phiSpec(const JsonConfig& c) {
    DecoderSpec s;
    readSizes(c, s, 1e-5, "layer_norm_eps");
    s.heads = c.positiveInt("num_attention_heads");
    s.kvHeads = c.optionalPositiveInt("num_key_value_heads").value_or(s.heads);
    s.positions = c.positiveInt("max_position_embeddings");
    s.activation = c.string("hidden_act", "gelu_new");
    requireActivation(c, "hidden_act", s.activation);
    const bool qkNorm = c.boolean("qk_layernorm", false);
    s.tied = c.boolean("tie_word_embeddings", false);
    requireDivisible(c, s, "hidden_size", "num_attention_heads");
    if (s.heads % s.kvHeads != 0)
        c.fail("num_key_value_heads",
               "(" + std::to_string(s.kvHeads) + ") must divide num_attention_heads (" + std::to_string(s.heads) + ")");
    const int rotary = partialRotaryDims(c, s.headDim, {"partial_rotary_factor"}, 0.5);
    useRope(s, readRope(c, rotary));
    s.norm = DecoderSpec::Norm::Layer;
    s.blocks = DecoderSpec::Blocks::Parallel;
    s.qkNorm = qkNorm ? DecoderSpec::QkNorm::PerHead : DecoderSpec::QkNorm::None;
    s.gated = false;
    s.qkvBias = s.oBias = s.mlpBias = s.headBias = true;
    s.names.ffNorm = "";
    s.names.o = "self_attn.dense";
    s.names.qNorm = "self_attn.q_layernorm";
    s.names.kNorm = "self_attn.k_layernorm";
    s.names.up = "mlp.fc1";
    s.names.down = "mlp.fc2";
    s.names.finalNorm = "final_layernorm";
    s.notes = {rotaryNote(rotary, s.headDim), "parallel attention and MLP"};
    if (qkNorm) s.notes.push_back("q/k LayerNorm");
    if (s.kvHeads != s.heads) s.notes.push_back(std::to_string(s.kvHeads) + " kv groups");
    return s;
}

}  // namespace attnscope
