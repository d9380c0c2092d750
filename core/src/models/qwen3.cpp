// Qwen3 (model_type "qwen3") described as a DecoderSpec (decoder_spec.h), as Hugging Face's
// modeling_qwen3.py: Llama's pre-norm layout with q/k RMSNorm over head_dim before rotary, an
// explicit head_dim (Qwen3Config default 128), grouped-query attention, optional biases, and the
// sliding window on layers >= max_window_layers when use_sliding_window is true (or as
// layer_types says; a "sliding_attention" layer without use_sliding_window attends globally,
// since Qwen3Config then drops sliding_window).
#include "decoder_spec.h"
#include "families.h"
#include "family_common.h"

#include <algorithm>

namespace attnscope {

DecoderSpec qwen3Spec(const JsonConfig& c) {
    DecoderSpec s = llamaBase(c, {1e-6, /*headDim=*/128, /*kvHeads=*/32, /*positions=*/32768});
    s.qkNorm = DecoderSpec::QkNorm::PerHead;

    const bool useWindow = c.boolean("use_sliding_window", false);
    const std::int64_t window = useWindow ? optionalWindow(c, "sliding_window", 4096) : 0;
    if (useWindow) requireWindowFits(c, "sliding_window", window, s.positions);
    int firstWindowed = 28;  // Qwen3Config's max_window_layers; 0 is allowed (every layer windowed)
    if (c.has("max_window_layers")) {
        const auto& v = c.json().at("max_window_layers");
        if (!v.is_number_integer() || v.get<long long>() < 0)
            c.fail("max_window_layers", "must be a non-negative integer, found " + v.dump());
        firstWindowed = static_cast<int>(std::min<long long>(v.get<long long>(), s.layers));
    }
    setLayerWindows(c, s, window, [firstWindowed](int l) { return l >= firstWindowed; });
    useRope(s, readRope(c, s.headDim));
    s.notes.push_back("q/k RMSNorm");
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
