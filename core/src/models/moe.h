// The mixture-of-experts MLP of the decoder families Mixtral, Qwen2-MoE and OLMoE (decoder_spec.h
// holds a MoeSpec; decoder_forward.cpp calls loadMoeLayer and moeForward in place of the dense MLP
// on the layers that route). As Hugging Face's modeling_mixtral.py / modeling_qwen2_moe.py /
// modeling_olmoe.py: router logits h Wᵀ [n, E], their softmax over all E experts in float32, the
// top-k of it (renormalised to sum to 1 when normTopK), the chosen weights cast back to the compute
// dtype; each chosen expert's SwiGLU down(act(gate(x)) · up(x)) run on its tokens only, weighted
// and summed; Qwen2-MoE adds its shared expert times sigmoid(shared_expert_gate(h)).
//
// The experts load from either tensor layout: the Hub's per expert (LAYER.<block>experts.N.<w1|w3|w2>
// or gate_proj/up_proj/down_proj, each [I, D] / [D, I]) or the fused one newer transformers writes
// (LAYER.mlp.experts.gate_up_proj [E, 2I, D] with gate rows first, LAYER.mlp.experts.down_proj
// [E, D, I]); the router is <block>gate.weight [E, D] in the layout found.
#pragma once

#include "io/weights.h"

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

namespace attnscope {

class JsonConfig;
struct RouterTrace;

struct MoeSpec {
    int experts = 0;  // E; 0: a dense model (no MoE)
    int topK = 0;
    int inner = 0;  // each expert's intermediate size
    bool normTopK = false;
    int sharedInner = 0;       // > 0: Qwen2-MoE's shared expert and its sigmoid gate
    std::vector<bool> routed;  // per layer: experts (true) or the dense MLP of DecoderSpec::inner
    // Tensor names under each layer: the per-expert layout's block and expert matrices, and the
    // fused layout's block (its names are fixed: experts.gate_up_proj, experts.down_proj).
    std::string hubBlock = "mlp.", w1 = "gate_proj", w3 = "up_proj", w2 = "down_proj";
    std::string fusedBlock = "mlp.";
    bool any() const { return experts > 0; }
};

// num_experts_per_tok (required positive, at most `experts`, named with `expertsKey`) into topK.
void readTopK(const JsonConfig& c, MoeSpec& moe, const std::string& expertsKey, int defaultTopK);
// The notes ModelInfo shows: "8 experts, top 2", "renormalised top-k", "shared expert", dense layers.
void addMoeNotes(const MoeSpec& moe, std::vector<std::string>& notes);

struct MoeLayer {
    Linear router;
    std::vector<at::Tensor> gate, up, down;  // per expert: [I, D], [I, D], [D, I] (views of the fused tensors)
    Linear sharedGate;                       // [1, D]
    Linear sharedGateProj, sharedUp, sharedDown;
    bool fused = false;
};

// Layer `prefix`'s router and experts (either layout), and its shared expert when the spec has one.
MoeLayer loadMoeLayer(WeightStore& w, const std::string& prefix, const MoeSpec& moe, std::int64_t hidden);
// The same weights through `alias` (autograd aliases of the inference tensors).
MoeLayer mapMoeLayer(const MoeLayer& layer, const std::function<at::Tensor(const at::Tensor&)>& alias);

// Each layer's router rows as a forward records them (RouterTrace once finished).
struct RouterRecord {
    std::vector<at::Tensor> probs, chosen;  // per layer: [n, E] float32 and [n, k] long on the CPU, or undefined
};

// The MoE MLP of h [n, D] with activation `act`; appends the router's probabilities and choices
// to `record` when given.
at::Tensor moeForward(const MoeSpec& moe, const MoeLayer& layer, const at::Tensor& h, const std::string& act,
                      RouterRecord* record = nullptr);
// RouterRecord's entry for a layer without a router.
void recordDenseLayer(RouterRecord* record);

// The Trace's RouterTrace from a forward's record over n tokens (NaN / -1 rows for dense layers).
RouterTrace finishRouter(const MoeSpec& moe, const RouterRecord& record, std::int64_t n);

}  // namespace attnscope
