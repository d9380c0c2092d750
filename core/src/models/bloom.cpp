// BLOOM (model_type "bloom"): ALiBi instead of positions (Hugging Face's slopes, alibi.h), a
// LayerNorm right after the word embeddings, a fused query_key_value laid out per head as
// [heads, 3, head_dim], tanh GELU, and apply_residual_connection_post_layernorm (the residual is
// taken after the norm). Weights are nn.Linear [out, in], with or without "transformer."; the
// output head is the word embedding unless tie_word_embeddings is false.
#include "alibi.h"
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

namespace attnscope {

DecoderNames bloomNames() {
    DecoderNames n = decoderNames("transformer.", true, "word_embeddings");
    n.layer = "h.";
    n.qkv = "self_attention.query_key_value";
    n.o = "self_attention.dense";
    n.up = "mlp.dense_h_to_4h";
    n.down = "mlp.dense_4h_to_h";
    n.finalNorm = "ln_f";
    return n;
}

DecoderSpec bloomSpec(const JsonConfig& c) {
    DecoderSpec s;  // defaults are BloomConfig's
    s.family = "bloom";
    s.vocab = c.optionalPositiveInt("vocab_size").value_or(250880);
    const char* hiddenKey = c.has("n_embed") ? "n_embed" : "hidden_size";
    s.hidden = c.optionalPositiveInt(hiddenKey).value_or(64);
    s.inner = 4 * s.hidden;                                      // BloomMLP is always 4 × hidden
    s.layers = firstSize(c, "num_hidden_layers", "n_layer", 2);  // BloomConfig's aliases win
    s.heads = s.kvHeads = firstSize(c, "num_attention_heads", "n_head", 8);
    s.eps = c.positiveNumber("layer_norm_epsilon", 1e-5);
    s.residualAfterNorm = c.boolean("apply_residual_connection_post_layernorm", false);
    s.tied = c.boolean("tie_word_embeddings", true);
    requireDivisible(c, s, hiddenKey, "the number of heads");
    s.positions = 0;  // ALiBi: no position table, so no length limit but memory
    s.positionKind = DecoderSpec::Positions::Alibi;
    s.score.alibiSlopes = alibiSlopes(s.heads);  // logits = q·k/√d + slope·j, as BloomAttention
    s.norm = DecoderSpec::Norm::Layer;
    s.qkv = DecoderSpec::Qkv::Grouped;  // one group per head
    s.qkvBias = s.oBias = s.mlpBias = true;
    s.gated = false;
    s.activation = "gelu_pytorch_tanh";
    s.names = bloomNames();
    s.names.embedNorm = "word_embeddings_layernorm";
    s.notes = {"ALiBi", "LayerNorm on the word embeddings"};
    if (s.residualAfterNorm) s.notes.push_back("residual taken after the norm");
    return s;
}

}  // namespace attnscope
