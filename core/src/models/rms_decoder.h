// The RMSNorm decoder skeleton Gemma 1–3, Qwen3, OLMo-2 and Phi-3 share (rms_decoder.cpp): token
// embeddings, per layer RMSNorm(s) around rotary grouped-query attention and a gated MLP, a final
// RMSNorm and the head. Each family's file (gemma.cpp, qwen3.cpp, olmo2.cpp, phi3.cpp) parses its
// config.json into a DecoderSpec that says, in named options, where it differs: how the norm
// weighs, where the norms sit, q/k norms, fused projections, scaling, soft-caps and windows.
// Tensors carry Hugging Face's names under "model." (the prefix is optional in the files).
#pragma once

#include "attnscope/models/model.h"
#include "attention/attention_ops.h"
#include "rope.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

struct DecoderSpec {
    std::string family;  // model_type
    int vocab = 0, hidden = 0, inner = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, positions = 0;
    double eps = 1e-6;
    bool tied = false;  // lm_head is embed_tokens

    // RMSNorm: x̂ = x / sqrt(mean(x²) + eps) in float32, then
    //   Llama form (Qwen3, Phi-3): w · x̂ cast back to the compute dtype first;
    //   normInFloat (Gemma, OLMo-2): the product taken in float32, then cast;
    //   plusOne (Gemma): the weight is (1 + w).
    bool normPlusOne = false;
    bool normInFloat = false;

    // Where the norms sit in a layer, with the tensor names each reads (under layers.N.):
    //   PreNorm  (Gemma, Qwen3, Phi-3): x += attn(norm_in(x)); x += mlp(norm_post_attention(x))
    //            input_layernorm, post_attention_layernorm
    //   Sandwich (Gemma-2/3): x += norm_post_attention(attn(norm_in(x))); x += norm_post_ff(mlp(norm_pre_ff(x)))
    //            + pre_feedforward_layernorm, post_feedforward_layernorm
    //   PostNorm (OLMo-2): x += norm_post_attention(attn(x)); x += norm_post_ff(mlp(x))
    enum class Blocks { PreNorm, Sandwich, PostNorm };
    Blocks blocks = Blocks::PreNorm;

    // q/k RMSNorm before rotary (self_attn.q_norm / k_norm): PerHead over head_dim (Gemma-3,
    // Qwen3), Flat over the whole projection [H·d] / [Hkv·d] before it is split (OLMo-2).
    enum class QkNorm { None, PerHead, Flat };
    QkNorm qkNorm = QkNorm::None;

    bool fusedQkv = false;            // self_attn.qkv_proj [(H + 2·Hkv)·d, E] = q, k, v (Phi-3)
    bool fusedGateUp = false;         // mlp.gate_up_proj [2·I, E] = gate, up (Phi-3)
    bool attentionBias = false;       // q/k/v/o biases (config attention_bias)
    std::string activation = "silu";  // of the gate: down(act(gate(x)) · up(x))
    bool embedScale = false;          // Gemma: embeddings × sqrt(hidden), the factor rounded to the compute dtype
    double finalSoftcap = 0;          // > 0: next-token logits = cap · tanh(logits / cap) (Gemma-2)

    // Per layer: the logits (scale, soft-cap), the sliding window (0 = global) and which of
    // `ropes` rotates q and k (Gemma-3's local layers have their own theta).
    ScoreSpec score;
    std::vector<std::int64_t> windows;
    std::vector<int> ropeOf;
    std::vector<RopeSpec> ropes;

    std::vector<std::string> notes;  // ModelInfo::notes
};

std::shared_ptr<const Model> loadDecoder(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device,
                                         const LoadOptions& options);

// ---- config helpers the families share --------------------------------------------------------

class JsonConfig;

// num_attention_heads, num_key_value_heads (default defaultKvHeads, or the query heads when 0) and
// head_dim (default defaultHeadDim, or hidden / heads when 0), checked against each other; fills
// spec.heads/kvHeads/headDim (spec.hidden must be set).
void readHeads(const JsonConfig& c, DecoderSpec& spec, int defaultHeadDim, int defaultKvHeads = 0);

// A window key's value, or 0 when the key is null (Hugging Face's "no window").
std::int64_t optionalWindow(const JsonConfig& c, const std::string& key, std::int64_t fallback);
// A soft-cap key: fallback when absent, 0 (none) when null, else a positive number.
double softcapOf(const JsonConfig& c, const std::string& key, double fallback);

// Per layer windows from layer_types ("full_attention" / "sliding_attention"), or nullopt when
// the config has no layer_types; fails on an unknown entry or a list of the wrong length.
std::optional<std::vector<bool>> readLayerTypes(const JsonConfig& c, int layers);

// Fails `key` when the window is larger than the positions.
void requireWindowFits(const JsonConfig& c, const std::string& key, std::int64_t window, int positions);

// A number for notes and messages: "50", "0.5", "256".
std::string formatNumber(double value);

// The fields every family reads the same way: model_type, vocab_size, hidden_size,
// intermediate_size, num_hidden_layers (required) and rms_norm_eps (default `eps`).
void readSizes(const JsonConfig& c, DecoderSpec& spec, double eps);

// Notes for windows ("sliding window 4096 on layers 0, 2, 4, …"), kv groups and rope scaling.
void addCommonNotes(DecoderSpec& spec);

}  // namespace attnscope
