// GPT-J (model_type "gptj"): one LayerNorm ln_1 feeds attention and the MLP in parallel,
// x + attn(ln_1(x)) + mlp(ln_1(x)); q/k/v/out projections without biases; rotary positions on
// the first rotary_dim dims of each head with interleaved pairs (2i, 2i+1) and base 10000 fixed
// in the model (the config has no theta); lm_head with a bias. Hugging Face computes q·k in
// float32 whatever the weights' dtype. Weights are nn.Linear [out, in] under "transformer.".
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

namespace attnscope {

DecoderSpec gptjSpec(const JsonConfig& c) {
    DecoderSpec s;
    readGpt2Sizes(c, s);
    s.tied = c.boolean("tie_word_embeddings", false);
    // rotary_dim: 64 when absent; null rotates whole heads (Hugging Face's only working case of
    // null is a single head, where the two agree).
    int rotary = 64;
    if (c.json().contains("rotary_dim")) rotary = c.has("rotary_dim") ? c.positiveInt("rotary_dim") : s.headDim;
    if (rotary > s.headDim || rotary % 2 != 0)
        c.fail("rotary_dim", "(" + std::to_string(rotary) + ") must be even and at most the head dim (" +
                                     std::to_string(s.headDim) + ")");
    // GPT-J's frequencies ignore any rope keys of the config: theta 10000, no scaling.
    useRope(s, readRope(JsonConfig(nlohmann::json::object(), c.file()), rotary, /*interleaved=*/true));
    s.norm = DecoderSpec::Norm::Layer;
    s.blocks = DecoderSpec::Blocks::Parallel;
    s.qkFloat = true;
    s.gated = false;
    s.mlpBias = s.headBias = true;
    s.names = gpt2Names(false, "");
    s.names.ffNorm = "";
    s.names.q = "attn.q_proj";
    s.names.k = "attn.k_proj";
    s.names.v = "attn.v_proj";
    s.names.o = "attn.out_proj";
    s.names.up = "mlp.fc_in";
    s.names.down = "mlp.fc_out";
    s.notes = {rotaryNote(rotary, s.headDim, true), "parallel attention and MLP"};
    return s;
}

}  // namespace attnscope
