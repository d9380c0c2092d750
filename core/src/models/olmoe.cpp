// OLMoE (model_type "olmoe"), as Hugging Face's modeling_olmoe.py and configuration_olmoe.py:
// Llama's pre-norm blocks with q/k RMSNorm over the whole projection ([H·d] and [Hkv·d], before
// the heads are split and rotated; the Llama norm, product after the cast), q, k and v clamped to
// ±clip_qkv when it is set, and a mixture of num_experts SwiGLU experts (default 64), top
// num_experts_per_tok (default 8), renormalised only with norm_topk_prob (default false) (moe.h).
// Defaults of OlmoeConfig: 4096 positions, rms_norm_eps 1e-5, rope_theta 10000, untied head.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

#include <cmath>

namespace attnscope {

DecoderSpec olmoeSpec(const JsonConfig& c) {
    DecoderSpec s;
    readSizes(c, s, 1e-5);
    readHeads(c, s, /*defaultHeadDim=*/0);
    // OLMoE's q_norm has hidden_size weights and k_norm (hidden / heads) · kv heads.
    requireDivisible(c, s, "hidden_size", "num_attention_heads");
    s.positions = c.optionalPositiveInt("max_position_embeddings").value_or(4096);
    s.tied = c.boolean("tie_word_embeddings", false);
    s.qkvBias = s.oBias = c.boolean("attention_bias", false);
    s.activation = readSiluAct(c);
    s.qkNorm = DecoderSpec::QkNorm::Flat;
    if (c.has("clip_qkv")) s.clipQkv = c.positiveNumber("clip_qkv");
    useRope(s, readRope(c, s.headDim));
    s.score.scale = 1.0 / std::sqrt(static_cast<double>(s.headDim));

    MoeSpec& m = s.moe;
    m.experts = c.optionalPositiveInt("num_experts").value_or(64);
    readTopK(c, m, "num_experts", 8);
    m.inner = s.inner;
    m.normTopK = c.boolean("norm_topk_prob", false);
    m.routed.assign(static_cast<std::size_t>(s.layers), true);
    s.notes.push_back("q/k RMSNorm over all heads");
    if (s.clipQkv > 0) s.notes.push_back("q/k/v clipped to ±" + formatNumber(s.clipQkv));
    addMoeNotes(m, s.notes);
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
