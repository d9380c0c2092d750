// Phi-3 (model_type "phi3") described as a DecoderSpec (decoder_spec.h), as Hugging Face's
// modeling_phi3.py: Llama's pre-norm layout with a fused qkv_proj ([q | k | v] rows) and a fused
// gate_up_proj ([gate | up] rows), no biases, rotary on int(head_dim · partial_rotary_factor)
// dimensions with the config's rope_scaling (longrope: short factors up to
// original_max_position_embeddings, default 4096, long ones beyond), and an optional sliding
// window on every layer.
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

namespace attnscope {

DecoderSpec phi3Spec(const JsonConfig& c) {
    DecoderSpec s = llamaBase(c, {1e-5, 0, 0, /*positions=*/4096});
    s.qkv = DecoderSpec::Qkv::Fused;
    s.names.qkv = "self_attn.qkv_proj";
    s.names.gateUp = "mlp.gate_up_proj";
    // Phi-3-mini-128k ships sliding_window 262144 over 131072 positions: a window no input can
    // outgrow, so it is kept (it never masks) rather than refused.
    const std::int64_t window = optionalWindow(c, "sliding_window", 0);
    s.windows.assign(static_cast<std::size_t>(s.layers), window);
    const double factor = c.has("partial_rotary_factor") ? c.positiveNumber("partial_rotary_factor") : 1.0;
    if (factor > 1) c.fail("partial_rotary_factor", "must be at most 1, found " + formatNumber(factor));
    const int rotary = static_cast<int>(s.headDim * factor);
    if (rotary < 2 || rotary % 2 != 0)
        c.fail("partial_rotary_factor", "gives " + std::to_string(rotary) + " rotary dimensions of head_dim " +
                                                std::to_string(s.headDim) + "; they must be even and at least 2");
    useRope(s, readRope(c, rotary, false, RopeKeys{"rope_theta", 10000.0, 4096}));
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
