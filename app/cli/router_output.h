// The routers of a mixture-of-experts decoder (Trace::router) as attention writes them:
// router.npy float32 [layers, tokens, experts] (softmax over all experts, before the top-k; NaN
// rows for dense layers) and tokens.json's "router_topk" [layer][token][k] (-1 on dense layers).
#pragma once

#include "attnscope/attention/router_trace.h"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace attnscope::cli {

// Writes router.npy to `file` and adds "router_topk" and "router_experts" (E) to `tokens`.
void writeRouterOutputs(const RouterTrace& router, const std::filesystem::path& file, nlohmann::json& tokens);

}  // namespace attnscope::cli
