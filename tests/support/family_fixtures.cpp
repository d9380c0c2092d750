#include "family_fixtures.h"

#include "attnscope/io/safetensors.h"

#include <cstdio>

namespace attnscope::testing {

void roundTensors(Checkpoint& c, const std::string& dtype) {
    for (auto& [name, t] : c.tensors)
        for (auto& v : t.values) v = roundTo(v, dtype);
}

void writeCheckpoint(const std::filesystem::path& dir, const Checkpoint& c, const WriteOptions& o) {
    std::filesystem::create_directories(dir);
    writeText(dir / "config.json", c.config.dump(2));
    std::vector<std::vector<TensorBytes>> shards(static_cast<std::size_t>(std::max(1, o.shards)));
    nlohmann::json weightMap = nlohmann::json::object();
    std::size_t i = 0;
    auto shardName = [&](std::size_t s) {
        char name[64];
        std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", s + 1, shards.size());
        return std::string(name);
    };
    for (const auto& [name, t] : c.tensors) {
        const std::size_t s = i++ % shards.size();
        weightMap[name] = shardName(s);
        shards[s].push_back(encodeTensor(name, t, o.dtype));
    }
    for (const auto& b : o.extra) {
        weightMap[b.name] = shardName(0);
        shards[0].push_back(b);
    }
    if (shards.size() == 1) {
        writeSafetensors(dir / "model.safetensors", shards[0], {{"format", "pt"}});
        return;
    }
    for (std::size_t s = 0; s < shards.size(); ++s) writeSafetensors(dir / shardName(s), shards[s], {{"format", "pt"}});
    nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", weightMap}};
    writeText(dir / "model.safetensors.index.json", index.dump(2));
}

int llamaHeadDim(const LlamaSpec& s) { return s.headDim ? s.headDim : s.hidden / s.heads; }

Checkpoint makeLlama(const LlamaSpec& s, unsigned seed) {
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::int64_t E = s.hidden, I = s.inner, d = llamaHeadDim(s), H = s.heads, G = s.kvHeads;
    const bool bias = s.qkvBias || s.type == "qwen2";
    // Seeded normal values, or (randomWeights off) a fixed pattern of the same scale, without the
    // random draws that dominate writing a large checkpoint under the sanitizers.
    const auto weights = [&](std::vector<std::int64_t> shape, float scale, float offset = 0.f) {
        if (s.randomWeights) return randomTensor(std::move(shape), rng, scale, offset);
        Tensor t{std::move(shape), {}};
        std::int64_t n = 1;
        for (auto size : t.shape) n *= size;
        t.values.resize(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = offset + scale * float(int(i % 7) - 3) / 3.f;
        return t;
    };
    c.config = {{"model_type", s.type},
                {"vocab_size", s.vocab},
                {"hidden_size", s.hidden},
                {"intermediate_size", s.inner},
                {"num_hidden_layers", s.layers},
                {"num_attention_heads", s.heads},
                {"num_key_value_heads", s.kvHeads},
                {"max_position_embeddings", s.positions},
                {"rms_norm_eps", s.eps},
                {"hidden_act", "silu"},
                {"tie_word_embeddings", s.tied}};
    if (s.headDim) c.config["head_dim"] = s.headDim;
    if (s.ropeParameters) {
        nlohmann::json p = s.ropeScaling.is_object() ? s.ropeScaling : nlohmann::json{{"rope_type", "default"}};
        p["rope_theta"] = s.theta;
        c.config["rope_parameters"] = p;
    } else {
        c.config["rope_theta"] = s.theta;
        c.config["rope_scaling"] = s.ropeScaling;
    }
    if (s.type == "mistral") c.config["sliding_window"] = s.window ? nlohmann::json(s.window) : nlohmann::json();
    if (s.type == "llama" && s.qkvBias) c.config["attention_bias"] = true;
    c.tensors["model.embed_tokens.weight"] = weights({s.vocab, E}, 0.8f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        c.tensors[p + "input_layernorm.weight"] = weights({E}, 0.1f, 1.f);
        c.tensors[p + "self_attn.q_proj.weight"] = weights({H * d, E}, 0.35f);
        c.tensors[p + "self_attn.k_proj.weight"] = weights({G * d, E}, 0.35f);
        c.tensors[p + "self_attn.v_proj.weight"] = weights({G * d, E}, 0.3f);
        c.tensors[p + "self_attn.o_proj.weight"] = weights({E, H * d}, 0.2f);
        if (bias) {
            c.tensors[p + "self_attn.q_proj.bias"] = weights({H * d}, 0.3f);
            c.tensors[p + "self_attn.k_proj.bias"] = weights({G * d}, 0.3f);
            c.tensors[p + "self_attn.v_proj.bias"] = weights({G * d}, 0.3f);
        }
        if (s.type == "llama" && s.qkvBias) c.tensors[p + "self_attn.o_proj.bias"] = weights({E}, 0.1f);
        c.tensors[p + "post_attention_layernorm.weight"] = weights({E}, 0.1f, 1.f);
        c.tensors[p + "mlp.gate_proj.weight"] = weights({I, E}, 0.2f);
        c.tensors[p + "mlp.up_proj.weight"] = weights({I, E}, 0.2f);
        c.tensors[p + "mlp.down_proj.weight"] = weights({E, I}, 0.2f);
    }
    c.tensors["model.norm.weight"] = weights({E}, 0.1f, 1.f);
    if (!s.tied) c.tensors["lm_head.weight"] = weights({s.vocab, E}, 0.5f);
    return c;
}

Checkpoint makeBert(const BertSpec& s, unsigned seed) {
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::int64_t E = s.hidden, I = s.inner;
    const bool distil = s.type == "distilbert";
    const std::string pre = s.prefix ? s.type + "." : "";
    if (distil) {
        c.config = {{"model_type", "distilbert"},
                    {"vocab_size", s.vocab},
                    {"dim", s.hidden},
                    {"hidden_dim", s.inner},
                    {"n_layers", s.layers},
                    {"n_heads", s.heads},
                    {"max_position_embeddings", s.positions},
                    {"activation", s.activation},
                    {"sinusoidal_pos_embds", false}};
    } else {
        c.config = {{"model_type", s.type},
                    {"vocab_size", s.vocab},
                    {"hidden_size", s.hidden},
                    {"intermediate_size", s.inner},
                    {"num_hidden_layers", s.layers},
                    {"num_attention_heads", s.heads},
                    {"max_position_embeddings", s.positions},
                    {"type_vocab_size", s.typeVocab},
                    {"layer_norm_eps", 1e-12},
                    {"hidden_act", s.activation},
                    {"position_embedding_type", "absolute"}};
        if (s.type == "roberta") c.config["pad_token_id"] = s.pad;
    }
    auto norm = [&](const std::string& name) {
        const bool legacy = s.legacyNorm && !distil;
        c.tensors[name + (legacy ? ".gamma" : ".weight")] = randomTensor({E}, rng, 0.1f, 1.f);
        c.tensors[name + (legacy ? ".beta" : ".bias")] = randomTensor({E}, rng, 0.1f);
    };
    auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, float scale) {
        c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
        c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.1f);
    };
    c.tensors[pre + "embeddings.word_embeddings.weight"] = randomTensor({s.vocab, E}, rng, 0.6f);
    c.tensors[pre + "embeddings.position_embeddings.weight"] = randomTensor({s.positions, E}, rng, 0.4f);
    if (!distil) c.tensors[pre + "embeddings.token_type_embeddings.weight"] = randomTensor({s.typeVocab, E}, rng, 0.4f);
    norm(pre + "embeddings.LayerNorm");
    for (int l = 0; l < s.layers; ++l) {
        if (distil) {
            const std::string p = pre + "transformer.layer." + std::to_string(l) + ".";
            for (const char* n : {"attention.q_lin", "attention.k_lin", "attention.v_lin"}) linear(p + n, E, E, 0.35f);
            linear(p + "attention.out_lin", E, E, 0.2f);
            norm(p + "sa_layer_norm");
            linear(p + "ffn.lin1", I, E, 0.2f);
            linear(p + "ffn.lin2", E, I, 0.2f);
            norm(p + "output_layer_norm");
        } else {
            const std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
            for (const char* n : {"attention.self.query", "attention.self.key", "attention.self.value"})
                linear(p + n, E, E, 0.35f);
            linear(p + "attention.output.dense", E, E, 0.2f);
            norm(p + "attention.output.LayerNorm");
            linear(p + "intermediate.dense", I, E, 0.2f);
            linear(p + "output.dense", E, I, 0.2f);
            norm(p + "output.LayerNorm");
        }
    }
    const bool roberta = s.type == "roberta";
    // Present in real checkpoints; used by BertForSequenceClassification only (RoBERTa's head has its own dense).
    if (!distil && !(roberta && s.labels > 0)) linear(pre + "pooler.dense", E, E, 0.2f);
    if (s.labels > 0) {
        nlohmann::json id2label = nlohmann::json::object();
        for (int i = 0; i < s.labels; ++i) id2label[std::to_string(i)] = "class" + std::to_string(i);
        c.config["id2label"] = id2label;
        if (roberta) {
            linear("classifier.dense", E, E, 0.3f);
            linear("classifier.out_proj", s.labels, E, 0.5f);
        } else {
            if (distil) linear("pre_classifier", E, E, 0.3f);
            linear("classifier", s.labels, E, 0.5f);
        }
    }
    return c;
}

Checkpoint makeVit(const VitSpec& s, unsigned seed) {
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::int64_t E = s.hidden, I = s.inner, g = s.imageSize / s.patch;
    const std::string pre = s.prefix ? "vit." : "";
    nlohmann::json id2label = nlohmann::json::object();
    for (int i = 0; i < s.labels; ++i) id2label[std::to_string(i)] = "class" + std::to_string(i);
    c.config = {{"model_type", "vit"},
                {"hidden_size", s.hidden},
                {"intermediate_size", s.inner},
                {"num_hidden_layers", s.layers},
                {"num_attention_heads", s.heads},
                {"image_size", s.imageSize},
                {"patch_size", s.patch},
                {"num_channels", 3},
                {"qkv_bias", true},
                {"hidden_act", "gelu"},
                {"layer_norm_eps", 1e-12},
                {"id2label", id2label}};
    auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, float scale) {
        c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
        c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.1f);
    };
    auto norm = [&](const std::string& name) {
        c.tensors[name + ".weight"] = randomTensor({E}, rng, 0.1f, 1.f);
        c.tensors[name + ".bias"] = randomTensor({E}, rng, 0.1f);
    };
    c.tensors[pre + "embeddings.cls_token"] = randomTensor({1, 1, E}, rng, 0.5f);
    c.tensors[pre + "embeddings.position_embeddings"] = randomTensor({1, g * g + 1, E}, rng, 0.3f);
    c.tensors[pre + "embeddings.patch_embeddings.projection.weight"] =
            randomTensor({E, 3, s.patch, s.patch}, rng, 0.15f);
    c.tensors[pre + "embeddings.patch_embeddings.projection.bias"] = randomTensor({E}, rng, 0.1f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
        norm(p + "layernorm_before");
        for (const char* n : {"attention.attention.query", "attention.attention.key", "attention.attention.value"})
            linear(p + n, E, E, 0.35f);
        linear(p + "attention.output.dense", E, E, 0.2f);
        norm(p + "layernorm_after");
        linear(p + "intermediate.dense", I, E, 0.2f);
        linear(p + "output.dense", E, I, 0.2f);
    }
    norm(pre + "layernorm");
    if (s.labels) linear("classifier", s.labels, E, 0.3f);
    return c;
}

}  // namespace attnscope::testing
