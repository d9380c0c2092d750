// Added tokens (tokenizer.json "added_tokens"): found in the text before the model runs.
// Tokens with normalized=false are matched in the raw text, the others in each normalized piece
// (their content normalized the same way); the longest match at the leftmost position wins.
// single_word requires no word character on either side; lstrip/rstrip take in the whitespace
// before/after the match.
#pragma once

#include "components.h"

#include <unordered_set>

namespace attnscope::tok {

struct AddedToken {
    std::string content;
    std::string decoded;  // what decode() shows: the normalized content for normalized tokens
    std::int64_t id = 0;
    bool singleWord = false, lstrip = false, rstrip = false, normalized = true, special = false;
};

class AddedVocabulary {
public:
    AddedVocabulary() = default;
    AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer);

    // Splits the text: added tokens become splits with their token, the rest is normalized.
    std::vector<Split> extractAndNormalize(const std::string& text, const Normalizer* normalizer) const;

    const AddedToken* byId(std::int64_t id) const;
    const AddedToken* byContent(const std::string& content) const;
    bool isSpecial(const std::string& content) const { return specials_.count(content) > 0; }
    std::int64_t maxId() const;

private:
    struct MatchSet {
        std::vector<std::string> patterns;
        std::vector<std::size_t> token;  // index into tokens_, parallel to patterns
        bool firstByte[256] = {};        // bytes some pattern starts with
    };
    void splitWithMatches(NormalizedString s, const MatchSet& set, std::vector<Split>& out) const;

    std::vector<AddedToken> tokens_;
    MatchSet raw_, normalized_;
    std::unordered_set<std::string> specials_;
};

}  // namespace attnscope::tok
