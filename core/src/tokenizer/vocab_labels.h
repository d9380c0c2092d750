// Vocabulary labels (id -> token string) from a model folder's tokenizer.json, vocab.json or
// vocab.txt (WordPiece, one token per line).
// Only for labelling axes; tokenising text is the tokenizer's job.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

class VocabLabels {
public:
    // Reads tokenizer.json (model.vocab, added_tokens), else vocab.json, else vocab.txt; otherwise
    // labels are the ids in decimal. Malformed files throw attnscope::Error naming the file.
    static VocabLabels fromFolder(const std::filesystem::path& folder);

    // Throws attnscope::Error for an id outside [0, vocabSize).
    std::vector<std::string> labels(const std::vector<std::int64_t>& ids, std::int64_t vocabSize) const;
    bool empty() const { return byId_.empty(); }

private:
    std::vector<std::string> byId_;
};

// Validates ids against the vocabulary size and the model's positions; throws attnscope::Error.
void checkIds(const std::vector<std::int64_t>& ids, std::int64_t vocabSize, std::int64_t maxPositions);

}  // namespace attnscope
