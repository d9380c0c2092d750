// OLMo-2 (model_type "olmo2") described as a DecoderSpec (decoder_spec.h), as Hugging Face's
// modeling_olmo2.py: post-norm blocks (x += norm(attn(x)); x += norm(mlp(x)), no input norms),
// q/k RMSNorm over the whole flattened projection [H·d] / [Hkv·d] before the heads are split and
// rotated, the norm's product taken in float32 (Olmo2RMSNorm), SwiGLU, untied head by default.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

namespace attnscope {

DecoderSpec olmo2Spec(const JsonConfig& c) {
    DecoderSpec s = llamaBase(c, {1e-5, 0, 0, /*positions=*/2048});
    s.names.inNorm = s.names.ffNorm = "";  // the norms sit on the outputs
    s.names.attnOutNorm = "post_attention_layernorm";
    s.names.ffOutNorm = "post_feedforward_layernorm";
    s.qkNorm = DecoderSpec::QkNorm::Flat;
    s.norm = DecoderSpec::Norm::RmsFloat;
    useRope(s, readRope(c, s.headDim));
    s.notes.push_back("q/k RMSNorm over all heads");
    s.notes.push_back("post-norm blocks");
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
