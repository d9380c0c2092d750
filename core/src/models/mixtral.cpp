// Mixtral (model_type "mixtral"), as Hugging Face's modeling_mixtral.py and configuration_mixtral.py:
// Mistral's attention (Llama with a sliding window of sliding_window keys, none when null, the
// default) and a mixture of num_local_experts SwiGLU experts (default 8) in place of the MLP, each
// token routed to its top num_experts_per_tok (default 2) with the chosen probabilities
// renormalised (moe.h). Defaults of MixtralConfig: 8 kv heads, rope_theta 1e6, 4096·32 positions,
// rms_norm_eps 1e-5. Experts in the Hub's block_sparse_moe.experts.N.w1/w3/w2 or the fused
// mlp.experts.gate_up_proj / down_proj.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

#include <cmath>

namespace attnscope {

DecoderSpec mixtralSpec(const JsonConfig& c) {
    DecoderSpec s;
    readSizes(c, s, 1e-5);
    readHeads(c, s, /*defaultHeadDim=*/0, /*defaultKvHeads=*/8);
    s.positions = c.optionalPositiveInt("max_position_embeddings").value_or(4096 * 32);
    s.tied = c.boolean("tie_word_embeddings", false);
    s.activation = readSiluAct(c);
    const std::int64_t window = optionalWindow(c, "sliding_window", 0);
    requireWindowFits(c, "sliding_window", window, s.positions);
    s.windows.assign(static_cast<std::size_t>(s.layers), window);
    useRope(s, readRope(c, s.headDim, false, RopeKeys{"rope_theta", 1e6}));
    s.score.scale = 1.0 / std::sqrt(static_cast<double>(s.headDim));

    MoeSpec& m = s.moe;
    m.experts = c.optionalPositiveInt("num_local_experts").value_or(8);
    readTopK(c, m, "num_local_experts", 2);
    m.inner = s.inner;
    m.normTopK = true;
    m.routed.assign(static_cast<std::size_t>(s.layers), true);
    m.hubBlock = "block_sparse_moe.";
    m.w1 = "w1", m.w3 = "w3", m.w2 = "w2";
    addMoeNotes(m, s.notes);
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
