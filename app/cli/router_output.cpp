#include "router_output.h"

#include "attnscope/io/npy.h"

namespace attnscope::cli {

void writeRouterOutputs(const RouterTrace& r, const std::filesystem::path& file, nlohmann::json& tokens) {
    writeNpy(file, {r.layers, r.tokens, r.experts}, r.probabilities);
    nlohmann::json layers = nlohmann::json::array();
    for (int l = 0; l < r.layers; ++l) {
        nlohmann::json rows = nlohmann::json::array();
        for (int i = 0; i < r.tokens; ++i) {
            nlohmann::json chosen = nlohmann::json::array();
            for (int k = 0; k < r.topK; ++k) chosen.push_back(r.choice(l, i, k));
            rows.push_back(std::move(chosen));
        }
        layers.push_back(std::move(rows));
    }
    tokens["router_topk"] = std::move(layers);
    tokens["router_experts"] = r.experts;
}

}  // namespace attnscope::cli
