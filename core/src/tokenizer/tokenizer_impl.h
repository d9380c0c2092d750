// Tokenizer::Impl: the loaded pipeline (shared by tokenizer.cpp and legacy.cpp).
#pragma once

#include "added_vocabulary.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "components.h"
#include "decoding.h"

namespace attnscope {

struct Tokenizer::Impl {
    std::string origin;
    std::unique_ptr<tok::Normalizer> normalizer;
    std::unique_ptr<tok::PreTokenizer> preTokenizer;
    std::unique_ptr<tok::Model> model;
    std::unique_ptr<tok::PostProcessor> postProcessor;
    std::unique_ptr<tok::Decoder> decoder;
    tok::AddedVocabulary added;
    TokenStyle style = TokenStyle::Plain;
    std::string prefix = "##";  // WordPiece continuation prefix
};

}  // namespace attnscope
