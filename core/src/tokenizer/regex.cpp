#define PCRE2_CODE_UNIT_WIDTH 8
#include "regex.h"

#include "attnscope/runtime/error.h"

#include <pcre2.h>

namespace attnscope::tok {

namespace {

// Oniguruma's Unicode \w is the Word property (Alphabetic, marks, decimal digits, connector
// punctuation, the two joiners); PCRE2 10.42's differs, so \w and \W are spelled out.
// Oniguruma also nests classes: "[a[bc]]" is the union "[abc]" (BLOOM's pre-tokenizer writes
// "[^(\s|[.,!?…])]"); PCRE2 reads the inner "[" as a literal and ends the class early, so nested
// classes are flattened. A negated nested class has no flat form and is refused.
std::string translate(const std::string& p, const std::string& where) {
    static const std::string word = "\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}";
    std::string out;
    int depth = 0;  // class nesting; 0 outside a class
    auto openClass = [&](std::size_t& i, bool top) {
        if (top) out += '[';
        if (i + 1 < p.size() && p[i + 1] == '^') {
            if (!top)
                throw Error(where + ": regex '" + p + "' has a negated class inside a class (offset " +
                            std::to_string(i) + "), which is not supported");
            out += p[++i];
        }
        if (i + 1 < p.size() && p[i + 1] == ']') {  // a literal ] first in a class
            out += "\\]";
            ++i;
        }
        ++depth;
    };
    for (std::size_t i = 0; i < p.size(); ++i) {
        const char c = p[i];
        if (c == '\\' && i + 1 < p.size()) {
            const char n = p[i + 1];
            if (n == 'w')
                out += depth > 0 ? word : "[" + word + "]";
            else if (n == 'W' && depth == 0)
                out += "[^" + word + "]";
            else
                out += p.substr(i, 2);
            ++i;
            continue;
        }
        if (c == '[' && depth > 0 && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:] inside a class
            const auto close = p.find(":]", i + 2);
            if (close != std::string::npos) {
                out += p.substr(i, close + 2 - i);
                i = close + 1;
                continue;
            }
        }
        if (c == '[') {
            openClass(i, depth == 0);
            continue;
        }
        if (c == ']' && depth > 0) {
            if (--depth == 0) out += c;
            continue;
        }
        out += c;
    }
    return out;
}

}  // namespace

struct Regex::Code {
    pcre2_code* code = nullptr;
    ~Code() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern, const std::string& where)
    : code_(std::make_unique<Code>()), where_(where), pattern_(pattern) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    const std::string translated = translate(pattern, where);
    code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (!code_->code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(error, message, sizeof message);
        throw Error(where + ": regex '" + pattern + "' does not compile: " + reinterpret_cast<const char*>(message) +
                    " at offset " + std::to_string(offset));
    }
    pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is unavailable
}

Regex::~Regex() = default;

void Regex::findAll(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& out) const {
    out.clear();
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_->code, nullptr);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    std::size_t start = 0;
    std::uint32_t flags = 0;
    while (start <= text.size()) {
        const int rc = pcre2_match(code_->code, subject, text.size(), start, flags | PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
            pcre2_match_data_free(md);
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof message);
            throw Error(where_ + ": regex '" + pattern_ +
                        "' failed on the text: " + reinterpret_cast<const char*>(message));
        }
        if (rc < 0) {
            if (flags == 0) break;
            // No non-empty match here after an empty one: step over one character.
            flags = 0;
            std::size_t n = 1;
            while (start + n < text.size() && (static_cast<unsigned char>(text[start + n]) & 0xC0) == 0x80) ++n;
            start += n;
            continue;
        }
        const PCRE2_SIZE* v = pcre2_get_ovector_pointer(md);
        out.emplace_back(v[0], v[1]);
        start = v[1];
        flags = v[0] == v[1] ? (PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED) : 0;
    }
    pcre2_match_data_free(md);
}

}  // namespace attnscope::tok
