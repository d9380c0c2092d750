#include "fixtures_deberta.h"

#include <algorithm>

namespace attnscope::testing {

bool DebertaSpec::has(const std::string& term) const {
    return std::find(posAtt.begin(), posAtt.end(), term) != posAtt.end();
}

int DebertaSpec::span() const {
    if (buckets > 0) return buckets;
    return maxRelative < 1 ? positions : maxRelative;
}

namespace {
namespace fixtures_deberta {  // this file's helpers, apart from the other support files' in a unity build

void linearInto(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t out, std::int64_t in,
                float scale, bool bias = true) {
    c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
    if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.1f);
}

void normInto(Checkpoint& c, std::mt19937& rng, const std::string& name, std::int64_t E) {
    c.tensors[name + ".weight"] = randomTensor({E}, rng, 0.2f, 1.f);
    c.tensors[name + ".bias"] = randomTensor({E}, rng, 0.1f);
}

nlohmann::json debertaConfig(const DebertaSpec& s) {
    nlohmann::json j = {{"model_type", "deberta-v2"},
                        {"vocab_size", s.vocab},
                        {"hidden_size", s.hidden},
                        {"intermediate_size", s.inner},
                        {"num_hidden_layers", s.layers},
                        {"num_attention_heads", s.heads},
                        {"max_position_embeddings", s.positions},
                        {"type_vocab_size", s.typeVocab},
                        {"hidden_act", s.activation},
                        {"pooler_hidden_act", s.poolerAct},
                        {"layer_norm_eps", 1e-7},
                        {"relative_attention", s.relative},
                        {"position_biased_input", s.positionBiased},
                        {"share_att_key", s.shareKey},
                        {"position_buckets", s.buckets},
                        {"max_relative_positions", s.maxRelative},
                        {"norm_rel_ebd", s.normRel ? "layer_norm" : "none"}};
    if (s.posAttString) {
        std::string joined;
        for (const auto& t : s.posAtt) joined += (joined.empty() ? "" : "|") + t;
        j["pos_att_type"] = joined;
    } else {
        j["pos_att_type"] = s.posAtt;
    }
    if (s.embedding > 0) j["embedding_size"] = s.embedding;
    if (s.convKernel > 0) {
        j["conv_kernel_size"] = s.convKernel;
        j["conv_act"] = s.convAct;
        if (s.convGroups != 1) j["conv_groups"] = s.convGroups;
    }
    if (s.labels > 0) {
        nlohmann::json id2label = nlohmann::json::object();
        for (int i = 0; i < s.labels; ++i) id2label[std::to_string(i)] = "class" + std::to_string(i);
        j["id2label"] = id2label;
    }
    return j;
}

}  // namespace fixtures_deberta
}  // namespace

Checkpoint makeDeberta(const DebertaSpec& s, unsigned seed) {
    using namespace fixtures_deberta;
    std::mt19937 rng(seed);
    Checkpoint c;
    c.config = debertaConfig(s);
    const std::int64_t E = s.hidden, M = s.embedding > 0 ? s.embedding : s.hidden, I = s.inner;
    const std::string pre = s.labels > 0 ? "deberta." : "";
    c.tensors[pre + "embeddings.word_embeddings.weight"] = randomTensor({s.vocab, M}, rng, 0.8f);
    if (s.positionBiased)
        c.tensors[pre + "embeddings.position_embeddings.weight"] = randomTensor({s.positions, M}, rng, 0.5f);
    if (s.typeVocab > 0)
        c.tensors[pre + "embeddings.token_type_embeddings.weight"] = randomTensor({s.typeVocab, M}, rng, 0.5f);
    if (M != E) c.tensors[pre + "embeddings.embed_proj.weight"] = randomTensor({E, M}, rng, 0.4f);
    normInto(c, rng, pre + "embeddings.LayerNorm", E);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
        for (const char* name : {"query_proj", "key_proj", "value_proj"})
            linearInto(c, rng, p + "attention.self." + name, E, E, 0.4f);
        if (s.relative && !s.shareKey) {
            if (s.has("c2p")) linearInto(c, rng, p + "attention.self.pos_key_proj", E, E, 0.4f);
            if (s.has("p2c")) linearInto(c, rng, p + "attention.self.pos_query_proj", E, E, 0.4f);
        }
        linearInto(c, rng, p + "attention.output.dense", E, E, 0.25f);
        normInto(c, rng, p + "attention.output.LayerNorm", E);
        linearInto(c, rng, p + "intermediate.dense", I, E, 0.3f);
        linearInto(c, rng, p + "output.dense", E, I, 0.25f);
        normInto(c, rng, p + "output.LayerNorm", E);
    }
    if (s.relative) {
        c.tensors[pre + "encoder.rel_embeddings.weight"] = randomTensor({2 * s.span(), E}, rng, 0.8f);
        if (s.normRel) normInto(c, rng, pre + "encoder.LayerNorm", E);
    }
    if (s.convKernel > 0) {
        c.tensors[pre + "encoder.conv.conv.weight"] = randomTensor({E, E / s.convGroups, s.convKernel}, rng, 0.3f);
        c.tensors[pre + "encoder.conv.conv.bias"] = randomTensor({E}, rng, 0.1f);
        normInto(c, rng, pre + "encoder.conv.LayerNorm", E);
    }
    if (s.labels > 0) {
        linearInto(c, rng, "pooler.dense", E, E, 0.3f);
        linearInto(c, rng, "classifier", s.labels, E, 0.4f);
    }
    return c;
}

}  // namespace attnscope::testing
