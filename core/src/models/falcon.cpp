// Falcon (model_type "falcon"; the legacy "RefinedWebModel" and "RefinedWeb" too): three layouts
// of the fused query_key_value, as FalconAttention._split_heads reads them,
//   new_decoder_architecture (Falcon-40B/180B, Falcon2): [n, kv, heads/kv + 2, d], each kv group's
//     queries followed by its key and value;
//   multi_query (Falcon-7B): [n, heads + 2, d], the same with one group;
//   otherwise (Falcon-RW): [n, heads, 3, d], the same with a group per head;
// rotary positions or ALiBi as `alibi` says (Falcon's ALiBi is (q·k + slope·j)/√d with the slopes
// rounded to bfloat16), attention and MLP in parallel (parallel_attn, from one input_layernorm or
// from ln_attn / ln_mlp), optional biases. Weights are nn.Linear [out, in], with or without
// "transformer."; the output head is the word embedding unless tie_word_embeddings is false.
#include "alibi.h"
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

#include <c10/util/BFloat16.h>

#include <cmath>

namespace attnscope {

namespace {

// The fused query_key_value's groups and the norms around attention and the MLP.
void readLayout(const JsonConfig& c, DecoderSpec& s, const char* kvKey) {
    // RefinedWeb (the 40B's original type) is the new decoder architecture under its old name.
    const bool newArch = c.boolean("new_decoder_architecture", s.family == "RefinedWeb");
    const bool multiQuery = c.boolean("multi_query", true);
    const bool parallel = c.boolean("parallel_attn", true);
    const std::string kv = "(" + std::to_string(s.kvHeads) + ")";
    if (newArch && s.heads % s.kvHeads != 0)
        c.fail(kvKey, kv + " must divide num_attention_heads (" + std::to_string(s.heads) + ")");
    if (!newArch && !multiQuery && s.kvHeads != s.heads)
        c.fail(kvKey, kv + " must equal num_attention_heads (" + std::to_string(s.heads) +
                              ") without multi_query or new_decoder_architecture");
    if (!newArch && multiQuery) s.kvHeads = 1;
    // FalconDecoderLayer: the new architecture has only the parallel path, and two norms unless
    // num_ln_in_parallel_attn says 1; the old one has ln_attn/ln_mlp nowhere in its forward.
    const int norms = c.optionalPositiveInt("num_ln_in_parallel_attn").value_or(newArch ? 2 : 1);
    if (norms > 2) c.fail("num_ln_in_parallel_attn", "must be 1 or 2, found " + std::to_string(norms));
    if (newArch && !parallel)
        c.fail("parallel_attn", "is false, but new_decoder_architecture runs attention and MLP in parallel only");
    if (!newArch && parallel && norms == 2)
        c.fail("num_ln_in_parallel_attn", "is 2, which Falcon uses only with new_decoder_architecture");
    const bool twoNorms = newArch && norms == 2;
    s.blocks = parallel ? DecoderSpec::Blocks::Parallel : DecoderSpec::Blocks::Pre;
    s.names.inNorm = twoNorms ? "ln_attn" : "input_layernorm";
    s.names.ffNorm = twoNorms ? "ln_mlp" : parallel ? "" : "post_attention_layernorm";
    if (!newArch && multiQuery) s.notes.push_back("multi-query (one kv head)");
    if (newArch) s.notes.push_back(std::to_string(s.kvHeads) + " kv groups");
    if (parallel) s.notes.push_back("parallel attention and MLP");
}

}  // namespace

DecoderSpec falconSpec(const JsonConfig& c) {
    DecoderSpec s;  // defaults are FalconConfig's (Falcon-7B)
    s.family = c.string("model_type");
    s.vocab = c.optionalPositiveInt("vocab_size").value_or(65024);
    const char* hiddenKey = c.has("n_embed") ? "n_embed" : "hidden_size";  // FalconConfig: n_embed wins
    s.hidden = c.optionalPositiveInt(hiddenKey).value_or(4544);
    s.layers = firstSize(c, "num_hidden_layers", "n_layer", 32);  // or the legacy RefinedWeb names
    s.heads = firstSize(c, "num_attention_heads", "n_head", 71);
    const char* kvKey = c.has("num_kv_heads") || !c.has("n_head_kv") ? "num_kv_heads" : "n_head_kv";
    s.kvHeads = c.optionalPositiveInt(kvKey).value_or(s.heads);
    s.positions = c.optionalPositiveInt("max_position_embeddings").value_or(2048);
    s.eps = c.positiveNumber("layer_norm_epsilon", 1e-5);
    const bool alibi = c.boolean("alibi", false);
    s.qkvBias = s.oBias = s.mlpBias = c.boolean("bias", false);
    s.tied = c.boolean("tie_word_embeddings", true);
    s.activation = c.string("activation", "gelu");
    requireActivation(c, "activation", s.activation);
    requireDivisible(c, s, hiddenKey, "num_attention_heads");
    s.inner = c.optionalPositiveInt("ffn_hidden_size").value_or(4 * s.hidden);
    s.names = bloomNames();
    s.notes.push_back(alibi ? "ALiBi" : "rotary");
    readLayout(c, s, kvKey);
    s.score.scale = 1.0 / std::sqrt(static_cast<double>(s.headDim));
    if (alibi) {
        // build_alibi_tensor in modeling_falcon casts the slopes to bfloat16; the logits are
        // (q·k + slope·j) / √d, so the ScoreSpec slope is slope / √d. Two things of Hugging
        // Face's code are not followed: with an integer attention mask it also rounds slope·j
        // to bfloat16 (≤ 2^-9 relative; ScoreSpec is linear in j), and recent versions fold
        // alibi/√d into the causal mask for SDPA, which their eager path (output_attentions
        // without head_mask) then adds a second time.
        s.positionKind = DecoderSpec::Positions::Alibi;
        for (double slope : alibiSlopes(s.heads))
            s.score.alibiSlopes.push_back(static_cast<float>(c10::BFloat16(static_cast<float>(slope))) * s.score.scale);
    } else {
        useRope(s, readRope(c, s.headDim));
    }
    s.norm = DecoderSpec::Norm::Layer;
    s.qkv = DecoderSpec::Qkv::Grouped;
    s.branchesFirst = true;  // FalconDecoderLayer: mlp_output + attention_output, then the residual
    s.gated = false;
    return s;
}

}  // namespace attnscope
