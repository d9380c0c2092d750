// Llama (model_type "llama", and configs that follow it such as SmolLM and TinyLlama), as Hugging
// Face's modeling_llama.py: pre-norm decoder with RMSNorm, SwiGLU MLP, rotary positions
// (rope.h), grouped-query attention, optional q/k/v/o and MLP biases, tied or untied lm_head.
// Weights under "model.". Mistral (mistral.cpp) and Qwen2 (qwen2.cpp) start from it.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

namespace attnscope {

DecoderSpec llamaBase(const JsonConfig& c, LlamaDefaults d) {
    DecoderSpec s;
    readSizes(c, s, d.eps);
    readHeads(c, s, d.headDim, d.kvHeads);
    s.positions = d.positions > 0 ? c.optionalPositiveInt("max_position_embeddings").value_or(d.positions)
                                  : c.positiveInt("max_position_embeddings");
    s.tied = c.boolean("tie_word_embeddings", false);
    s.activation = readSiluAct(c);
    s.qkvBias = s.oBias = c.boolean("attention_bias", false);
    s.mlpBias = c.boolean("mlp_bias", false);
    return s;
}

DecoderSpec llamaLike(const JsonConfig& c) {
    DecoderSpec s = llamaBase(c, {1e-6});
    // Llama-family checkpoints rotate every dimension.
    if (c.has("partial_rotary_factor") && c.json().at("partial_rotary_factor") != 1.0)
        c.fail("partial_rotary_factor", "is not supported (only 1.0)");
    useRope(s, readRope(c, s.headDim));
    return s;
}

DecoderSpec llamaSpec(const JsonConfig& c) {
    DecoderSpec s = llamaLike(c);
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
