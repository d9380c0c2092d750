// What a model family needs from its folder's tokenizer, in one line each:
//   tokenizer_ = Tokenizer::fromFolder(folder);                       // in the constructor
//   return encodeModelText(tokenizer_.get(), text, info());           // Model::encodeText
//   impl->displayTokens = displayLabels(tokenizer_.get(), ids, impl->tokens);  // in the forward
#pragma once

#include "attnscope/models/model.h"
#include "attnscope/tokenizer/tokenizer.h"

namespace attnscope {

// Text -> ids with the post-processor's special tokens. Throws attnscope::Error when the model has
// no tokenizer, the text is empty or not UTF-8, or it gives no token.
std::vector<std::int64_t> encodeModelText(const Tokenizer* tokenizer, const std::string& text, const ModelInfo& info);

// Readable labels for ids (the tokenizer's display forms); `raw` where there is no tokenizer.
// An id the tokenizer lacks keeps its raw label.
std::vector<std::string> displayLabels(const Tokenizer* tokenizer, const std::vector<std::int64_t>& ids,
                                       const std::vector<std::string>& raw);

}  // namespace attnscope
