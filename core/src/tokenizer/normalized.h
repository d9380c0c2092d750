// NormalizedString: text being normalized and split, with the original byte range of every
// normalized byte, so each token's offsets point into the text the user gave.
//
// The alignment rules are Hugging Face's (their NormalizedString): a transformation lists the new
// characters, each with a change (0 replaces the next old character and takes its alignment,
// +1 is inserted and takes the alignment of the old byte before it, -N replaces and then drops N
// more old characters). Alignments here are absolute byte offsets into the original text;
// shift() is where this piece starts in it.
#pragma once

#include "regex.h"
#include "unicode.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::tok {

// Byte offsets into the original text (texts are limited to 4 GiB).
struct Span {
    std::uint32_t begin = 0, end = 0;
};

struct Change {
    char32_t c;
    int change;
};

// A pattern's view of a string: consecutive ranges covering it, each a match or not.
struct PatternMatch {
    std::size_t begin, end;
    bool isMatch;
};
using Pattern = std::function<void(std::string_view, std::vector<PatternMatch>&)>;
Pattern charPattern(std::function<bool(char32_t)> predicate);  // each matching character alone
Pattern literalPattern(std::string literal);
Pattern regexPattern(std::shared_ptr<const Regex> regex);
Pattern invertPattern(Pattern pattern);

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

class NormalizedString {
public:
    NormalizedString() = default;
    // text as found at byte offset `shift` of the original.
    NormalizedString(std::string_view text, std::size_t shift);

    const std::string& get() const { return s_; }
    std::size_t size() const { return s_.size(); }
    bool empty() const { return s_.empty(); }
    std::size_t shift() const { return shift_; }

    void transformRange(std::size_t begin, std::size_t end, const std::vector<Change>& dest, std::size_t initialOffset);
    void transform(const std::vector<Change>& dest, std::size_t initialOffset) {
        transformRange(0, s_.size(), dest, initialOffset);
    }

    // Byte-level: every byte becomes table[byte]; the first byte of a character takes its
    // alignment, the others (insertions) the alignment of the character's last byte.
    void mapBytes(const std::array<char32_t, 256>& table);
    void prepend(std::string_view text);
    void replace(const Pattern& pattern, std::string_view content);
    void filter(const std::function<bool(char32_t)>& keep);
    void mapChars(const std::function<char32_t(char32_t)>& f);
    void lowercase();
    void normalize(NormalForm form);
    void strip(bool left, bool right);

    NormalizedString slice(std::size_t begin, std::size_t end) const;
    // Splits at the pattern's matches; empty pieces are dropped.
    std::vector<NormalizedString> split(const Pattern& pattern, SplitBehavior behavior) const;
    // Absolute original byte range of the normalized byte range [begin, end).
    Span original(std::size_t begin, std::size_t end) const;

private:
    void materialize();  // builds align_ for an identity string

    std::string s_;
    // One per byte of s_. An identity string (text not transformed yet, the common case for
    // byte-level BPE) keeps none: byte i maps to its own character at shift_ + i.
    std::vector<Span> align_;
    bool identity_ = false;
    std::size_t shift_ = 0;
};

}  // namespace attnscope::tok
