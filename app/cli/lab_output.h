// Printing and JSON for the lab's results in attnscope-cli (output change, fits).
#pragma once

#include "attnscope/lab/interventions.h"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace attnscope::cli {

// A few human-readable lines: what changed, the KL and the top-k / class table.
void printOutputChange(std::ostream& out, const OutputChange& change, const std::string& what);
nlohmann::json outputChangeJson(const OutputChange& change);

}  // namespace attnscope::cli
