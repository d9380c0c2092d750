// PCRE2 regexes with the Unicode semantics of the Oniguruma engine Hugging Face's tokenizers use
// for pre-tokenizer and normalizer patterns (\w includes marks and connector punctuation).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::tok {

class Regex {
public:
    // Throws attnscope::Error "<where>: regex '<pattern>' does not compile: <reason> at offset N".
    Regex(const std::string& pattern, const std::string& where);
    ~Regex();
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    // Every non-overlapping match [begin, end) in byte offsets, left to right. text must be
    // valid UTF-8. Throws attnscope::Error when PCRE2 gives up (its backtracking limit).
    void findAll(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& out) const;

private:
    struct Code;
    std::unique_ptr<Code> code_;
    std::string where_, pattern_;
};

}  // namespace attnscope::tok
