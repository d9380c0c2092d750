// GPT-NeoX (model_type "gpt_neox": Pythia, GPT-NeoX-20B): pre-LN decoder with LayerNorm (with
// bias), a fused query_key_value laid out per head ([H, 3, d] along its output), rotary positions
// on the first int(d · rotary_pct) dims of each head (rotate-half, base rotary_emb_base), the
// parallel residual x + attn(ln1(x)) + mlp(ln2(x)) or the sequential one, and an untied embed_out.
// Weights are nn.Linear [out, in] under "gpt_neox."; embed_out is top level.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

namespace attnscope {

DecoderSpec gptNeoxSpec(const JsonConfig& c) {
    DecoderSpec s;
    readSizes(c, s, 1e-5, "layer_norm_eps");
    s.heads = s.kvHeads = c.positiveInt("num_attention_heads");
    s.positions = c.positiveInt("max_position_embeddings");
    s.activation = c.string("hidden_act", "gelu");
    requireActivation(c, "hidden_act", s.activation);
    const bool parallel = c.boolean("use_parallel_residual", true);
    s.qkvBias = s.oBias = c.boolean("attention_bias", true);  // older configs have no key: always biased
    s.mlpBias = true;
    s.tied = c.boolean("tie_word_embeddings", false);
    requireDivisible(c, s, "hidden_size", "num_attention_heads");
    // rotary_pct (older configs) wins over partial_rotary_factor, as in Hugging Face's config.
    const int rotary = partialRotaryDims(c, s.headDim, {"rotary_pct", "partial_rotary_factor"}, 0.25);
    // Theta is rotary_emb_base; configs written by newer versions also (or only) have rope_theta.
    useRope(s,
            readRope(c, rotary, false, RopeKeys{c.has("rotary_emb_base") ? "rotary_emb_base" : "rope_theta", 10000.0}));
    s.norm = DecoderSpec::Norm::Layer;
    s.blocks = parallel ? DecoderSpec::Blocks::Parallel : DecoderSpec::Blocks::Pre;
    s.qkv = DecoderSpec::Qkv::Grouped;  // one group per head
    s.gated = false;
    s.names = decoderNames("gpt_neox.", false, "embed_in");
    s.names.qkv = "attention.query_key_value";
    s.names.o = "attention.dense";
    s.names.up = "mlp.dense_h_to_4h";
    s.names.down = "mlp.dense_4h_to_h";
    s.names.finalNorm = "final_layer_norm";
    s.names.head = "embed_out";
    s.notes.push_back(rotaryNote(rotary, s.headDim));
    if (parallel) s.notes.push_back("parallel attention and MLP");
    return s;
}

}  // namespace attnscope
