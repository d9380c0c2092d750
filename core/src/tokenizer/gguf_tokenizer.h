// The tokenizer stored in a GGUF file's tokenizer.ggml.* metadata (gguf_tokenizer.cpp).
#pragma once

#include "attnscope/tokenizer/tokenizer.h"

#include <filesystem>
#include <memory>
#include <string>

namespace attnscope {
class GgufFile;
namespace tok {

// The tokenizer.json Hugging Face has for the file's vocabulary. Throws attnscope::Error naming
// the file and the key for a missing or inconsistent entry, an unknown tokenizer.ggml.model
// (gpt2, llama) or tokenizer.ggml.pre.
std::string ggufTokenizerJson(const GgufFile& file);
// The file's tokenizer, or nullptr when it has no tokenizer.ggml.model.
std::unique_ptr<Tokenizer> ggufTokenizer(const std::filesystem::path& file);

}  // namespace tok
}  // namespace attnscope
