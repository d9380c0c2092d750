// attention --terms: the score terms of a disentangled-attention encoder (DeBERTa v2/v3,
// attnscope/attention/score_terms.h) as terms.npy float32 [layers, heads, 3, seq, seq] in the
// order c2c, c2p, p2c (scaled, before the mask; zeros for a term the config leaves out), and
// tokens.json's "terms": the three names.
#pragma once

#include "attnscope/attention/score_terms.h"
#include "attnscope/models/model.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace attnscope::cli {

// Throws attnscope::Error (one line) unless the model records score terms (ModelInfo::scoreTerms:
// model_type deberta-v2); `what` names the option that asked ("--terms", "--source score-c2c").
void requireScoreTerms(const ModelInfo& info, const std::string& what = "--terms");

// Writes terms.npy to `file` and adds "terms" to `tokens`; returns the shape as "[L, H, 3, n, n]".
std::string writeScoreTerms(const ScoreTerms& terms, const std::filesystem::path& file, nlohmann::json& tokens);

}  // namespace attnscope::cli
