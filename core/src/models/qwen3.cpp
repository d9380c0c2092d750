// Qwen3 (model_type "qwen3") on the RMSNorm decoder skeleton (rms_decoder.h), as Hugging Face's
// modeling_qwen3.py: Llama's pre-norm layout with q/k RMSNorm over head_dim before rotary, an
// explicit head_dim (Qwen3Config default 128), grouped-query attention, optional biases, and the
// sliding window on layers >= max_window_layers when use_sliding_window is true (or as
// layer_types says; a "sliding_attention" layer without use_sliding_window attends globally,
// since Qwen3Config then drops sliding_window).
#include "families.h"
#include "family_common.h"
#include "io/json_util.h"
#include "rms_decoder.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

std::shared_ptr<const Model> loadQwen3(const std::filesystem::path& folder, const JsonConfig& c, c10::Device device,
                                       const LoadOptions& options) {
    DecoderSpec s;
    readSizes(c, s, 1e-6);
    readHeads(c, s, /*defaultHeadDim=*/128, /*defaultKvHeads=*/32);
    s.positions = c.optionalPositiveInt("max_position_embeddings").value_or(32768);
    s.tied = c.boolean("tie_word_embeddings", false);
    s.attentionBias = c.boolean("attention_bias", false);
    s.activation = c.string("hidden_act", "silu");
    requireKnown(c, "hidden_act", s.activation, {"silu", "swish"});
    s.qkNorm = DecoderSpec::QkNorm::PerHead;
    s.score.scale = 1.0 / std::sqrt(static_cast<double>(s.headDim));

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
    const auto types = readLayerTypes(c, s.layers);
    for (int l = 0; l < s.layers; ++l) {
        const bool sliding = types ? (*types)[static_cast<std::size_t>(l)] : l >= firstWindowed;
        s.windows.push_back(sliding ? window : 0);
    }
    s.ropes = {readRope(c, s.headDim)};
    s.ropeOf.assign(static_cast<std::size_t>(s.layers), 0);
    s.notes.push_back("q/k RMSNorm");
    addCommonNotes(s);
    return loadDecoder(folder, std::move(s), device, options);
}

}  // namespace attnscope
