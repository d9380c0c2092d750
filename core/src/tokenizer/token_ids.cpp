#include "attnscope/tokenizer/token_ids.h"

#include "attnscope/runtime/error.h"

#include <limits>

namespace attnscope {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

// One entry (no separators in it) -> its value; throws naming it.
std::int64_t parseIdEntry(const std::string& entry, const std::string& what) {
    const bool negative = entry.size() > 1 && entry[0] == '-';
    bool digits = !entry.empty();
    for (std::size_t i = negative ? 1 : 0; i < entry.size(); ++i) digits = digits && isDigit(entry[i]);
    if (digits && negative) throw Error("'" + entry + "' is not a " + what + ": it is negative");
    if (!digits)
        throw Error("'" + entry + "' is not a " + what +
                    " (expected whole numbers separated by commas or spaces, e.g. 3,17,42)");
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    std::int64_t value = 0;
    for (char c : entry) {
        const int d = c - '0';
        if (value > (kMax - d) / 10)  // value * 10 + d would pass int64's range
            throw Error("'" + entry + "' is not a " + what + ": it is larger than " + std::to_string(kMax));
        value = value * 10 + d;
    }
    return value;
}

}  // namespace

std::vector<std::int64_t> parseNumberList(const std::string& text, const std::string& what) {
    std::vector<std::int64_t> out;
    std::size_t entries = 0;    // entries seen, empty ones included (for messages)
    bool commaPending = false;  // a comma was read and no entry has followed it yet
    auto emptyEntry = [&] {
        return Error("entry " + std::to_string(entries + 1) + " is empty: every comma must sit between two " + what +
                     "s");
    };
    std::size_t i = 0;
    while (i < text.size()) {
        if (isSpace(text[i])) {
            ++i;
        } else if (text[i] == ',') {
            if (commaPending || entries == 0) throw emptyEntry();  // ",1" or "1,,2"
            commaPending = true;
            ++i;
        } else {
            std::size_t end = i;
            while (end < text.size() && text[end] != ',' && !isSpace(text[end])) ++end;
            out.push_back(parseIdEntry(text.substr(i, end - i), what));
            ++entries;
            commaPending = false;
            i = end;
        }
    }
    if (commaPending) throw emptyEntry();  // "1,"
    if (out.empty()) throw Error("no " + what + "s given");
    return out;
}

std::vector<std::int64_t> parseTokenIds(const std::string& text) { return parseNumberList(text, "token id"); }

}  // namespace attnscope
