#include "fixtures_clip.h"

#include <fstream>

namespace attnscope::testing {

namespace {
namespace fixtures_clip {  // this file's helpers, apart from the other support files' in a unity build

struct Writer {
    Checkpoint& c;
    std::mt19937& rng;

    void linear(const std::string& name, std::int64_t out, std::int64_t in, float scale, bool bias = true) {
        c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
        if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.1f);
    }
    void norm(const std::string& name, std::int64_t E) {
        c.tensors[name + ".weight"] = randomTensor({E}, rng, 0.1f, 1.f);
        c.tensors[name + ".bias"] = randomTensor({E}, rng, 0.1f);
    }
    // encoder.layers.N. of CLIPEncoderLayer / SiglipEncoderLayer.
    void layers(const std::string& prefix, int count, std::int64_t E, std::int64_t I) {
        for (int l = 0; l < count; ++l) {
            const std::string p = prefix + "encoder.layers." + std::to_string(l) + ".";
            norm(p + "layer_norm1", E);
            for (const char* n : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"})
                linear(p + n, E, E, 0.35f);
            linear(p + "self_attn.out_proj", E, E, 0.25f);
            norm(p + "layer_norm2", E);
            linear(p + "mlp.fc1", I, E, 0.25f);
            linear(p + "mlp.fc2", E, I, 0.25f);
        }
    }
};

nlohmann::json towerConfig(int hidden, int inner, int layers, int heads, const std::string& act) {
    return {{"hidden_size", hidden},
            {"intermediate_size", inner},
            {"num_hidden_layers", layers},
            {"num_attention_heads", heads},
            {"hidden_act", act}};
}

}  // namespace fixtures_clip
}  // namespace

Checkpoint makeClip(const ClipSpec& s, unsigned seed) {
    using namespace fixtures_clip;
    std::mt19937 rng(seed);
    Checkpoint c;
    Writer w{c, rng};
    const bool siglip = s.type == "siglip";
    const std::int64_t E = s.visionHidden, T = s.textHidden, p = s.patch, g = s.imageSize / s.patch;
    nlohmann::json vision = towerConfig(s.visionHidden, s.visionInner, s.visionLayers, s.visionHeads, s.visionAct);
    vision["image_size"] = s.imageSize;
    vision["patch_size"] = s.patch;
    vision["num_channels"] = 3;
    vision["layer_norm_eps"] = siglip ? 1e-6 : 1e-5;
    nlohmann::json text = towerConfig(s.textHidden, s.textInner, s.textLayers, s.textHeads, s.textAct);
    text["vocab_size"] = s.vocab;
    text["max_position_embeddings"] = s.positions;
    text["layer_norm_eps"] = siglip ? 1e-6 : 1e-5;
    if (!siglip) text["eos_token_id"] = s.eos;
    if (siglip) text["projection_size"] = s.visionHidden;  // the text head's width: the image embedding's
    c.config = {{"model_type", s.type}, {"text_config", text}, {"vision_config", vision}};
    if (!siglip) c.config["projection_dim"] = s.projection;

    const std::string v = "vision_model.", t = "text_model.";
    if (!siglip) c.tensors[v + "embeddings.class_embedding"] = randomTensor({E}, rng, 0.5f);
    c.tensors[v + "embeddings.patch_embedding.weight"] = randomTensor({E, 3, p, p}, rng, 0.15f);
    if (siglip) c.tensors[v + "embeddings.patch_embedding.bias"] = randomTensor({E}, rng, 0.1f);
    c.tensors[v + "embeddings.position_embedding.weight"] = randomTensor({g * g + (siglip ? 0 : 1), E}, rng, 0.3f);
    if (!siglip) w.norm(v + "pre_layrnorm", E);
    w.layers(v, s.visionLayers, E, s.visionInner);
    w.norm(v + "post_layernorm", E);
    if (siglip) {  // SiglipMultiheadAttentionPoolingHead
        c.tensors[v + "head.probe"] = randomTensor({1, 1, E}, rng, 0.5f);
        c.tensors[v + "head.attention.in_proj_weight"] = randomTensor({3 * E, E}, rng, 0.35f);
        c.tensors[v + "head.attention.in_proj_bias"] = randomTensor({3 * E}, rng, 0.1f);
        w.linear(v + "head.attention.out_proj", E, E, 0.25f);
        w.norm(v + "head.layernorm", E);
        w.linear(v + "head.mlp.fc1", s.visionInner, E, 0.25f);
        w.linear(v + "head.mlp.fc2", E, s.visionInner, 0.25f);
    } else {
        w.linear("visual_projection", s.projection, E, 0.3f, false);
    }
    c.tensors[t + "embeddings.token_embedding.weight"] = randomTensor({s.vocab, T}, rng, 0.5f);
    c.tensors[t + "embeddings.position_embedding.weight"] = randomTensor({s.positions, T}, rng, 0.3f);
    w.layers(t, s.textLayers, T, s.textInner);
    w.norm(t + "final_layer_norm", T);
    if (siglip)
        w.linear(t + "head", E, T, 0.3f);
    else
        w.linear("text_projection", s.projection, T, 0.3f, false);
    const std::vector<std::int64_t> scalar = s.scalarShape ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{1};
    c.tensors["logit_scale"] = Tensor{scalar, {static_cast<float>(s.logitScale)}};
    if (siglip) c.tensors["logit_bias"] = Tensor{scalar, {static_cast<float>(s.logitBias)}};
    return c;
}

void writeClipTokenizer(const std::filesystem::path& dir) {
    nlohmann::json vocab = nlohmann::json::object();
    for (int i = 0; i < 26; ++i) {
        vocab[std::string(1, static_cast<char>('a' + i))] = i;
        vocab[std::string(1, static_cast<char>('a' + i)) + "</w>"] = 26 + i;
    }
    const char* merged[] = {"th", "the</w>", "ca", "cat</w>", "do", "dog</w>"};
    for (int i = 0; i < 6; ++i) vocab[merged[i]] = 52 + i;
    for (int i = 58; i < 62; ++i) vocab["<unused" + std::to_string(i) + ">"] = i;
    vocab["<|startoftext|>"] = 62;
    vocab["<|endoftext|>"] = 63;
    const auto special = [](int id, const char* content, bool normalized) {
        return nlohmann::json{{"id", id},        {"content", content},       {"single_word", false}, {"lstrip", false},
                              {"rstrip", false}, {"normalized", normalized}, {"special", true}};
    };
    const nlohmann::json j = {
            {"version", "1.0"},
            {"truncation", nullptr},
            {"padding", nullptr},
            {"added_tokens", {special(62, "<|startoftext|>", true), special(63, "<|endoftext|>", false)}},
            {"normalizer",
             {{"type", "Sequence"},
              {"normalizers",
               {{{"type", "NFC"}},
                {{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}},
                {{"type", "Lowercase"}}}}}},
            {"pre_tokenizer",
             {{"type", "Sequence"},
              {"pretokenizers",
               {{{"type", "Split"},
                 {"pattern",
                  {{"Regex",
                    "<\\|startoftext\\|>|<\\|endoftext\\|>|'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+"}}},
                 {"behavior", "Removed"},
                 {"invert", true}},
                {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}}}}},
            {"post_processor",
             {{"type", "RobertaProcessing"},
              {"sep", {"<|endoftext|>", 63}},
              {"cls", {"<|startoftext|>", 62}},
              {"trim_offsets", false},
              {"add_prefix_space", false}}},
            {"decoder",
             {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
            {"model",
             {{"type", "BPE"},
              {"dropout", nullptr},
              {"unk_token", "<|endoftext|>"},
              {"continuing_subword_prefix", ""},
              {"end_of_word_suffix", "</w>"},
              {"fuse_unk", false},
              {"byte_fallback", false},
              {"vocab", vocab},
              {"merges", {"t h", "th e</w>", "c a", "ca t</w>", "d o", "do g</w>"}}}}};
    writeText(dir / "tokenizer.json", j.dump());
}

}  // namespace attnscope::testing
