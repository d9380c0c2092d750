// Hugging Face checkpoints to GGUF as llama.cpp's convert_hf_to_gguf.py writes them (gguf_writer.h).
#include "gguf_writer.h"

#include <regex>

namespace attnscope::testing {

namespace {
namespace gguf_convert {  // this file's helpers, apart from the other support files' in a unity build

// llama-arch.cpp's tensor names for a Hugging Face name (without "model.").
std::string ggufName(const std::string& hf, const std::string& arch) {
    static const std::regex layer(R"(layers\.(\d+)\.(.*))");
    const bool sandwich = arch == "gemma2" || arch == "gemma3";
    std::smatch m;
    if (hf == "embed_tokens.weight") return "token_embd.weight";
    if (hf == "norm.weight") return "output_norm.weight";
    if (hf == "lm_head.weight") return "output.weight";
    if (!std::regex_match(hf, m, layer)) throw std::runtime_error("no GGUF name for " + hf);
    const std::map<std::string, std::string> names = {
            {"input_layernorm", "attn_norm"},
            {"post_attention_layernorm", sandwich ? "post_attention_norm" : "ffn_norm"},
            {"pre_feedforward_layernorm", "ffn_norm"},
            {"post_feedforward_layernorm", "post_ffw_norm"},
            {"self_attn.q_proj", "attn_q"},
            {"self_attn.k_proj", "attn_k"},
            {"self_attn.v_proj", "attn_v"},
            {"self_attn.o_proj", "attn_output"},
            {"self_attn.qkv_proj", "attn_qkv"},
            {"self_attn.q_norm", "attn_q_norm"},
            {"self_attn.k_norm", "attn_k_norm"},
            {"mlp.gate_proj", "ffn_gate"},
            {"mlp.up_proj", "ffn_up"},
            {"mlp.down_proj", "ffn_down"},
            {"mlp.gate_up_proj", "ffn_up"}};
    const std::string rest = m[2];
    const auto dot = rest.rfind('.');
    return "blk." + std::string(m[1]) + "." + names.at(rest.substr(0, dot)) + rest.substr(dot);
}

bool isGemma(const std::string& arch) { return arch.rfind("gemma", 0) == 0; }

void metadata(GgufBuilder& g, const nlohmann::json& c, const std::string& arch) {
    const std::string a = arch + ".";
    g.str("general.architecture", arch);
    g.str("general.name", "test " + arch);
    const int hidden = c["hidden_size"], heads = c["num_attention_heads"];
    g.u32(a + "context_length", c["max_position_embeddings"].get<std::uint32_t>());
    g.u32(a + "embedding_length", static_cast<std::uint32_t>(hidden));
    g.u32(a + "block_count", c["num_hidden_layers"].get<std::uint32_t>());
    g.u32(a + "feed_forward_length", c["intermediate_size"].get<std::uint32_t>());
    g.u32(a + "attention.head_count", static_cast<std::uint32_t>(heads));
    g.u32(a + "attention.head_count_kv", c["num_key_value_heads"].get<std::uint32_t>());
    g.f32(a + "attention.layer_norm_rms_epsilon", c["rms_norm_eps"].get<float>());
    if (c.contains("rope_theta")) g.f32(a + "rope.freq_base", c["rope_theta"].get<float>());
    const int headDim = c.contains("head_dim") ? c["head_dim"].get<int>() : hidden / heads;
    if (c.contains("head_dim")) {
        g.u32(a + "attention.key_length", static_cast<std::uint32_t>(headDim));
        g.u32(a + "attention.value_length", static_cast<std::uint32_t>(headDim));
    }
    const double partial = c.value("partial_rotary_factor", 1.0);
    g.u32(a + "rope.dimension_count", static_cast<std::uint32_t>(headDim * partial));
    if (c.contains("sliding_window") && !c["sliding_window"].is_null())
        g.u32(a + "attention.sliding_window", c["sliding_window"].get<std::uint32_t>());
    if (arch == "gemma2") {
        for (const char* k : {"attn_logit_softcapping", "final_logit_softcapping"})
            if (c.contains(k) && !c[k].is_null()) g.f32(a + k, c[k].get<float>());
    }
    g.u32("general.alignment", 32);
}

}  // namespace gguf_convert
}  // namespace

GgufBuilder ggufFromCheckpoint(const Checkpoint& c, const std::string& arch, Ggml type) {
    using namespace gguf_convert;
    GgufBuilder g;
    metadata(g, c.config, arch);
    const int heads = c.config["num_attention_heads"], kvHeads = c.config["num_key_value_heads"];
    static const std::regex qk(R"(.*self_attn\.(q|k)_proj\.(weight|bias))");
    for (const auto& [full, t] : c.tensors) {
        const std::string hf = full.rfind("model.", 0) == 0 ? full.substr(6) : full;
        std::vector<float> v = t.values;
        std::smatch m;
        if (arch == "llama" && std::regex_match(hf, m, qk)) {
            const std::int64_t rows = t.shape[0], cols = t.shape.size() > 1 ? t.shape[1] : 1;
            v = permuteRows(v, rows, cols, m[1] == "q" ? heads : kvHeads);
        }
        // convert_hf_to_gguf.py's Gemma models store norm weights + 1.
        if (isGemma(arch) && t.shape.size() == 1 && hf.find("norm") != std::string::npos)
            for (float& x : v) x += 1.0f;
        g.tensor(ggufName(hf, arch), t.shape, v, t.shape.size() >= 2 ? type : Ggml::F32);
    }
    return g;
}

Checkpoint dequantisedCheckpoint(const Checkpoint& c, Ggml type) {
    Checkpoint out = c;
    for (auto& [name, t] : out.tensors)
        if (t.shape.size() >= 2) t.values = dequantisePlain(quantise(t.values, type), type, t.values.size());
    return out;
}

}  // namespace attnscope::testing
