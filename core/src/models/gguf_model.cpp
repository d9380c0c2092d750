// A GGUF file as a decoder family (families.h's loadGguf): its metadata is written as the
// Hugging Face config.json the family's own parser reads (so every default, window, soft-cap and
// rope rule is the family's), then the tensor names become llama.cpp's (llama-arch.cpp's
// LLM_TENSOR_NAMES) and the two things the converter changed are undone:
//   - Gemma's norm weights are stored with the +1 added (convert_hf_to_gguf.py's Gemma models):
//     they are the full scale, so the (1 + w) norm becomes a plain float32 product;
//   - llama's Q/K row order is put back by the weight store (weights_gguf.cpp).
// A file without output.weight ties the head to token_embd. The tokenizer comes from the same
// file's tokenizer.ggml.* (tokenizer/gguf_tokenizer.cpp).
#include "decoder_spec.h"
#include "families.h"

#include "attnscope/io/gguf.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace attnscope {

namespace {

// general.architecture -> config.json model_type and the family's parser.
struct GgufFamily {
    const char* modelType;
    ParseDecoder* parse;
};
const std::map<std::string, GgufFamily>& ggufArchitectures() {
    static const std::map<std::string, GgufFamily> table = {
            {"llama", {"llama", llamaSpec}},    {"qwen2", {"qwen2", qwen2Spec}},
            {"qwen3", {"qwen3", qwen3Spec}},    {"gemma", {"gemma", gemmaSpec}},
            {"gemma2", {"gemma2", gemma2Spec}}, {"gemma3", {"gemma3_text", gemma3TextSpec}},
            {"phi3", {"phi3", phi3Spec}}};
    return table;
}

std::string architectureList() {
    std::string all;
    for (const auto& [arch, type] : ggufArchitectures()) all += (all.empty() ? "" : ", ") + arch;
    return all;
}

// The config.json Hugging Face has for the model the file was converted from, as far as the
// family parsers read it.
nlohmann::json configOf(const GgufFile& f, const std::string& arch) {
    const std::string a = arch + ".";
    nlohmann::json j;
    j["model_type"] = ggufArchitectures().at(arch).modelType;
    const GgufTensor* embed = f.find("token_embd.weight");
    if (!embed || embed->shape.size() != 2) f.fail("tensor 'token_embd.weight' (the token embeddings) is missing");
    j["vocab_size"] = embed->shape[0];
    j["hidden_size"] = f.requirePositive(a + "embedding_length");
    j["intermediate_size"] = f.requirePositive(a + "feed_forward_length");
    j["num_hidden_layers"] = f.requirePositive(a + "block_count");
    const std::int64_t heads = f.requirePositive(a + "attention.head_count");
    j["num_attention_heads"] = heads;
    if (auto kv = f.integer(a + "attention.head_count_kv")) j["num_key_value_heads"] = *kv;
    if (auto eps = f.number(a + "attention.layer_norm_rms_epsilon")) j["rms_norm_eps"] = *eps;
    if (auto n = f.integer(a + "context_length")) j["max_position_embeddings"] = *n;
    if (auto theta = f.number(a + "rope.freq_base")) j["rope_theta"] = *theta;
    const std::int64_t hidden = j["hidden_size"];
    std::int64_t headDim = hidden / heads;
    if (auto k = f.integer(a + "attention.key_length")) {
        if (auto v = f.integer(a + "attention.value_length"); v && *v != *k)
            f.fail(a + "attention.value_length (" + std::to_string(*v) + ") differs from key_length (" +
                   std::to_string(*k) + "); AttnScope's attention needs them equal");
        j["head_dim"] = headDim = *k;
    }
    if (auto rotary = f.integer(a + "rope.dimension_count"); rotary && *rotary != headDim) {
        if (arch != "phi3")
            f.fail(a + "rope.dimension_count (" + std::to_string(*rotary) + ") differs from the head size (" +
                   std::to_string(headDim) + "); " + arch + " rotates every dimension");
        j["partial_rotary_factor"] = static_cast<double>(*rotary) / static_cast<double>(headDim);
    }
    if (auto type = f.string(a + "rope.scaling.type"); type && *type != "none") {
        if (*type != "linear") f.fail(a + "rope.scaling.type '" + *type + "' is not supported (none, linear)");
        j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", f.number(a + "rope.scaling.factor").value_or(1.0)}};
    }
    if (auto window = f.integer(a + "attention.sliding_window"); window && arch != "qwen2" && arch != "qwen3")
        j["sliding_window"] = *window;
    if (arch == "llama") j["attention_bias"] = f.find("blk.0.attn_q.bias") != nullptr;
    if (arch == "gemma2" || arch == "gemma3") {
        // llama.cpp's rule (the scalar is not in the file): the 27B models scale by
        // hidden / heads, the others by the head size, as their config.json files say.
        const std::int64_t layers = j["num_hidden_layers"];
        const bool big = (arch == "gemma2" && layers == 46) || (arch == "gemma3" && layers == 62);
        j["query_pre_attn_scalar"] = big ? hidden / heads : headDim;
    }
    if (arch == "gemma2") {
        j["attn_logit_softcapping"] = f.number(a + "attn_logit_softcapping").value_or(50.0);
        j["final_logit_softcapping"] = f.number(a + "final_logit_softcapping").value_or(30.0);
    }
    if (arch == "phi3" && (f.find("rope_factors_long.weight") || f.find("rope_factors_short.weight")))
        f.fail("phi3's long-context rope factors (rope_factors_long/short) are not supported");
    return j;
}

DecoderNames ggufNames(const DecoderSpec& s) {
    DecoderNames n = decoderNames("", false, "token_embd");
    n.layer = "blk.";
    n.inNorm = "attn_norm";
    n.ffNorm = "ffn_norm";
    if (!s.names.attnOutNorm.empty()) n.attnOutNorm = "post_attention_norm";  // Gemma-2/3's sandwich
    if (!s.names.ffOutNorm.empty()) n.ffOutNorm = "post_ffw_norm";
    n.q = "attn_q", n.k = "attn_k", n.v = "attn_v", n.o = "attn_output";
    if (s.qkv != DecoderSpec::Qkv::Separate) n.qkv = "attn_qkv";
    n.qNorm = "attn_q_norm", n.kNorm = "attn_k_norm";
    n.gate = "ffn_gate", n.up = "ffn_up", n.down = "ffn_down";
    if (!s.names.gateUp.empty()) n.gateUp = "ffn_up";  // Phi-3's [gate | up]
    n.finalNorm = "output_norm";
    n.head = "output";
    return n;
}

// Llama 3's rope scaling is stored as per-dimension divisors of the frequencies
// (rope_freqs.weight, what llama.cpp multiplies theta's wavelengths by).
void applyRopeFreqs(const GgufFile& f, DecoderSpec& s) {
    const GgufTensor* t = f.find("rope_freqs.weight");
    if (!t) return;
    for (RopeSpec& r : s.ropes) {
        if (t->numel() != static_cast<std::int64_t>(r.invFreq.size()))
            f.fail("tensor 'rope_freqs.weight' has " + std::to_string(t->numel()) + " factors for " +
                   std::to_string(r.invFreq.size()) + " rotary frequencies");
        std::vector<float> factors(r.invFreq.size());
        dequantiseRows(*t, f.data(*t), 0, t->numel() / t->rowLength(), factors.data());
        for (std::size_t i = 0; i < factors.size(); ++i) {
            if (!(factors[i] > 0)) f.fail("tensor 'rope_freqs.weight' has a factor that is not positive");
            r.invFreq[i] /= factors[i];
        }
        r.type = "llama3";
    }
}

// The file's description as loadGguf runs it (throws attnscope::Error as loadGguf would).
DecoderSpec ggufSpec(const GgufFile& f) {
    const std::string arch = f.requireString("general.architecture");
    if (!ggufArchitectures().count(arch))
        f.fail("general.architecture '" + arch + "' is not supported (supported: " + architectureList() + ")");
    const JsonConfig config(configOf(f, arch), f.path());
    DecoderSpec s = ggufArchitectures().at(arch).parse(config);
    s.names = ggufNames(s);
    if (s.norm == DecoderSpec::Norm::RmsPlusOne) s.norm = DecoderSpec::Norm::RmsFloat;  // the +1 is stored
    s.tied = false;
    s.tiedIfNoHead = true;
    applyRopeFreqs(f, s);
    std::string kind = "GGUF";
    if (auto ft = f.integer("general.file_type")) kind += " file type " + std::to_string(*ft);
    s.notes.insert(s.notes.begin(), kind + (arch == "llama" ? ", llama.cpp's Q/K row order undone" : ""));
    return s;
}

}  // namespace

std::string ggufUnsupported(const GgufFile& f) {
    try {
        ggufSpec(f);
    } catch (const Error& e) {
        return e.what();
    }
    std::set<std::string> types;
    for (const GgufTensor& t : f.tensors())
        if (!supportedGgmlType(t.type)) types.insert(ggmlTypeName(t.type));
    if (types.empty()) return {};
    std::string list;
    for (const auto& t : types) list += (list.empty() ? "" : ", ") + t;
    return "tensor type" + std::string(types.size() > 1 ? "s " : " ") + list + (types.size() > 1 ? " are" : " is") +
           " not supported (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K)";
}

std::shared_ptr<const Model> loadGguf(const std::filesystem::path& file, c10::Device device,
                                      const LoadOptions& options) {
    const auto f = GgufFile::open(file);
    return loadDecoder(file, ggufSpec(*f), device, options);
}

}  // namespace attnscope
