#include "fixtures_moe.h"

#include <algorithm>
#include <array>

namespace attnscope::testing {

bool moeRouted(const MoeFamilySpec& s, int l) {
    if (s.type != "qwen2_moe") return true;
    return std::find(s.mlpOnly.begin(), s.mlpOnly.end(), l) == s.mlpOnly.end() && (l + 1) % s.sparseStep == 0;
}

namespace {
namespace fixtures_moe {  // this file's helpers, apart from the other support files' in a unity build

std::string moeBlock(const MoeFamilySpec& s) { return s.type == "mixtral" ? "block_sparse_moe." : "mlp."; }

// Expert e's matrix names in the per-expert layout: gate, up, down.
std::array<std::string, 3> expertNames(const MoeFamilySpec& s, const std::string& p, int e) {
    const std::string base = p + moeBlock(s) + "experts." + std::to_string(e) + ".";
    if (s.type == "mixtral") return {base + "w1.weight", base + "w3.weight", base + "w2.weight"};
    return {base + "gate_proj.weight", base + "up_proj.weight", base + "down_proj.weight"};
}

int expertInner(const MoeFamilySpec& s) { return s.type == "qwen2_moe" ? s.moeInner : s.inner; }

void writeMoeConfig(const MoeFamilySpec& s, nlohmann::json& c) {
    c = {{"model_type", s.type},
         {"vocab_size", s.vocab},
         {"hidden_size", s.hidden},
         {"intermediate_size", s.inner},
         {"num_hidden_layers", s.layers},
         {"num_attention_heads", s.heads},
         {"num_key_value_heads", s.kvHeads},
         {"max_position_embeddings", s.positions},
         {"rms_norm_eps", s.eps},
         {"hidden_act", "silu"},
         {"tie_word_embeddings", s.tied},
         {"num_experts_per_tok", s.topK}};
    if (s.theta > 0) c["rope_theta"] = s.theta;
    if (s.type == "mixtral") {
        c["num_local_experts"] = s.experts;
        c["sliding_window"] = s.window > 0 ? nlohmann::json(s.window) : nlohmann::json();
    } else {
        c["num_experts"] = s.experts;
        c["norm_topk_prob"] = s.normTopK;
    }
    if (s.type == "qwen2_moe") {
        c["moe_intermediate_size"] = s.moeInner;
        c["shared_expert_intermediate_size"] = s.sharedInner;
        c["decoder_sparse_step"] = s.sparseStep;
        c["mlp_only_layers"] = s.mlpOnly;
        c["use_sliding_window"] = false;
    }
    if (s.type == "olmoe") {
        c["attention_bias"] = false;
        c["clip_qkv"] = s.clipQkv > 0 ? nlohmann::json(s.clipQkv) : nlohmann::json();
    }
}

}  // namespace fixtures_moe
}  // namespace

Checkpoint makeMoeFamily(const MoeFamilySpec& s, unsigned seed) {
    using namespace fixtures_moe;
    std::mt19937 rng(seed);
    Checkpoint c;
    writeMoeConfig(s, c.config);
    const std::int64_t E = s.hidden, d = s.hidden / s.heads, H = s.heads, G = s.kvHeads;
    const std::int64_t I = expertInner(s);
    auto norm = [&](const std::string& name, std::int64_t size) {
        c.tensors[name + ".weight"] = randomTensor({size}, rng, 0.1f, 1.f);
    };
    auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, float scale, bool bias) {
        c.tensors[name + ".weight"] = randomTensor({out, in}, rng, scale);
        if (bias) c.tensors[name + ".bias"] = randomTensor({out}, rng, 0.2f);
    };
    c.tensors["model.embed_tokens.weight"] = randomTensor({s.vocab, E}, rng, 0.8f);
    const bool qkvBias = s.type == "qwen2_moe";
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        norm(p + "input_layernorm", E);
        norm(p + "post_attention_layernorm", E);
        linear(p + "self_attn.q_proj", H * d, E, 0.35f, qkvBias);
        linear(p + "self_attn.k_proj", G * d, E, 0.35f, qkvBias);
        linear(p + "self_attn.v_proj", G * d, E, 0.3f, qkvBias);
        linear(p + "self_attn.o_proj", E, H * d, 0.2f, false);
        if (s.type == "olmoe") {
            norm(p + "self_attn.q_norm", H * d);
            norm(p + "self_attn.k_norm", G * d);
        }
        if (!moeRouted(s, l)) {
            linear(p + "mlp.gate_proj", s.inner, E, 0.2f, false);
            linear(p + "mlp.up_proj", s.inner, E, 0.2f, false);
            linear(p + "mlp.down_proj", E, s.inner, 0.2f, false);
            continue;
        }
        linear(p + moeBlock(s) + "gate", s.experts, E, s.routerScale, false);
        for (int e = 0; e < s.experts; ++e) {
            const auto names = expertNames(s, p, e);
            c.tensors[names[0]] = randomTensor({I, E}, rng, 0.25f);
            c.tensors[names[1]] = randomTensor({I, E}, rng, 0.25f);
            c.tensors[names[2]] = randomTensor({E, I}, rng, 0.25f);
        }
        if (s.type == "qwen2_moe") {
            linear(p + "mlp.shared_expert.gate_proj", s.sharedInner, E, 0.2f, false);
            linear(p + "mlp.shared_expert.up_proj", s.sharedInner, E, 0.2f, false);
            linear(p + "mlp.shared_expert.down_proj", E, s.sharedInner, 0.2f, false);
            linear(p + "mlp.shared_expert_gate", 1, E, 0.5f, false);
        }
    }
    norm("model.norm", E);
    if (!s.tied) c.tensors["lm_head.weight"] = randomTensor({s.vocab, E}, rng, 0.5f);
    return c;
}

Checkpoint fuseMoeExperts(const Checkpoint& in, const MoeFamilySpec& s) {
    using namespace fixtures_moe;
    Checkpoint c = in;
    const std::int64_t E = s.hidden, I = expertInner(s), X = s.experts;
    for (int l = 0; l < s.layers; ++l) {
        if (!moeRouted(s, l)) continue;
        const std::string p = "model.layers." + std::to_string(l) + ".";
        Tensor gateUp{{X, 2 * I, E}, {}}, down{{X, E, I}, {}};
        for (int e = 0; e < X; ++e) {
            const auto names = expertNames(s, p, e);
            for (int k = 0; k < 2; ++k) {
                const auto& v = c.get(names[k]).values;
                gateUp.values.insert(gateUp.values.end(), v.begin(), v.end());
            }
            const auto& v = c.get(names[2]).values;
            down.values.insert(down.values.end(), v.begin(), v.end());
            for (const auto& n : names) c.tensors.erase(n);
        }
        c.tensors[p + "mlp.experts.gate_up_proj"] = gateUp;
        c.tensors[p + "mlp.experts.down_proj"] = down;
        const Tensor router = c.get(p + moeBlock(s) + "gate.weight");
        c.tensors.erase(p + moeBlock(s) + "gate.weight");
        c.tensors[p + "mlp.gate.weight"] = router;
    }
    return c;
}

}  // namespace attnscope::testing
