// `attention … --generate N`: the generation options of the attention command, checked before
// the model loads, and what the run adds to tokens.json. The sampling temperature
// (--sample-temperature) picks tokens; --temperature stays the attention temperature.
#pragma once

#include "args.h"

#include "attnscope/models/generation.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>

namespace attnscope::cli {

// The options --generate brings: generate, sample-temperature, top-p (value) and sample (flag).
std::set<std::string> withGenerateOptions(std::set<std::string> options);
std::set<std::string> withGenerateFlags(std::set<std::string> flags);

struct GenerateRequest {
    int tokens = 0;
    SamplingOptions sampling;
};

// Nothing without --generate. Range errors are attnscope::Error (exit 2, one line); options
// that need --sample or --generate, and --generate with an intervention, are UsageError.
std::optional<GenerateRequest> parseGenerateRequest(const Args& args);

// tokens.json's "generation": prompt and generated ids and labels, and how they were chosen.
nlohmann::json generationJson(const Generation& g, const std::vector<std::string>& tokens,
                              const GenerateRequest& request);

}  // namespace attnscope::cli
