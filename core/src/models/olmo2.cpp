// OLMo-2 (model_type "olmo2") on the RMSNorm decoder skeleton (rms_decoder.h), as Hugging Face's
// modeling_olmo2.py: post-norm blocks (x += norm(attn(x)); x += norm(mlp(x)), no input norms),
// q/k RMSNorm over the whole flattened projection [H·d] / [Hkv·d] before the heads are split and
// rotated, the norm's product taken in float32 (Olmo2RMSNorm), SwiGLU, untied head by default.
#include "families.h"
#include "family_common.h"
#include "io/json_util.h"
#include "rms_decoder.h"

#include <cmath>

namespace attnscope {

std::shared_ptr<const Model> loadOlmo2(const std::filesystem::path& folder, const JsonConfig& c, c10::Device device,
                                       const LoadOptions& options) {
    DecoderSpec s;
    readSizes(c, s, 1e-5);
    readHeads(c, s, /*defaultHeadDim=*/0);
    s.positions = c.optionalPositiveInt("max_position_embeddings").value_or(2048);
    s.tied = c.boolean("tie_word_embeddings", false);
    s.attentionBias = c.boolean("attention_bias", false);
    s.activation = c.string("hidden_act", "silu");
    requireKnown(c, "hidden_act", s.activation, {"silu", "swish"});
    s.blocks = DecoderSpec::Blocks::PostNorm;
    s.qkNorm = DecoderSpec::QkNorm::Flat;
    s.normInFloat = true;
    s.score.scale = 1.0 / std::sqrt(static_cast<double>(s.headDim));
    s.windows.assign(static_cast<std::size_t>(s.layers), 0);
    s.ropes = {readRope(c, s.headDim)};
    s.ropeOf.assign(static_cast<std::size_t>(s.layers), 0);
    s.notes.push_back("q/k RMSNorm over all heads");
    s.notes.push_back("post-norm blocks");
    addCommonNotes(s);
    return loadDecoder(folder, std::move(s), device, options);
}

}  // namespace attnscope
