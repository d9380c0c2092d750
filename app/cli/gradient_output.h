// attention --source grad-weighted|relevance (analysis/gradient_sources.h): a forward and a
// backward through the model for one explained output, written as attention.npy and tokens.json.
// Kept apart from cmd_attention.cpp's Trace-based path, which the gradient sources do not use.
#pragma once

#include "args.h"
#include "model_input.h"

#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/analysis/map_source.h"

#include <nlohmann/json_fwd.hpp>

#include <set>
#include <string>

namespace attnscope::cli {

// options plus target-token and target-class.
std::set<std::string> withGradientOptions(std::set<std::string> options);

// Before the model loads: --target-token / --target-class only with a gradient source and not
// both; a gradient source without the options it cannot take (--variant, --prune, --generate,
// --alignment, --capture-dtype).
void checkGradientOptions(const Args& args, MapSource source);

// The output --target-token ID / --target-class C name (neither: the model's argmax), checked
// against what the model explains (a token for a decoder language model, a class for a
// classifier). A model the gradient sources do not cover is refused with core's one line.
GradientTarget parseGradientTarget(const Args& args, const Model& model);
// The explained output as tokens.json and metrics' JSON name it: target_kind ("token" or
// "class"), target, target_label, score.
void addGradientTargetJson(nlohmann::json& j, const GradientMaps& maps, bool classes);

// Computes the source with `run`'s interventions and writes DIR/attention.npy ([layers, heads, n, n]
// for grad-weighted, [layers, 1, n, n] for relevance) and DIR/tokens.json (ids, tokens,
// map_source, target, target_label, target_kind, score). Returns the exit code.
int writeGradientSource(const Args& args, const Model& model, const ModelInput& input, MapSource source,
                        const RunOptions& run, const std::string& outDir);

}  // namespace attnscope::cli
