// Printing and JSON for the lab's results in attnscope-cli (output change, fits).
#pragma once

#include "args.h"

#include "attnscope/lab/hedgehog.h"
#include "attnscope/lab/interventions.h"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace attnscope::cli {

// A few human-readable lines: what changed, the KL and the top-k / class table.
void printOutputChange(std::ostream& out, const OutputChange& change, const std::string& what);
nlohmann::json outputChangeJson(const OutputChange& change);

// attention --variant hedgehog --feature-file DIR: the distilled heads of a distil --per-head
// folder (lab/hedgehog.h), which the re-run puts in place of their softmax. --feature-file without
// --variant hedgehog, or the reverse, is a UsageError; a bad folder an attnscope::Error.
std::vector<LinearHead> hedgehogHeads(const Args& args);
// The learned map of (block, layer, head) when `heads` replaces it, else nullptr.
const LinearHead* findLinearHead(const std::vector<LinearHead>& heads, const std::string& block, int layer, int head);

}  // namespace attnscope::cli
