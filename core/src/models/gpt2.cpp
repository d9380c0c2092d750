// GPT-2 (model_type "gpt2"): pre-LN decoder, learned positions, Conv1D weights stored [in, out],
// fused c_attn producing q, k, v; output embedding tied to wte unless lm_head.weight is present.
// Weights with or without "transformer.".
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

namespace attnscope {

DecoderNames gpt2Names(bool prefixIfPresent, std::string positions) {
    DecoderNames n = decoderNames("transformer.", prefixIfPresent, "wte", std::move(positions));
    n.layer = "h.";
    n.inNorm = "ln_1";
    n.ffNorm = "ln_2";
    n.up = "mlp.c_fc";
    n.down = "mlp.c_proj";
    n.finalNorm = "ln_f";
    return n;
}

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
    s.names = gpt2Names(true, "wpe");
    s.names.qkv = "attn.c_attn";
    s.names.o = "attn.c_proj";
    return s;
}

}  // namespace attnscope
