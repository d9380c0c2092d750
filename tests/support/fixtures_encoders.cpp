#include "fixtures_encoders.h"

namespace attnscope::testing {

namespace {
namespace fixtures_encoders {  // this file's helpers, apart from the other support files' in a unity build

void linearInto(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t out, std::int64_t in,
                float scale, bool bias) {
    c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
    if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.1f);
}

void normInto(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t E, bool bias) {
    c.tensors[name + ".weight"] = randomTensor({E}, rng, 0.2f, 1.f);
    if (bias) c.tensors[name + ".bias"] = randomTensor({E}, rng, 0.1f);
}

nlohmann::json modernBertConfig(const ModernBertSpec& s) {
    nlohmann::json j = {{"model_type", "modernbert"},
                        {"vocab_size", s.vocab},
                        {"hidden_size", s.hidden},
                        {"intermediate_size", s.inner},
                        {"num_hidden_layers", s.layers},
                        {"num_attention_heads", s.heads},
                        {"max_position_embeddings", s.positions},
                        {"local_attention", s.localAttention},
                        {"global_attn_every_n_layers", s.globalEvery},
                        {"hidden_activation", s.activation},
                        {"classifier_activation", s.classifierActivation},
                        {"classifier_pooling", s.pooling},
                        {"norm_eps", 1e-5},
                        {"norm_bias", s.normBias},
                        {"attention_bias", s.attentionBias},
                        {"mlp_bias", s.mlpBias},
                        {"classifier_bias", s.classifierBias},
                        {"decoder_bias", s.decoderBias},
                        {"tie_word_embeddings", s.tied}};
    if (s.ropeParameters) {
        nlohmann::json types = nlohmann::json::array();
        for (int l = 0; l < s.layers; ++l) types.push_back(l % s.globalEvery ? "sliding_attention" : "full_attention");
        j["layer_types"] = types;
        j["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", s.globalTheta}}},
                                {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", s.localTheta}}}};
    } else {
        j["global_rope_theta"] = s.globalTheta;
        j["local_rope_theta"] = s.localTheta;
    }
    if (s.head == "classifier") {
        nlohmann::json id2label = nlohmann::json::object();
        for (int i = 0; i < s.labels; ++i) id2label[std::to_string(i)] = "class" + std::to_string(i);
        j["id2label"] = id2label;
    }
    return j;
}

}  // namespace fixtures_encoders
}  // namespace

Checkpoint makeModernBert(const ModernBertSpec& s, unsigned seed) {
    using namespace fixtures_encoders;
    std::mt19937 rng(seed);
    Checkpoint c;
    c.config = modernBertConfig(s);
    const std::int64_t E = s.hidden, I = s.inner;
    const std::string pre = s.head == "none" ? "" : "model.";
    c.tensors[pre + "embeddings.tok_embeddings.weight"] = randomTensor({s.vocab, E}, rng, 0.8f);
    normInto(c, rng, pre + "embeddings.norm", E, s.normBias);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        if (l > 0) normInto(c, rng, p + "attn_norm", E, s.normBias);
        linearInto(c, rng, p + "attn.Wqkv", 3 * E, E, 0.4f, s.attentionBias);
        linearInto(c, rng, p + "attn.Wo", E, E, 0.25f, s.attentionBias);
        normInto(c, rng, p + "mlp_norm", E, s.normBias);
        linearInto(c, rng, p + "mlp.Wi", 2 * I, E, 0.3f, s.mlpBias);
        linearInto(c, rng, p + "mlp.Wo", E, I, 0.25f, s.mlpBias);
    }
    normInto(c, rng, pre + "final_norm", E, s.normBias);
    if (s.head == "none") return c;
    linearInto(c, rng, "head.dense", E, E, 0.3f, s.classifierBias);
    normInto(c, rng, "head.norm", E, s.normBias);
    if (s.head == "classifier") {
        linearInto(c, rng, "classifier", s.labels, E, 0.4f, true);
    } else {
        if (!s.tied) c.tensors["decoder.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
        if (s.decoderBias) c.tensors["decoder.bias"] = randomTensor({s.vocab}, rng, 0.2f);
    }
    return c;
}

}  // namespace attnscope::testing
