#include "image_text_output.h"

#include "attnscope/io/npy.h"

#include <vector>

namespace attnscope::cli {

std::string writeImageTextOutputs(const ImageTextScore& s, const std::filesystem::path& file, nlohmann::json& tokens) {
    const auto P = static_cast<std::int64_t>(s.positions.size());
    const std::vector<float> values(s.contributions.begin(), s.contributions.end());
    NpyWriter npy(file, {s.heads, P});
    npy.append(values.data(), values.size());
    npy.finish();
    nlohmann::json parts = nlohmann::json::object();
    for (const auto& [name, value] : s.remainderParts) parts[name] = value;
    tokens["similarity"] = {{"cosine", s.cosine},
                            {"logit", s.logit},
                            {"logit_scale", s.logitScale},
                            {"logit_bias", s.logitBias},
                            {"image_norm", s.imageNorm},
                            {"text_norm", s.textNorm},
                            {"remainder", s.remainder()},
                            {"remainder_parts", parts},
                            {"contributions",
                             {{"file", "contributions.npy"},
                              {"block", s.block},
                              {"layer", s.layer},
                              {"shape", {s.heads, P}},
                              {"positions", s.positions}}}};
    return "[" + std::to_string(s.heads) + ", " + std::to_string(P) + "]";
}

}  // namespace attnscope::cli
