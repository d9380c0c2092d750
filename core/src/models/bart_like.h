// The BART layout (bart.cpp) that bart, mbart and marian share: q/k/v/out projections with
// biases and 1/√d scaling, LayerNorms, fc1/fc2 feed-forward, word embeddings scaled by √d_model
// when scale_embedding, absolute positions added to them, a tied head plus final_logits_bias.
// What differs between the three is a BartStyle.
#pragma once

#include "attnscope/models/model.h"
#include "io/json_util.h"

#include <ATen/ATen.h>
#include <c10/core/Device.h>

namespace attnscope {

struct BartStyle {
    const char* family = "bart";
    bool preNorm = false;           // mBART: LayerNorm before each sublayer, plus encoder/decoder.layer_norm
    bool embeddingNorm = true;      // layernorm_embedding after the embeddings (BART, mBART)
    bool shiftLastToFront = false;  // mBART's shift_tokens_right
    // Marian: a static [positions, d_model] table in float32 on the CPU, read from no weight
    // (null: learned embed_positions with Hugging Face's offset of 2).
    at::Tensor (*staticPositions)(std::int64_t positions, std::int64_t dim) = nullptr;
    // The Hugging Face config class's defaults.
    int vocab = 50265;
    std::int64_t pad = 1, eos = 2;
    std::optional<std::int64_t> decoderStart = 2;  // nullopt: bos_token_id, as generate() falls back to
    std::int64_t bos = 0;
    bool marianVocab = false;  // decoder_vocab_size and share_encoder_decoder_embeddings
};

std::shared_ptr<const Model> loadBartLike(const std::filesystem::path& folder, const JsonConfig& config,
                                          c10::Device device, const LoadOptions& options, const BartStyle& style);

}  // namespace attnscope
