// Model factories, one per file (bpe.cpp, wordpiece.cpp, unigram.cpp); makeModel dispatches.
#pragma once

#include "components.h"

namespace attnscope::tok {

std::unique_ptr<Model> makeBpe(const nlohmann::json& j, const Origin& origin);
std::unique_ptr<Model> makeWordPiece(const nlohmann::json& j, const Origin& origin);
std::unique_ptr<Model> makeUnigram(const nlohmann::json& j, const Origin& origin);

}  // namespace attnscope::tok
