// Qwen2 (model_type "qwen2"), as Hugging Face's modeling_qwen2.py: Llama (llama.cpp) with biases
// on q, k and v always (o_proj and the MLP without). Qwen2's per-layer sliding window
// (use_sliding_window) is refused rather than run without it.
#include "decoder_spec.h"
#include "families.h"

namespace attnscope {

DecoderSpec qwen2Spec(const JsonConfig& c) {
    if (c.boolean("use_sliding_window", false))
        c.fail("use_sliding_window", "is true: Qwen2's per-layer sliding window is not supported");
    DecoderSpec s = llamaLike(c);
    s.qkvBias = true;
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
