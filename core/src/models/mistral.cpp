// Mistral (model_type "mistral"), as Hugging Face's modeling_mistral.py: Llama (llama.cpp) with
// a sliding window of sliding_window keys on every layer (none when the key is absent or null).
#include "decoder_spec.h"
#include "families.h"

namespace attnscope {

DecoderSpec mistralSpec(const JsonConfig& c) {
    DecoderSpec s = llamaLike(c);
    const std::int64_t window = c.has("sliding_window") ? c.positiveInt("sliding_window") : 0;
    s.windows.assign(static_cast<std::size_t>(s.layers), window);
    addCommonNotes(s);
    return s;
}

}  // namespace attnscope
