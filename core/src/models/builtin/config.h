// config.json of the built-in models and the names and shapes of their weights.
//
// Both families are pre-LayerNorm transformers with learned positions and GELU feed-forwards.
// Weight layout (nn.Linear convention, [out, in]); every attention module ATT has
//   ATT.wq/wk/wv/wo [E, E], ATT.bq/bk/bv/bo [E]
// and, when additive, per head h the Bahdanau projections
//   ATT.aq [H, d, w], ATT.ak [H, d, w], ATT.av [H, w]      (d = E / H, w = additive_width)
// so that logits_ij = av_hᵀ tanh(q_i·aq_h + k_j·ak_h) with q, k the head's query and key;
// hybrid modules have those and the gate ATT.gw [H, d], ATT.gb [H] (g_i = σ(q_i·gw_h + gb_h));
// lsh modules share Q and K (no wk, bk: k = q / |q|); with relative positions every
// self-attention module has ATT.rel [H, 2K + 1] and the model has no src_pos / tgt_pos.
// local and lsh apply to self-attention only (cross-attention modules of those models are dot).
#pragma once

#include "attnscope/models/builtin.h"
#include "attnscope/attention/trace.h"
#include "io/json_util.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace attnscope::builtin {

inline constexpr const char* kSeq2seqType = "attnscope-seq2seq";
inline constexpr const char* kClassifierType = "attnscope-classifier";

struct Config {
    bool seq2seq = true;
    BuiltinTask task = BuiltinTask::Reverse;
    AttentionKind kind = AttentionKind::Dot;
    int dModel = 32;
    int heads = 2;
    int ffn = 64;
    int encoderLayers = 2;   // the classifier's "n_layers"
    int decoderLayers = 2;   // seq2seq only
    int additiveWidth = 16;  // additive only
    int vocabSize = 0;
    int maxSource = 16;               // encoder positions (classifier: <cls> included)
    int maxTarget = 16;               // seq2seq: longest output; the decoder has maxTarget + 1 positions
    bool sourceFromEnd = true;        // seq2seq: source position 0 is the last symbol
    std::vector<std::string> labels;  // classifier class names
    double eps = 1e-5;
    bool fileTask = false;     // trained on a task file: config "task": "file" (task is then Reverse for
                               // an encoder-decoder, Sentiment for a classifier: their specials)
    bool perCharacter = true;  // file tasks: vocabulary units ("vocabulary": "char" or "word")
    std::string taskFile;      // file tasks: the file's name, for information
    SparseOptions sparse;      // local, topk, lsh
    bool relative = false;     // Shaw et al. relative position bias instead of position embeddings
    int relativeClip = 8;

    int headDim() const { return dModel / heads; }
    bool additiveParts() const { return kind == AttentionKind::Additive || kind == AttentionKind::Hybrid; }
    // The kind of one attention module: local and lsh need one sequence, so cross-attention is dot.
    AttentionKind siteKind(bool cross) const {
        return cross && (kind == AttentionKind::Local || kind == AttentionKind::Lsh) ? AttentionKind::Dot : kind;
    }
};

Config parseConfig(const JsonConfig& json);
// config.json contents; `training` (may be null) records how the weights were made.
nlohmann::json configJson(const Config& config, const nlohmann::json& training);

// The weights of a model in storage order.
std::vector<std::pair<std::string, std::vector<std::int64_t>>> parameterShapes(const Config& config);

}  // namespace attnscope::builtin
