#include "fixtures_vision.h"

#include <cmath>

namespace attnscope::testing {

namespace {
namespace fixtures_vision {  // this file's helpers, apart from the other support files' in a unity build

// DeiT and BEiT keep ViT's layer names and an intermediate_size.
bool isDeit(const VisionModelSpec& s) { return s.type == "deit" || s.type == "beit"; }

int mlpWidth(const VisionModelSpec& s) {
    if (isDeit(s)) return s.inner;
    const int width = static_cast<int>(std::floor(s.hidden * s.mlpRatio));
    return s.swiglu ? (static_cast<int>(width * 2.0 / 3.0) + 7) / 8 * 8 : width;  // Dinov2SwiGLUFFN's
}

std::string prefixOf(const VisionModelSpec& s) { return s.prefix ? s.type + "." : ""; }

void linearInto(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t out, std::int64_t in,
                float scale, bool bias = true) {
    c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
    if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.1f);
}

void normInto(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t E) {
    c.tensors[name + ".weight"] = randomTensor({E}, rng, 0.1f, 1.f);
    c.tensors[name + ".bias"] = randomTensor({E}, rng, 0.1f);
}

Checkpoint makeBeit(const VisionModelSpec& s, std::mt19937& rng) {
    Checkpoint c;
    const std::int64_t E = s.hidden, I = s.inner, g = s.imageSize / s.patch, H = s.heads;
    const std::int64_t tableRows = (2 * g - 1) * (2 * g - 1) + 3;
    const std::string pre = prefixOf(s);
    nlohmann::json id2label = nlohmann::json::object();
    for (int i = 0; i < s.labels; ++i) id2label[std::to_string(i)] = "class" + std::to_string(i);
    c.config = {{"model_type", "beit"},
                {"hidden_size", s.hidden},
                {"intermediate_size", s.inner},
                {"num_hidden_layers", s.layers},
                {"num_attention_heads", s.heads},
                {"image_size", s.imageSize},
                {"patch_size", s.patch},
                {"num_channels", 3},
                {"hidden_act", "gelu"},
                {"layer_norm_eps", 1e-12},
                {"use_absolute_position_embeddings", s.absolute},
                {"use_relative_position_bias", s.layerBias},
                {"use_shared_relative_position_bias", s.sharedBias},
                {"layer_scale_init_value", s.layerScale ? 0.1 : 0.0},
                {"use_mean_pooling", s.meanPooling},
                {"id2label", id2label}};
    c.tensors[pre + "embeddings.cls_token"] = randomTensor({1, 1, E}, rng, 0.5f);
    if (s.absolute) c.tensors[pre + "embeddings.position_embeddings"] = randomTensor({1, g * g + 1, E}, rng, 0.3f);
    c.tensors[pre + "embeddings.patch_embeddings.projection.weight"] =
            randomTensor({E, 3, s.patch, s.patch}, rng, 0.15f);
    c.tensors[pre + "embeddings.patch_embeddings.projection.bias"] = randomTensor({E}, rng, 0.1f);
    const std::string table = "relative_position_bias.relative_position_bias_table";
    if (s.sharedBias) c.tensors[pre + "encoder." + table] = randomTensor({tableRows, H}, rng, 1.0f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
        normInto(c, rng, p + "layernorm_before", E);
        linearInto(c, rng, p + "attention.attention.query", E, E, 0.35f);
        linearInto(c, rng, p + "attention.attention.key", E, E, 0.35f, false);  // BEiT's key has no bias
        linearInto(c, rng, p + "attention.attention.value", E, E, 0.35f);
        if (s.layerBias) c.tensors[p + "attention.attention." + table] = randomTensor({tableRows, H}, rng, 1.0f);
        linearInto(c, rng, p + "attention.output.dense", E, E, 0.2f);
        normInto(c, rng, p + "layernorm_after", E);
        linearInto(c, rng, p + "intermediate.dense", I, E, 0.2f);
        linearInto(c, rng, p + "output.dense", E, I, 0.2f);
        if (s.layerScale) {
            c.tensors[p + "lambda_1"] = randomTensor({E}, rng, 0.5f, 1.f);
            c.tensors[p + "lambda_2"] = randomTensor({E}, rng, 0.5f, 1.f);
        }
    }
    normInto(c, rng, pre + (s.meanPooling ? "pooler.layernorm" : "layernorm"), E);
    if (s.labels > 0) linearInto(c, rng, "classifier", s.labels, E, 0.3f);
    return c;
}

}  // namespace fixtures_vision
}  // namespace

Checkpoint makeVisionModel(const VisionModelSpec& s, unsigned seed) {
    using namespace fixtures_vision;
    std::mt19937 rng(seed);
    Checkpoint c;
    if (s.type == "beit") return makeBeit(s, rng);
    const bool deit = isDeit(s), registers = s.type == "dinov2_with_registers";
    const std::int64_t E = s.hidden, I = mlpWidth(s), g = s.imageSize / s.patch;
    const std::string pre = prefixOf(s);
    nlohmann::json id2label = nlohmann::json::object();
    for (int i = 0; i < s.labels; ++i) id2label[std::to_string(i)] = "class" + std::to_string(i);
    c.config = {{"model_type", s.type},
                {"hidden_size", s.hidden},
                {"num_hidden_layers", s.layers},
                {"num_attention_heads", s.heads},
                {"image_size", s.imageSize},
                {"patch_size", s.patch},
                {"num_channels", 3},
                {"qkv_bias", true},
                {"hidden_act", "gelu"},
                {"layer_norm_eps", deit ? 1e-12 : 1e-6},
                {"id2label", id2label}};
    if (deit) {
        c.config["intermediate_size"] = s.inner;
    } else {
        c.config["mlp_ratio"] = s.mlpRatio;
        c.config["layerscale_value"] = 1.0;
        c.config["use_swiglu_ffn"] = s.swiglu;
    }
    if (registers) c.config["num_register_tokens"] = s.registers;
    auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, float scale) {
        c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
        c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.1f);
    };
    auto norm = [&](const std::string& name) {
        c.tensors[name + ".weight"] = randomTensor({E}, rng, 0.1f, 1.f);
        c.tensors[name + ".bias"] = randomTensor({E}, rng, 0.1f);
    };
    const std::int64_t lead = deit ? 2 : 1;
    c.tensors[pre + "embeddings.cls_token"] = randomTensor({1, 1, E}, rng, 0.5f);
    if (deit) c.tensors[pre + "embeddings.distillation_token"] = randomTensor({1, 1, E}, rng, 0.5f);
    if (!deit) c.tensors[pre + "embeddings.mask_token"] = randomTensor({1, E}, rng, 0.1f);
    if (registers) c.tensors[pre + "embeddings.register_tokens"] = randomTensor({1, s.registers, E}, rng, 0.5f);
    c.tensors[pre + "embeddings.position_embeddings"] = randomTensor({1, g * g + lead, E}, rng, 0.3f);
    c.tensors[pre + "embeddings.patch_embeddings.projection.weight"] =
            randomTensor({E, 3, s.patch, s.patch}, rng, 0.15f);
    c.tensors[pre + "embeddings.patch_embeddings.projection.bias"] = randomTensor({E}, rng, 0.1f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
        norm(p + (deit ? "layernorm_before" : "norm1"));
        for (const char* n : {"attention.attention.query", "attention.attention.key", "attention.attention.value"})
            linear(p + n, E, E, 0.35f);
        linear(p + "attention.output.dense", E, E, 0.2f);
        norm(p + (deit ? "layernorm_after" : "norm2"));
        if (s.swiglu) {
            linear(p + "mlp.weights_in", 2 * I, E, 0.2f);
            linear(p + "mlp.weights_out", E, I, 0.2f);
        } else {
            linear(p + (deit ? "intermediate.dense" : "mlp.fc1"), I, E, 0.2f);
            linear(p + (deit ? "output.dense" : "mlp.fc2"), E, I, 0.2f);
        }
        if (!deit) {  // layer scales around 1 with a spread, so that folding them is tested
            c.tensors[p + "layer_scale1.lambda1"] = randomTensor({E}, rng, 0.5f, 1.f);
            c.tensors[p + "layer_scale2.lambda1"] = randomTensor({E}, rng, 0.5f, 1.f);
        }
    }
    norm(pre + "layernorm");
    if (s.labels > 0) {
        if (deit && s.teacher) {
            linear("cls_classifier", s.labels, E, 0.3f);
            linear("distillation_classifier", s.labels, E, 0.3f);
        } else {
            linear("classifier", s.labels, deit ? E : 2 * E, 0.3f);
        }
    }
    return c;
}

}  // namespace attnscope::testing
