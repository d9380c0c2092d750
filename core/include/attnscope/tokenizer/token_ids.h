// Token ids as a user types them ("3,17,42", "3 17 42", "3, 17 42"), parsed in one place for the
// CLI (--ids, --type-ids, --attend) and the ui's ids field.
//
// Entries are decimal whole numbers >= 0 (digits only: no sign, no "+", no hex) that fit in
// int64, separated by commas and/or whitespace. Whitespace around entries is free; a comma must
// sit between two entries, so ",1", "1,,2" and "1," have an empty entry. Errors are
// attnscope::Error with one line naming the bad entry:
//   'x' is not a token id (expected whole numbers separated by commas or spaces, e.g. 3,17,42)
//   '-1' is not a token id: it is negative
//   '99999999999999999999' is not a token id: it is larger than 9223372036854775807
//   entry 2 is empty: every comma must sit between two token ids
//   no token ids given
// The ids are not checked against a vocabulary here (the model's forward does that).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {

std::vector<std::int64_t> parseTokenIds(const std::string& text);

// The same rules for any list of whole numbers >= 0; `what` names one entry in the messages
// ("token type", "0/1 value"): "'x' is not a token type (...)", "no token types given".
std::vector<std::int64_t> parseNumberList(const std::string& text, const std::string& what);

}  // namespace attnscope
