#include "fixtures_seq2seq.h"

#include <algorithm>

namespace attnscope::testing {

namespace {
namespace fixtures_seq2seq {  // this file's helpers, apart from the other support files' in a unity build

void linear(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t out, std::int64_t in, float scale,
            bool bias) {
    c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
    if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.2f);
}

void norm(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t size) {
    c.tensors[name + ".weight"] = randomTensor({size}, rng, 0.1f, 1.f);
    c.tensors[name + ".bias"] = randomTensor({size}, rng, 0.1f);
}

// The tied embedding under the names `layout` says (fixtures_seq2seq.h).
void tiedEmbedding(Checkpoint& c, const std::string& pre, const std::string& layout, const Tensor& table) {
    if (layout == "shared" || layout == "all") c.tensors[pre + "shared.weight"] = table;
    if (layout == "encoder" || layout == "all") c.tensors[pre + "encoder.embed_tokens.weight"] = table;
    if (layout == "all") c.tensors[pre + "decoder.embed_tokens.weight"] = table;
}

}  // namespace fixtures_seq2seq
}  // namespace

std::vector<long long> Seq2seqReference::argmax() const {
    std::vector<long long> out;
    for (const auto& row : logits) out.push_back(std::max_element(row.begin(), row.end()) - row.begin());
    return out;
}

void writeWordTokenizer(const std::filesystem::path& dir, const std::vector<std::string>& words,
                        const std::vector<std::string>& specials, const std::vector<std::string>& suffix) {
    nlohmann::json vocab = nlohmann::json::array(), added = nlohmann::json::array(), single = nlohmann::json::array();
    nlohmann::json specialMap = nlohmann::json::object();
    std::vector<std::string> names = {"<pad>", "</s>", "<unk>"};
    for (const auto& w : words) names.push_back("\u2581" + w);
    for (const auto& sp : specials) names.push_back(sp);
    for (std::size_t id = 0; id < names.size(); ++id) {
        const bool special = id < 3 || id >= 3 + words.size();
        vocab.push_back({names[id], special ? 0.0 : -1.0 - 0.01 * static_cast<double>(id)});
        if (special)
            added.push_back({{"id", id},
                             {"content", names[id]},
                             {"single_word", false},
                             {"lstrip", false},
                             {"rstrip", false},
                             {"normalized", false},
                             {"special", true}});
    }
    single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
    for (const auto& sp : suffix) {
        const auto id = std::find(names.begin(), names.end(), sp) - names.begin();
        single.push_back({{"SpecialToken", {{"id", sp}, {"type_id", 0}}}});
        specialMap[sp] = {{"id", sp}, {"ids", {id}}, {"tokens", {sp}}};
    }
    const nlohmann::json meta = {
            {"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}, {"split", true}};
    const nlohmann::json tok = {
            {"version", "1.0"},
            {"truncation", nullptr},
            {"padding", nullptr},
            {"added_tokens", added},
            {"normalizer", nullptr},
            {"pre_tokenizer", meta},
            {"post_processor",
             {{"type", "TemplateProcessing"}, {"single", single}, {"pair", single}, {"special_tokens", specialMap}}},
            {"decoder", meta},
            {"model", {{"type", "Unigram"}, {"unk_id", 2}, {"byte_fallback", false}, {"vocab", vocab}}}};
    std::filesystem::create_directories(dir);
    writeText(dir / "tokenizer.json", tok.dump(1));
}

Checkpoint makeT5(const T5Spec& s, unsigned seed) {
    using namespace fixtures_seq2seq;
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::int64_t E = s.dModel, I = static_cast<std::int64_t>(s.heads) * s.dKv;
    c.config = {{"model_type", "t5"},
                {"vocab_size", s.vocab},
                {"d_model", s.dModel},
                {"d_kv", s.dKv},
                {"d_ff", s.dFf},
                {"num_layers", s.layers},
                {"num_heads", s.heads},
                {"relative_attention_num_buckets", s.buckets},
                {"relative_attention_max_distance", s.maxDistance},
                {"layer_norm_epsilon", 1e-6},
                {"feed_forward_proj", s.gated ? "gated-gelu" : "relu"},
                {"tie_word_embeddings", s.tied},
                {"decoder_start_token_id", 0},
                {"eos_token_id", 1},
                {"pad_token_id", 0}};
    if (s.writeDecoderLayers) c.config["num_decoder_layers"] = s.decoderLayers;
    const int decoderLayers = s.writeDecoderLayers ? s.decoderLayers : s.layers;
    tiedEmbedding(c, "", s.embeddings, randomTensor({s.vocab, E}, rng, 1.0f));
    auto attention = [&](const std::string& p, bool bias) {
        linear(c, rng, p + "q", I, E, 0.15f, false);
        linear(c, rng, p + "k", I, E, 0.15f, false);
        linear(c, rng, p + "v", I, E, 0.3f, false);
        linear(c, rng, p + "o", E, I, 0.2f, false);
        if (bias) c.tensors[p + "relative_attention_bias.weight"] = randomTensor({s.buckets, s.heads}, rng, 1.0f);
    };
    auto rms = [&](const std::string& name) { c.tensors[name] = randomTensor({E}, rng, 0.1f, 1.f); };
    auto ff = [&](const std::string& p) {
        if (s.gated) {
            linear(c, rng, p + "DenseReluDense.wi_0", s.dFf, E, 0.3f, false);
            linear(c, rng, p + "DenseReluDense.wi_1", s.dFf, E, 0.3f, false);
        } else {
            linear(c, rng, p + "DenseReluDense.wi", s.dFf, E, 0.3f, false);
        }
        linear(c, rng, p + "DenseReluDense.wo", E, s.dFf, 0.2f, false);
        rms(p + "layer_norm.weight");
    };
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = "encoder.block." + std::to_string(l) + ".layer.";
        attention(p + "0.SelfAttention.", l == 0);
        rms(p + "0.layer_norm.weight");
        ff(p + "1.");
    }
    rms("encoder.final_layer_norm.weight");
    for (int l = 0; l < decoderLayers; ++l) {
        const std::string p = "decoder.block." + std::to_string(l) + ".layer.";
        attention(p + "0.SelfAttention.", l == 0);
        rms(p + "0.layer_norm.weight");
        attention(p + "1.EncDecAttention.", false);
        rms(p + "1.layer_norm.weight");
        ff(p + "2.");
    }
    rms("decoder.final_layer_norm.weight");
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    return c;
}

Checkpoint makeBart(const BartSpec& s, unsigned seed) {
    using namespace fixtures_seq2seq;
    std::mt19937 rng(seed);
    Checkpoint c;
    const std::int64_t E = s.dModel;
    const bool marian = s.type == "marian", mbart = s.type == "mbart";
    const int decoderVocab = s.decoderVocab > 0 ? s.decoderVocab : s.vocab;
    c.config = {{"model_type", s.type},
                {"vocab_size", s.vocab},
                {"d_model", s.dModel},
                {"encoder_layers", s.encoderLayers},
                {"decoder_layers", s.decoderLayers},
                {"encoder_attention_heads", s.encoderHeads},
                {"decoder_attention_heads", s.decoderHeads},
                {"encoder_ffn_dim", s.encoderFfn},
                {"decoder_ffn_dim", s.decoderFfn},
                {"max_position_embeddings", s.positions},
                {"activation_function", s.activation},
                {"scale_embedding", s.scaleEmbedding},
                {"tie_word_embeddings", s.tied},
                {"decoder_start_token_id", s.decoderStart},
                {"eos_token_id", s.eos},
                {"bos_token_id", 0},
                {"pad_token_id", 1}};
    if (marian && s.decoderVocab > 0) {
        c.config["share_encoder_decoder_embeddings"] = false;
        c.config["decoder_vocab_size"] = s.decoderVocab;
    }
    const std::string pre = s.prefix ? "model." : "";
    if (marian && s.decoderVocab > 0) {
        c.tensors[pre + "encoder.embed_tokens.weight"] = randomTensor({s.vocab, E}, rng, 1.0f);
        c.tensors[pre + "decoder.embed_tokens.weight"] = randomTensor({decoderVocab, E}, rng, 1.0f);
    } else {
        tiedEmbedding(c, pre, s.embeddings, randomTensor({s.vocab, E}, rng, 1.0f));
    }
    auto attention = [&](const std::string& p) {
        linear(c, rng, p + "q_proj", E, E, 0.35f, true);
        linear(c, rng, p + "k_proj", E, E, 0.35f, true);
        linear(c, rng, p + "v_proj", E, E, 0.3f, true);
        linear(c, rng, p + "out_proj", E, E, 0.2f, true);
    };
    for (const std::string stack : {"encoder", "decoder"}) {
        const bool decoder = stack == "decoder";
        const int layers = decoder ? s.decoderLayers : s.encoderLayers, ffn = decoder ? s.decoderFfn : s.encoderFfn;
        const std::string sp = pre + stack + ".";
        // Marian's sinusoids are computed, not stored.
        if (!marian) c.tensors[sp + "embed_positions.weight"] = randomTensor({s.positions + 2, E}, rng, 0.5f);
        if (!marian) norm(c, rng, sp + "layernorm_embedding", E);
        if (mbart) norm(c, rng, sp + "layer_norm", E);
        for (int l = 0; l < layers; ++l) {
            const std::string p = sp + "layers." + std::to_string(l) + ".";
            attention(p + "self_attn.");
            norm(c, rng, p + "self_attn_layer_norm", E);
            if (decoder) {
                attention(p + "encoder_attn.");
                norm(c, rng, p + "encoder_attn_layer_norm", E);
            }
            linear(c, rng, p + "fc1", ffn, E, 0.3f, true);
            linear(c, rng, p + "fc2", E, ffn, 0.2f, true);
            norm(c, rng, p + "final_layer_norm", E);
        }
    }
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({decoderVocab, E}, rng, 0.5f);
    if (s.logitsBias) c.tensors["final_logits_bias"] = randomTensor({1, decoderVocab}, rng, 0.5f);
    return c;
}

}  // namespace attnscope::testing
