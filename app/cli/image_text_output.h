// What attention writes for an image–text model (CLIP, SigLIP) beside its blocks' maps
// (vision.npy, text.npy, SigLIP's probe.npy): tokens.json's "similarity" and the patch
// contributions (attention/image_text.h) as contributions.npy float32 [heads, patches].
#pragma once

#include "attnscope/attention/image_text.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace attnscope::cli {

// Writes contributions.npy to `file` and adds "similarity" to `tokens`: cosine, logit,
// logit_scale (exp'd), logit_bias, the embeddings' norms, the contributions' block, layer, shape
// and columns, the remainder and its named parts (contributions + remainder = logit). Returns
// the file's shape for the "wrote" line, "[H, P]".
std::string writeImageTextOutputs(const ImageTextScore& score, const std::filesystem::path& file,
                                  nlohmann::json& tokens);

}  // namespace attnscope::cli
