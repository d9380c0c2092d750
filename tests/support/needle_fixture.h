// A hand-weighted one-layer GPT-2 that copies, for the retrieval-head tests (core's and the Long
// context tab's): one-hot embeddings (dims 0-15 of 32), no positions and no MLP; head 0 attends
// from token x to the key holding x + 1 and writes it to the output, so after the question [10]
// it generates the needle's continuation 11, 12, 13 read from a needle {10, 11, 12, 13}; head 1
// attends to the haystack (ids 0-9). Vocabulary 16, 64 positions.
#pragma once

#include <filesystem>

namespace attnscope::testing {

constexpr int kCopyingVocab = 16;

void writeCopyingGpt2(const std::filesystem::path& dir);

}  // namespace attnscope::testing
