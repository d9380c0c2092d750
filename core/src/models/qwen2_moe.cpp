// Qwen2-MoE / Qwen1.5-MoE (model_type "qwen2_moe"), as Hugging Face's modeling_qwen2_moe.py and
// configuration_qwen2_moe.py: Llama's blocks with q/k/v biases (qkv_bias, default true; o_proj
// without), and on the layers l not in mlp_only_layers with (l + 1) % decoder_sparse_step == 0 a
// mixture of num_experts experts (default 60) of moe_intermediate_size (1408), top
// num_experts_per_tok (4), renormalised only with norm_topk_prob (false), plus a shared expert of
// shared_expert_intermediate_size (5632) times sigmoid(shared_expert_gate(h)) (moe.h); the other
// layers keep the dense MLP of intermediate_size. num_experts 0 makes every layer dense. Defaults
// of Qwen2MoeConfig: 16 kv heads, 32768 positions, rms_norm_eps 1e-6. The sliding window
// (use_sliding_window) is refused rather than run without it.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// mlp_only_layers: layer indices (default none); entries past the last layer select nothing, as
// in Hugging Face's `layer_idx not in config.mlp_only_layers`.
std::vector<long long> qwenMoeDenseLayers(const JsonConfig& c) {
    std::vector<long long> layers;
    if (!c.has("mlp_only_layers")) return layers;
    const auto& list = c.json().at("mlp_only_layers");
    if (!list.is_array()) c.fail("mlp_only_layers", "must be a list of layer indices, found " + list.dump());
    for (const auto& e : list) {
        if (!e.is_number_integer() || e.get<long long>() < 0)
            c.fail("mlp_only_layers", "must hold non-negative layer indices, found " + e.dump());
        layers.push_back(e.get<long long>());
    }
    return layers;
}

}  // namespace

DecoderSpec qwen2MoeSpec(const JsonConfig& c) {
    if (c.boolean("use_sliding_window", false))
        c.fail("use_sliding_window", "is true: Qwen2-MoE's per-layer sliding window is not supported");
    DecoderSpec s;
    readSizes(c, s, 1e-6);
    readHeads(c, s, /*defaultHeadDim=*/0, /*defaultKvHeads=*/16);
    s.positions = c.optionalPositiveInt("max_position_embeddings").value_or(32768);
    s.tied = c.boolean("tie_word_embeddings", false);
    s.qkvBias = c.boolean("qkv_bias", true);
    s.activation = readSiluAct(c);
    useRope(s, readRope(c, s.headDim));
    s.score.scale = 1.0 / std::sqrt(static_cast<double>(s.headDim));

    MoeSpec& m = s.moe;
    if (c.has("num_experts") && c.json().at("num_experts") == 0) {
        s.notes.push_back("no experts (num_experts 0): every layer dense");
        addCommonNotes(s);
        return s;
    }
    m.experts = c.optionalPositiveInt("num_experts").value_or(60);
    readTopK(c, m, "num_experts", 4);
    m.inner = c.optionalPositiveInt("moe_intermediate_size").value_or(1408);
    m.sharedInner = c.optionalPositiveInt("shared_expert_intermediate_size").value_or(5632);
    m.normTopK = c.boolean("norm_topk_prob", false);
    const int step = c.optionalPositiveInt("decoder_sparse_step").value_or(1);
    const std::vector<long long> dense = qwenMoeDenseLayers(c);
    for (int l = 0; l < s.layers; ++l)
        m.routed.push_back(std::find(dense.begin(), dense.end(), l) == dense.end() && (l + 1) % step == 0);
    if (std::none_of(m.routed.begin(), m.routed.end(), [](bool r) { return r; }))
        s.notes.push_back("no layer routes (decoder_sparse_step, mlp_only_layers)");
    addMoeNotes(m, s.notes);
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
