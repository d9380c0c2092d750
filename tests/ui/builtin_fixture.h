// The ui tests open the real built-in models shipped in resources/builtin (main.cpp points
// $ATTNSCOPE_BUILTIN_DIR there) wherever a test is about built-in behaviour. Tests about the
// window in general (ids, hover, layer/head, temperature, colours, cancel, exports) open a GPT-2
// stand-in folder instead: no tokenizer (input is token ids, labels "t0", "t1", ...), vocab 40,
// 24 positions, 2 layers x 4 heads, a causal mask.
#pragma once

#include <filesystem>

namespace attnscope::testing {

// Writes the stand-in into dir (created) and returns dir.
std::filesystem::path writeStandInModel(const std::filesystem::path& dir);
// The stand-in written by main.cpp for this run.
const std::filesystem::path& standInModel();
void setStandInModel(const std::filesystem::path& dir);

}  // namespace attnscope::testing
