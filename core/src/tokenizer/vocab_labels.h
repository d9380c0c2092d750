// Vocabulary labels (id -> raw token string) for a model's axes: the model's tokenizer when it
// has one, else a vocab.json on its own (a vocabulary without merges.txt, which labels but cannot
// tokenise), else the ids in decimal. Only for labelling; tokenising text is the tokenizer's job.
// Every file is read through vocabulary.h.
#pragma once

#include "vocabulary.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

class Tokenizer;

class VocabLabels {
public:
    // `tokenizer` is what Tokenizer::fromFolder(folder) gave (null: the folder has none); it is not
    // owned and must outlive the labels. With a tokenizer no file is read again; without one,
    // folder/vocab.json is read if present. A malformed vocab.json throws attnscope::Error naming it.
    static VocabLabels forFolder(const std::filesystem::path& folder, const Tokenizer* tokenizer);

    // Raw token strings, the decimal id where the vocabulary has no token. Throws
    // attnscope::Error for an id outside [0, vocabSize).
    std::vector<std::string> labels(const std::vector<std::int64_t>& ids, std::int64_t vocabSize) const;

private:
    const Tokenizer* tokenizer_ = nullptr;
    tok::Vocabulary vocab_;  // vocab.json's, when there is no tokenizer
};

// Validates ids against the vocabulary size and the model's positions; throws attnscope::Error.
void checkIds(const std::vector<std::int64_t>& ids, std::int64_t vocabSize, std::int64_t maxPositions);

}  // namespace attnscope
