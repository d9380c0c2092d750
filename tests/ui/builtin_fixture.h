// Stand-ins for the built-in models while the trained ones are not in resources/builtin: six
// random GPT-2 folders under the built-in names (reverse-dot, …, sentiment-linear), found by
// core through $ATTNSCOPE_BUILTIN_DIR. They have no tokenizer, so input goes in as token ids.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attnscope::testing {

const std::vector<std::string>& builtinFixtureNames();

// Writes the six folders into dir (created) and returns dir.
std::filesystem::path writeBuiltinFixtures(const std::filesystem::path& dir);

}  // namespace attnscope::testing
