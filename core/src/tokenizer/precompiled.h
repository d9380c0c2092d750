// The Precompiled normalizer: the character map a SentencePiece model carries (its
// normalizer_spec.precompiled_charsmap, e.g. nmt_nfkc), which Hugging Face's converter copies
// base64-encoded into tokenizer.json for T5, mT5, XLM-R, ALBERT, mBART and DeBERTa-v2.
//
// Layout of the bytes (SentencePiece's normalizer.cc, read the same way by Hugging Face's
// spm_precompiled crate): a little-endian uint32 N, then N bytes of a darts-clone double-array
// trie (little-endian uint32 units) whose values are byte offsets into the rest, a blob of
// NUL-terminated UTF-8 replacement strings.
//
// The lookup is Hugging Face's, not SentencePiece's (which takes the longest match over the byte
// stream): per grapheme cluster under 6 bytes, the trie's first (shortest) prefix match replaces
// the whole cluster; otherwise each character is looked up alone. ids then equal the tokenizers
// library's. Thread-safe after construction.
#pragma once

#include "components.h"

#include <string_view>

namespace attnscope::tok {

class PrecompiledCharsmap {
public:
    // Throws attnscope::Error (prefixed with `where`) when the bytes are not such a map.
    PrecompiledCharsmap(std::string_view bytes, std::string where);
    // The replacement of the first key that is a prefix of `chunk`; nullopt when none.
    // Throws when the trie points outside itself (a damaged map found only while looking up).
    std::optional<std::string_view> transform(std::string_view chunk) const;
    // Hugging Face's Precompiled::normalize on a whole string, with alignments.
    void normalize(NormalizedString& s) const;

private:
    std::uint32_t unit(std::size_t pos) const;
    std::vector<std::uint32_t> trie_;
    std::string normalized_;
    std::string where_;
};

// Standard base64 (RFC 4648, '=' padding optional); nullopt when `text` is not base64.
std::optional<std::string> decodeBase64(std::string_view text);

// normalizer {"type": "Precompiled", "precompiled_charsmap": BASE64}; an empty or null map
// normalizes nothing.
std::unique_ptr<Normalizer> makePrecompiled(const Fields& f);

}  // namespace attnscope::tok
