// UTF-8 and Unicode character classes for the tokenizers, on utf8proc (Unicode 15 tables).
// The predicates follow the definitions Hugging Face's tokenizers use (Rust's char methods and
// the BERT helpers), so that normalizers and pre-tokenizers split text the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnscope::tok {

// Decodes the code point at s[i] and its byte length; invalid bytes decode as U+FFFD, length 1.
char32_t decodeUtf8(std::string_view s, std::size_t i, std::size_t* length);
void appendUtf8(std::string& out, char32_t cp);
std::size_t utf8Length(char32_t cp);
std::vector<char32_t> codePoints(std::string_view s);
// codePoints(s).size() without building the vector.
std::size_t countCodePoints(std::string_view s);

bool isWhitespace(char32_t c);      // Unicode White_Space (Rust char::is_whitespace)
bool isNumeric(char32_t c);         // Nd, Nl, No (Rust char::is_numeric)
bool isWordChar(char32_t c);        // letters, marks, Nd, Pc, joiners (regex \w)
bool isPunctuation(char32_t c);     // ASCII punctuation or a P* category (BERT's too)
bool isBertControl(char32_t c);     // C* except \t \n \r
bool isBertWhitespace(char32_t c);  // \t \n \r or White_Space
bool isChineseChar(char32_t c);     // CJK ideograph blocks as BERT defines them
bool isMarkNonspacing(char32_t c);  // Mn
bool isMark(char32_t c);            // Mn, Mc, Me

// Extended grapheme clusters (UAX #29, as Rust's unicode-segmentation graphemes(true)): the
// (byte offset, byte length) of each.
std::vector<std::pair<std::size_t, std::size_t>> graphemeClusters(std::string_view s);

// Full lowercase mapping of one code point (U+0130 maps to two code points).
void appendLowercase(std::vector<char32_t>& out, char32_t c);

enum class NormalForm { NFC, NFD, NFKC, NFKD };
// The normal form of a run of code points.
std::vector<char32_t> normalizeForm(const std::vector<char32_t>& in, NormalForm form);
// Canonical combining class (0 for starters).
int combiningClass(char32_t c);

}  // namespace attnscope::tok
