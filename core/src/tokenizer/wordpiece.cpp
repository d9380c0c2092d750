// WordPiece model: greedy longest-match-first with a continuing-subword prefix; a word longer than
// max_input_chars_per_word, or one with no match, becomes the unknown token.
#include "models.h"
#include "vocabulary.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

namespace attnscope::tok {

namespace {

class WordPiece final : public VocabularyModel {
public:
    WordPiece(const nlohmann::json& j, const Origin& origin) {
        const Fields f{j, origin.at("model (WordPiece)")};
        where_ = f.where;
        vocab_ = Vocabulary::fromJsonObject(f.object("vocab"), f.where, origin.maxId);
        unk_ = f.string("unk_token", std::string("[UNK]"));
        prefix_ = f.string("continuing_subword_prefix", std::string("##"));
        const auto max = f.integer("max_input_chars_per_word", 100);
        if (max < 0) f.fail("max_input_chars_per_word must be >= 0");
        maxChars_ = static_cast<std::size_t>(max);
    }

    void tokenize(const std::string& piece, std::vector<Token>& out) const override {
        if (countCodePoints(piece) > maxChars_) {
            out.push_back(unknown(piece));
            return;
        }
        const std::size_t first = out.size();
        std::string candidate;
        std::size_t start = 0;
        while (start < piece.size()) {
            std::size_t end = piece.size();
            bool found = false;
            while (start < end) {
                candidate.clear();
                if (start > 0) candidate += prefix_;
                candidate.append(piece, start, end - start);
                if (const auto* id = vocab_.find(candidate)) {
                    out.push_back({*id, candidate, start, end});
                    found = true;
                    break;
                }
                // Drop the last character.
                do --end;
                while (end > start && (static_cast<unsigned char>(piece[end]) & 0xC0) == 0x80);
            }
            if (!found) {
                out.resize(first);
                out.push_back(unknown(piece));
                return;
            }
            start = end;
        }
    }

private:
    Token unknown(const std::string& piece) const {
        const auto* id = vocab_.find(unk_);
        if (!id) throw Error(where_ + ": unk_token '" + unk_ + "' is not in the vocabulary");
        return {*id, unk_, 0, piece.size()};
    }

    std::string where_;
    std::string unk_, prefix_;
    std::size_t maxChars_ = 100;
};

}  // namespace

std::unique_ptr<Model> makeWordPiece(const nlohmann::json& j, const Origin& origin) {
    return std::make_unique<WordPiece>(j, origin);
}

}  // namespace attnscope::tok
