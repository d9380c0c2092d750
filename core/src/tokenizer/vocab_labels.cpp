#include "vocab_labels.h"

#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"

#include <nlohmann/json.hpp>

namespace attnscope {

VocabLabels VocabLabels::forFolder(const std::filesystem::path& folder, const Tokenizer* tokenizer) {
    VocabLabels v;
    v.tokenizer_ = tokenizer;
    const auto vocabJson = folder / "vocab.json";
    std::error_code ec;
    if (!tokenizer && std::filesystem::exists(vocabJson, ec)) {
        const nlohmann::json json = tok::readVocabJson(vocabJson);
        const auto bytes = std::filesystem::file_size(vocabJson, ec);
        v.vocab_ = tok::Vocabulary::fromJsonObject(json, vocabJson.string(), tok::tokenIdLimit(ec ? 0 : bytes));
    }
    return v;
}

std::vector<std::string> VocabLabels::labels(const std::vector<std::int64_t>& ids, std::int64_t vocabSize) const {
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (auto id : ids) {
        if (id < 0 || id >= vocabSize)
            throw Error("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                        std::to_string(vocabSize) + ")");
        if (tokenizer_) {
            auto token = tokenizer_->idToToken(id);
            out.push_back(token && !token->empty() ? std::move(*token) : std::to_string(id));
            continue;
        }
        const std::string* token = vocab_.token(id);
        out.push_back(token && !token->empty() ? *token : std::to_string(id));
    }
    return out;
}

void checkIds(const std::vector<std::int64_t>& ids, std::int64_t vocabSize, std::int64_t maxPositions) {
    if (ids.empty()) throw Error("the input is empty: give at least one token id");
    if (static_cast<std::int64_t>(ids.size()) > maxPositions)
        throw Error("the input has " + std::to_string(ids.size()) + " tokens but the model has only " +
                    std::to_string(maxPositions) + " positions");
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= vocabSize)
            throw Error("token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                        " is outside the vocabulary [0, " + std::to_string(vocabSize) + ")");
}

}  // namespace attnscope
