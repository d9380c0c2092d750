// Tokenizer::fromFolder for folders whose tokenizer is a SentencePiece model file and no
// tokenizer.json (which wins when both are there, as in Hugging Face's fast tokenizers).
#pragma once

#include "tokenizer_impl.h"

#include <filesystem>
#include <memory>

namespace attnscope::tok {

// The SentencePiece file the folder's tokenizer would read for that side (Marian: source.spm /
// target.spm; else spiece.model, tokenizer.model or sentencepiece.bpe.model); empty when none.
std::filesystem::path sentencePieceFile(const std::filesystem::path& folder, TokenizerSide side);

// The pipeline over that file with the ids and special tokens of Hugging Face's slow tokenizer
// for the folder's family (tokenizer_config.json's tokenizer_class, else the file's name); nullptr
// when the folder has no such file. Throws attnscope::Error naming the file at fault.
// Tokenizer::fromFolder wraps it; Tokenizer::origin() is then the file's path.
std::unique_ptr<Tokenizer::Impl> sentencePieceFromFolder(const std::filesystem::path& folder, TokenizerSide side);
// The same pipeline over a given SentencePiece file of `folder` (tokenize DIR/spiece.model).
std::unique_ptr<Tokenizer::Impl> sentencePieceFromFile(const std::filesystem::path& folder,
                                                       const std::filesystem::path& path, TokenizerSide side);

}  // namespace attnscope::tok
