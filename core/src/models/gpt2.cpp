// GPT-2 (model_type "gpt2"): pre-LN decoder, learned positions, Conv1D weights stored [in, out],
// fused c_attn producing q, k, v; output embedding tied to wte unless lm_head.weight is present.
// Weights with or without "transformer.".
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

#include <cmath>

namespace attnscope {

DecoderSpec gpt2Spec(const JsonConfig& c) {
    DecoderSpec s;
    s.family = "gpt2";
    s.vocab = c.positiveInt("vocab_size");
    s.positions = c.positiveInt("n_positions");
    s.hidden = c.positiveInt("n_embd");
    s.heads = s.kvHeads = c.positiveInt("n_head");
    s.layers = c.positiveInt("n_layer");
    s.inner = c.optionalPositiveInt("n_inner").value_or(4 * s.hidden);
    s.eps = c.positiveNumber("layer_norm_epsilon", 1e-5);
    s.activation = c.string("activation_function", "gelu_new");
    const bool scaled = c.boolean("scale_attn_weights", true);
    s.scoreByInverseLayer = c.boolean("scale_attn_by_inverse_layer_idx", false);
    requireDivisible(c, s, "n_embd", "n_head");
    requireKnown(c, "activation_function", s.activation,
                 {"gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu", "relu"});
    s.score.scale = scaled ? 1.0 / std::sqrt(static_cast<double>(s.headDim)) : 1.0;
    s.norm = DecoderSpec::Norm::Layer;
    s.positionKind = DecoderSpec::Positions::Learned;
    s.qkv = DecoderSpec::Qkv::Fused;
    s.conv1d = true;
    s.gated = false;
    s.tiedIfNoHead = true;
    s.names = {"transformer.", true, "wte", "wpe"};
    s.names.layer = "h.";
    s.names.inNorm = "ln_1";
    s.names.ffNorm = "ln_2";
    s.names.qkv = "attn.c_attn";
    s.names.o = "attn.c_proj";
    s.names.up = "mlp.c_fc";
    s.names.down = "mlp.c_proj";
    s.names.finalNorm = "ln_f";
    return s;
}

}  // namespace attnscope
