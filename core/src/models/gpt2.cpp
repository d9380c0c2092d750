// GPT-2 (model_type "gpt2"): pre-LN decoder, learned positions, Conv1D weights stored [in, out],
// fused c_attn producing q, k, v; output embedding tied to wte unless lm_head.weight is present.
// Weights with or without "transformer.".
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

namespace attnscope {

DecoderSpec gpt2Spec(const JsonConfig& c) {
    DecoderSpec s;
    readGpt2Sizes(c, s);
    s.scoreByInverseLayer = c.boolean("scale_attn_by_inverse_layer_idx", false);
    if (!c.boolean("scale_attn_weights", true)) s.score.scale = 1.0;
    s.norm = DecoderSpec::Norm::Layer;
    s.positionKind = DecoderSpec::Positions::Learned;
    s.qkv = DecoderSpec::Qkv::Fused;
    s.conv1d = true;
    s.gated = false;
    s.tiedIfNoHead = true;
    s.names = decoderNames("transformer.", true, "wte", "wpe");
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
