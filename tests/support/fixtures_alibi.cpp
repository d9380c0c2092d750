#include "fixtures_alibi.h"

#include <algorithm>

namespace attnscope::testing {

namespace {
namespace fixtures_alibi {  // this file's helpers, apart from the other support files' in a unity build

// name.weight [out, in] and, when `bias`, name.bias [out].
void linear(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t out, std::int64_t in, float scale,
            bool bias = true) {
    c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
    if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.2f);
}

void norm(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t size) {
    c.tensors[name + ".weight"] = randomTensor({size}, rng, 0.1f, 1.f);
    c.tensors[name + ".bias"] = randomTensor({size}, rng, 0.1f);
}

}  // namespace fixtures_alibi
}  // namespace

bool AlibiFamilyRun::inLayer(int layer) const {
    return temperatureLayers.empty() ||
           std::find(temperatureLayers.begin(), temperatureLayers.end(), layer) != temperatureLayers.end();
}

Checkpoint makeOpt(const OptSpec& s, unsigned seed) {
    using namespace fixtures_alibi;
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::int64_t E = s.hidden, I = s.inner, P = s.projDim ? s.projDim : s.hidden;
    c.config = {{"model_type", "opt"},
                {"vocab_size", s.vocab},
                {"hidden_size", s.hidden},
                {"ffn_dim", s.inner},
                {"num_hidden_layers", s.layers},
                {"num_attention_heads", s.heads},
                {"max_position_embeddings", s.positions},
                {"do_layer_norm_before", s.preNorm},
                {"_remove_final_layer_norm", s.removeFinalNorm},
                {"word_embed_proj_dim", P},
                {"activation_function", s.activation},
                {"enable_bias", s.bias},
                {"layer_norm_elementwise_affine", s.affine},
                {"tie_word_embeddings", s.tied},
                {"pad_token_id", 1}};
    const std::string pre = s.prefix ? "model.decoder." : "decoder.";
    auto ln = [&](const std::string& name) {
        if (s.affine) norm(c, rng, name, E);
    };
    c.tensors[pre + "embed_tokens.weight"] = randomTensor({s.vocab, P}, rng, 0.8f);
    c.tensors[pre + "embed_positions.weight"] = randomTensor({s.positions + 2, E}, rng, 0.5f);
    if (P != E) {
        c.tensors[pre + "project_in.weight"] = randomTensor({E, P}, rng, 0.4f);
        c.tensors[pre + "project_out.weight"] = randomTensor({P, E}, rng, 0.4f);
    }
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        ln(p + "self_attn_layer_norm");
        linear(c, rng, p + "self_attn.q_proj", E, E, 0.35f, s.bias);
        linear(c, rng, p + "self_attn.k_proj", E, E, 0.35f, s.bias);
        linear(c, rng, p + "self_attn.v_proj", E, E, 0.3f, s.bias);
        linear(c, rng, p + "self_attn.out_proj", E, E, 0.2f, s.bias);
        ln(p + "final_layer_norm");
        linear(c, rng, p + "fc1", I, E, 0.2f, s.bias);
        linear(c, rng, p + "fc2", E, I, 0.2f, s.bias);
    }
    if (s.preNorm && !s.removeFinalNorm) ln(pre + "final_layer_norm");
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({s.vocab, P}, rng, 0.5f);
    return c;
}

Checkpoint makeBloom(const BloomSpec& s, unsigned seed) {
    using namespace fixtures_alibi;
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::int64_t E = s.hidden;
    c.config = {{"model_type", "bloom"},
                {"vocab_size", s.vocab},
                {"hidden_size", s.hidden},
                {"n_layer", s.layers},
                {"n_head", s.heads},
                {"layer_norm_epsilon", 1e-5},
                {"apply_residual_connection_post_layernorm", s.residualAfterNorm},
                {"tie_word_embeddings", s.tied},
                {"pretraining_tp", 1},
                {"slow_but_exact", false}};
    const std::string pre = s.prefix ? "transformer." : "";
    c.tensors[pre + "word_embeddings.weight"] = randomTensor({s.vocab, E}, rng, 0.8f);
    norm(c, rng, pre + "word_embeddings_layernorm", E);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "h." + std::to_string(l) + ".";
        norm(c, rng, p + "input_layernorm", E);
        linear(c, rng, p + "self_attention.query_key_value", 3 * E, E, 0.35f);
        linear(c, rng, p + "self_attention.dense", E, E, 0.2f);
        norm(c, rng, p + "post_attention_layernorm", E);
        linear(c, rng, p + "mlp.dense_h_to_4h", 4 * E, E, 0.2f);
        linear(c, rng, p + "mlp.dense_4h_to_h", E, 4 * E, 0.15f);
    }
    norm(c, rng, pre + "ln_f", E);
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    return c;
}

Checkpoint makeFalcon(const FalconSpec& s, unsigned seed) {
    using namespace fixtures_alibi;
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::int64_t E = s.hidden, H = s.heads, d = E / H, I = s.inner ? s.inner : 4 * E;
    const std::int64_t G = s.kvHeads ? s.kvHeads : H;
    c.config = {{"model_type", s.type},
                {"vocab_size", s.vocab},
                {"hidden_size", s.hidden},
                {"alibi", s.alibi},
                {"multi_query", s.multiQuery},
                {"parallel_attn", s.parallel},
                {"bias", s.bias},
                {"max_position_embeddings", s.positions},
                {"rope_theta", s.theta},
                {"layer_norm_epsilon", 1e-5},
                {"activation", s.activation},
                {"tie_word_embeddings", s.tied}};
    c.config[s.legacyKeys ? "n_layer" : "num_hidden_layers"] = s.layers;
    c.config[s.legacyKeys ? "n_head" : "num_attention_heads"] = s.heads;
    if (s.kvHeads) c.config[s.legacyKeys ? "n_head_kv" : "num_kv_heads"] = s.kvHeads;
    if (!s.legacyKeys) c.config["new_decoder_architecture"] = s.newArch;
    if (s.inner) c.config["ffn_hidden_size"] = s.inner;
    if (s.normsInParallel) c.config["num_ln_in_parallel_attn"] = s.normsInParallel;
    const std::int64_t qkv = s.newArch ? (H + 2 * G) * d : s.multiQuery ? (H + 2) * d : 3 * E;
    const int norms = s.normsInParallel ? s.normsInParallel : (s.newArch ? 2 : 1);
    const std::string pre = s.prefix ? "transformer." : "";
    c.tensors[pre + "word_embeddings.weight"] = randomTensor({s.vocab, E}, rng, 0.8f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "h." + std::to_string(l) + ".";
        if (!s.parallel) {
            norm(c, rng, p + "input_layernorm", E);
            norm(c, rng, p + "post_attention_layernorm", E);
        } else if (norms == 2) {
            norm(c, rng, p + "ln_attn", E);
            norm(c, rng, p + "ln_mlp", E);
        } else {
            norm(c, rng, p + "input_layernorm", E);
        }
        linear(c, rng, p + "self_attention.query_key_value", qkv, E, 0.35f, s.bias);
        linear(c, rng, p + "self_attention.dense", E, E, 0.2f, s.bias);
        linear(c, rng, p + "mlp.dense_h_to_4h", I, E, 0.2f, s.bias);
        linear(c, rng, p + "mlp.dense_4h_to_h", E, I, 0.15f, s.bias);
    }
    norm(c, rng, pre + "ln_f", E);
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    return c;
}

}  // namespace attnscope::testing
