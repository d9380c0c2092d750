// A decoder-only family as data: what Llama, GPT-2, GPT-NeoX, GPT-J, GPT-Neo, Phi, OPT, BLOOM,
// Falcon, Gemma 1-3, Qwen2/3, OLMo-2 and Phi-3 differ in, named. Each family's file parses its
// config.json into a DecoderSpec (strictly: every key named, typed, defaulted as its reference
// does, refused by name); decoder_forward.cpp loads the tensors the spec names and runs the one
// forward loop (streaming, progress, cancel, the memory check and the capture live there).
// Config helpers the families share are at the end (decoder_config.cpp).
#pragma once

#include "attnscope/models/model.h"
#include "attention/attention_ops.h"
#include "io/json_util.h"
#include "moe.h"
#include "rope.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnscope {

// Tensor names (without ".weight" / ".bias"). An empty name: the model has no such tensor, and
// for a norm, no norm there. Layer tensors are `layer` + N + "." + name.
struct DecoderNames {
    std::string prefix = "model.";  // model-level prefix every tensor may carry ("transformer.", ...)
    bool prefixIfPresent = false;   // set the prefix only when some tensor carries it
    std::string embed = "embed_tokens", positions, embedNorm, projectIn, projectOut;
    std::string layer = "layers.";
    // Norms: before attention, on attention's output, before the MLP, on the MLP's output.
    std::string inNorm = "input_layernorm", attnOutNorm, ffNorm = "post_attention_layernorm", ffOutNorm;
    std::string q = "self_attn.q_proj", k = "self_attn.k_proj", v = "self_attn.v_proj", qkv;
    std::string o = "self_attn.o_proj", qNorm = "self_attn.q_norm", kNorm = "self_attn.k_norm";
    std::string gate = "mlp.gate_proj", up = "mlp.up_proj", gateUp, down = "mlp.down_proj";
    std::string finalNorm = "norm", head = "lm_head";
};

// The names every family sets first: the model-level prefix (applied only when some tensor carries
// it, with prefixIfPresent), the token embeddings and the learned positions (empty: none).
inline DecoderNames decoderNames(std::string prefix, bool prefixIfPresent, std::string embed,
                                 std::string positions = "") {
    DecoderNames n;
    n.prefix = std::move(prefix);
    n.prefixIfPresent = prefixIfPresent;
    n.embed = std::move(embed);
    n.positions = std::move(positions);
    return n;
}

struct DecoderSpec {
    static ScoreSpec unitScore() {
        ScoreSpec score;
        score.scale = 0;  // loadDecoder makes it 1/√headDim
        return score;
    }

    std::string family;  // model_type
    int vocab = 0, hidden = 0, inner = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0;
    int positions = 0;       // max_position_embeddings; 0 = no limit (ALiBi)
    int embedWidth = 0;      // word embeddings' width when projected to hidden (OPT); 0 = hidden
    int positionOffset = 0;  // learned positions: rows before position 0 (OPT's 2)
    double eps = 1e-5;

    // LayerNorm (with bias unless !affine); RMSNorm x̂ = x / sqrt(mean(x²) + eps) in float32, then
    //   Rms (Llama): w · x̂ cast back to the compute dtype first;
    //   RmsFloat (OLMo-2): the product taken in float32, then cast;
    //   RmsPlusOne (Gemma): (1 + w) · x̂ in float32, then cast.
    enum class Norm { Layer, Rms, RmsFloat, RmsPlusOne };
    Norm norm = Norm::Rms;
    bool affine = true;  // LayerNorm weights exist (OPT's layer_norm_elementwise_affine)

    // Pre:      h = in(x); x += attnOut(attn(h)); x += ffOut(mlp(ff(x)))   (absent norms are identities;
    //           the sandwich of Gemma-2/3 names all four, OLMo-2 only the two outputs)
    // Post:     x = in(x + attn(x)); x = ff(x + mlp(x))                     (OPT's post-LN)
    // Parallel: h = in(x); x = x + attn(h) + mlp(ff ? ff(x) : h)            (GPT-NeoX, GPT-J, Phi, Falcon)
    enum class Blocks { Pre, Post, Parallel };
    Blocks blocks = Blocks::Pre;
    bool residualAfterNorm = false;  // Pre: the residual is the normed input (BLOOM)
    bool branchesFirst = false;      // Parallel: x + (mlp + attn), Falcon's order of the sums

    // q/k/v: Separate projections; Fused rows [q | k | v]; Grouped per kv group [q·(H/G), k, v]
    // along the output (GPT-NeoX, BLOOM and Falcon-RW with G = H, Falcon-7B's multi-query with G = 1).
    enum class Qkv { Separate, Fused, Grouped };
    Qkv qkv = Qkv::Separate;
    bool conv1d = false;  // weights stored [in, out] (GPT-2's Conv1D): y = b + x W
    bool qkvBias = false, oBias = false, mlpBias = false;
    double queryScale = 0;  // > 0: q's projection multiplied by it before the product (OPT)
    bool qkFloat = false;   // q and k in float32 whatever the weights' dtype (GPT-J, GPT-Neo)
    // q/k norms in the spec's norm: PerHead over head_dim, Flat over [H·d] / [G·d] before the split.
    enum class QkNorm { None, PerHead, Flat };
    QkNorm qkNorm = QkNorm::None;
    double clipQkv = 0;  // > 0: q, k (after their norms) and v clamped to ±clipQkv (OLMoE's clip_qkv)

    bool gated = true;                // down(act(gate(x)) · up(x)); else down(act(up(x)))
    std::string activation = "silu";  // silu/swish, else family_common's activate()
    MoeSpec moe;                      // mixture of experts in place of the MLP on its routed layers (moe.h)

    enum class Positions { None, Learned, Rotary, Alibi };
    Positions positionKind = Positions::Rotary;
    std::vector<RopeSpec> ropes;  // Rotary: the tables, and which one each layer uses
    std::vector<int> ropeOf;
    ScoreSpec score = unitScore();      // the logits (scale, soft-cap, ALiBi slopes); scale 0: 1/√headDim
    bool scoreByInverseLayer = false;   // GPT-2's scale_attn_by_inverse_layer_idx: layer l's scale / (l + 1)
    std::vector<std::int64_t> windows;  // per layer, 0 = global; empty = all global

    bool embedScale = false;    // Gemma: embeddings × sqrt(hidden), the factor in the compute dtype
    bool tied = false;          // the head is the embedding
    bool tiedIfNoHead = false;  // GPT-2: tied unless the checkpoint has the head
    bool headBias = false;      // lm_head.bias (GPT-J, Phi)
    double finalSoftcap = 0;    // > 0: next-token logits = cap · tanh(logits / cap) (Gemma-2)

    DecoderNames names;
    std::vector<std::string> notes;  // ModelInfo::notes
};

std::shared_ptr<const Model> loadDecoder(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device,
                                         const LoadOptions& options);

// A FamilyLoader for a family whose file gives only its config parser.
template <DecoderSpec (*Parse)(const JsonConfig&)>
std::shared_ptr<const Model> loadDecoderFamily(const std::filesystem::path& folder, const JsonConfig& config,
                                               c10::Device device, const LoadOptions& options) {
    return loadDecoder(folder, Parse(config), device, options);
}

// ---- config helpers the families share (decoder_config.cpp) ----------------------------------

// num_attention_heads, num_key_value_heads (default defaultKvHeads, or the query heads when 0) and
// head_dim (default defaultHeadDim, or hidden / heads when 0), checked against each other; fills
// spec.heads/kvHeads/headDim (spec.hidden must be set).
void readHeads(const JsonConfig& c, DecoderSpec& spec, int defaultHeadDim, int defaultKvHeads = 0);
// head_dim = hidden / heads, failing `hiddenKey` with "(E) must be divisible by HEADS (H)" otherwise.
void requireDivisible(const JsonConfig& c, DecoderSpec& spec, const std::string& hiddenKey,
                      const std::string& headsName);

// The fields the Llama-like configs (and GPT-NeoX's, Phi's) read the same way: model_type,
// vocab_size, hidden_size, intermediate_size, num_hidden_layers (required) and the norm's epsilon
// (default `eps`).
void readSizes(const JsonConfig& c, DecoderSpec& spec, double eps, const char* epsKey = "rms_norm_eps");

// GPT-2's size keys (GPT-J's too; GPT-Neo names them otherwise), vocab_size, layer_norm_epsilon
// and activation_function (default gelu_new); the inner size defaults to 4 · hidden and head_dim
// is hidden / heads.
struct Gpt2Keys {
    const char *positions = "n_positions", *hidden = "n_embd", *layers = "n_layer", *heads = "n_head",
               *inner = "n_inner";
};
void readGpt2Sizes(const JsonConfig& c, DecoderSpec& spec, const Gpt2Keys& keys = {});

// A size under `key`, else under `other` (an alias or legacy name), else `fallback`.
int firstSize(const JsonConfig& c, const char* key, const char* other, int fallback);

// A window key's value, or 0 when the key is null (Hugging Face's "no window").
std::int64_t optionalWindow(const JsonConfig& c, const std::string& key, std::int64_t fallback);
// A soft-cap key: fallback when absent, 0 (none) when null, else a positive number.
double softcapOf(const JsonConfig& c, const std::string& key, double fallback);
// spec.windows: `window` on the layers layer_types calls "sliding_attention" (failing on an
// unknown entry or a list of the wrong length), or without layer_types those slidingByDefault(l)
// picks; 0 (global) on the others.
void setLayerWindows(const JsonConfig& c, DecoderSpec& spec, std::int64_t window,
                     const std::function<bool(int)>& slidingByDefault);
// Fails `key` when the window is larger than the positions.
void requireWindowFits(const JsonConfig& c, const std::string& key, std::int64_t window, int positions);

// One rotary table for every layer.
void useRope(DecoderSpec& spec, RopeSpec rope);

// Rotary dimensions per head from a fraction in (0, 1], as Hugging Face computes them:
// int(headDim · fraction). The fraction is rope_parameters.partial_rotary_factor when the newer
// layout has it, else the first of `keys` the config has (GPT-NeoX: rotary_pct before
// partial_rotary_factor), else `fallback`. Fails naming the key when the fraction is outside
// (0, 1] or gives an odd or zero count (the rotated pairs need an even number).
int partialRotaryDims(const JsonConfig& config, int headDim, std::initializer_list<const char*> keys, double fallback);

// The feed-forward activations the GPT-style configs name (Hugging Face's ACT2FN keys that
// family_common's activate() computes); fails naming `key` for any other.
void requireActivation(const JsonConfig& config, const std::string& key, const std::string& value);
// hidden_act, default silu, which must be silu or swish (the SwiGLU families).
std::string readSiluAct(const JsonConfig& c);

// A number for notes and messages: "50", "0.5", "256".
std::string formatNumber(double value);
// "rotary on 25% of dims (16 of 64)" or "rotary on all 64 dims"; "interleaved pairs" appended for GPT-J.
std::string rotaryNote(int rotaryDim, int headDim, bool interleaved = false);
// "1, 3, 5, …": the first three layers of a list, then an ellipsis when there are more.
std::string layerListNote(const std::vector<int>& layers);
// Notes for windows ("sliding window 4096 on layers 0, 2, 4, …"), kv groups and rope scaling.
void addCommonNotes(DecoderSpec& spec);

}  // namespace attnscope
