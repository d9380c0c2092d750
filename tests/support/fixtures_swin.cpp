#include "fixtures_swin.h"

namespace attnscope::testing {

Checkpoint makeSwin(const SwinSpec& s, unsigned seed) {
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::string pre = s.prefix ? "swin." : "";
    nlohmann::json id2label = nlohmann::json::object();
    for (int i = 0; i < s.labels; ++i) id2label[std::to_string(i)] = "class" + std::to_string(i);
    c.config = {{"model_type", "swin"},    {"image_size", s.imageSize}, {"patch_size", s.patch},
                {"num_channels", 3},       {"embed_dim", s.embed},      {"depths", s.depths},
                {"num_heads", s.heads},    {"window_size", s.window},   {"mlp_ratio", s.mlpRatio},
                {"qkv_bias", true},        {"hidden_act", "gelu"},      {"use_absolute_embeddings", false},
                {"layer_norm_eps", s.eps}, {"drop_path_rate", 0.1},     {"id2label", id2label}};
    auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, float scale, bool bias = true) {
        c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
        if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.1f);
    };
    auto norm = [&](const std::string& name, std::int64_t width) {
        c.tensors[name + ".weight"] = randomTensor({width}, rng, 0.1f, 1.f);
        c.tensors[name + ".bias"] = randomTensor({width}, rng, 0.1f);
    };
    const std::int64_t E = s.embed, span = 2 * s.window - 1;
    c.tensors[pre + "embeddings.patch_embeddings.projection.weight"] =
            randomTensor({E, 3, s.patch, s.patch}, rng, 0.15f);
    c.tensors[pre + "embeddings.patch_embeddings.projection.bias"] = randomTensor({E}, rng, 0.1f);
    norm(pre + "embeddings.norm", E);
    const int stages = static_cast<int>(s.depths.size());
    for (int st = 0; st < stages; ++st) {
        const std::int64_t C = E << st, I = static_cast<std::int64_t>(s.mlpRatio * C), H = s.heads[st];
        const std::string sp = pre + "encoder.layers." + std::to_string(st) + ".";
        for (int b = 0; b < s.depths[st]; ++b) {
            const std::string p = sp + "blocks." + std::to_string(b) + ".";
            norm(p + "layernorm_before", C);
            // Large enough that the bias and the shift mask move the maps well past the tolerances.
            c.tensors[p + "attention.self.relative_position_bias_table"] = randomTensor({span * span, H}, rng, 1.0f);
            for (const char* n : {"attention.self.query", "attention.self.key", "attention.self.value"})
                linear(p + n, C, C, 0.4f);
            linear(p + "attention.output.dense", C, C, 0.2f);
            norm(p + "layernorm_after", C);
            linear(p + "intermediate.dense", I, C, 0.2f);
            linear(p + "output.dense", C, I, 0.2f);
        }
        if (st + 1 < stages) {
            norm(sp + "downsample.norm", 4 * C);
            linear(sp + "downsample.reduction", 2 * C, 4 * C, 0.2f, false);
        }
    }
    norm(pre + "layernorm", E << (stages - 1));
    if (s.labels > 0) linear("classifier", s.labels, E << (stages - 1), 0.3f);
    return c;
}

}  // namespace attnscope::testing
