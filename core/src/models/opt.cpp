// OPT (model_type "opt"): decoder with learned positions offset by 2, q scaled by 1/√d before the
// product, pre-LN blocks (do_layer_norm_before, the default) or post-LN blocks (OPT-350m), and
// word embeddings narrower than the model (word_embed_proj_dim, with project_in / project_out).
// Weights are nn.Linear [out, in] under "model.decoder." (OPTForCausalLM) or "decoder." (OPTModel,
// as facebook's checkpoints are saved); lm_head is tied to embed_tokens unless the config says not.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

#include <cmath>

namespace attnscope {

DecoderSpec optSpec(const JsonConfig& c) {
    DecoderSpec s;  // defaults are OPTConfig's
    auto size = [&](const char* key, int fallback) { return c.optionalPositiveInt(key).value_or(fallback); };
    s.family = "opt";
    s.vocab = size("vocab_size", 50272);
    s.hidden = size("hidden_size", 768);
    s.inner = size("ffn_dim", 3072);
    s.layers = size("num_hidden_layers", 12);
    s.heads = s.kvHeads = size("num_attention_heads", 12);
    s.positions = size("max_position_embeddings", 2048);
    s.embedWidth = size("word_embed_proj_dim", s.hidden);
    const bool preNorm = c.boolean("do_layer_norm_before", true);
    const bool finalNorm = preNorm && !c.boolean("_remove_final_layer_norm", false);
    s.qkvBias = s.oBias = s.mlpBias = c.boolean("enable_bias", true);
    s.affine = c.boolean("layer_norm_elementwise_affine", true);
    s.tied = c.boolean("tie_word_embeddings", true);
    s.activation = c.string("activation_function", "relu");
    requireKnown(c, "activation_function", s.activation,
                 {"relu", "gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast"});
    requireDivisible(c, s, "hidden_size", "num_attention_heads");
    s.norm = DecoderSpec::Norm::Layer;
    s.eps = 1e-5;
    s.blocks = preNorm ? DecoderSpec::Blocks::Pre : DecoderSpec::Blocks::Post;
    // OPTAttention multiplies q_proj's output by the scale and then takes q·k unscaled; the
    // captured q is that scaled q, so the layer's logits are plain q·k.
    s.queryScale = 1.0 / std::sqrt(static_cast<double>(s.headDim));
    s.score.scale = 1.0;
    s.positionKind = DecoderSpec::Positions::Learned;
    s.positionOffset = 2;  // OPTLearnedPositionalEmbedding keeps two rows before position 0
    s.gated = false;
    s.names = {"model.",
               true,
               "decoder.embed_tokens",
               "decoder.embed_positions",
               "",
               "decoder.project_in",
               "decoder.project_out",
               "decoder.layers."};
    s.names.inNorm = "self_attn_layer_norm";
    s.names.ffNorm = "final_layer_norm";
    s.names.o = "self_attn.out_proj";
    s.names.up = "fc1";
    s.names.down = "fc2";
    s.names.finalNorm = finalNorm ? "decoder.final_layer_norm" : "";
    s.notes.push_back("q scaled by 1/√d before q·k");
    if (!preNorm) s.notes.push_back("post-LN blocks (do_layer_norm_before false)");
    if (s.embedWidth != s.hidden)
        s.notes.push_back("word embeddings " + std::to_string(s.embedWidth) + " wide, projected to " +
                          std::to_string(s.hidden));
    return s;
}

}  // namespace attnscope
