#include "unicode.h"

#include <utf8proc.h>

namespace attnscope::tok {

char32_t decodeUtf8(std::string_view s, std::size_t i, std::size_t* length) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
        *length = 1;
        return b;
    }
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                                    static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
    if (n <= 0) {
        *length = 1;
        return 0xFFFD;
    }
    *length = static_cast<std::size_t>(n);
    return static_cast<char32_t>(cp);
}

void appendUtf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
        return;
    }
    utf8proc_uint8_t buf[4];
    const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
}

std::size_t utf8Length(char32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

std::size_t countCodePoints(std::string_view s) {
    std::size_t count = 0;
    for (std::size_t i = 0, n = 0; i < s.size(); i += n, ++count) decodeUtf8(s, i, &n);
    return count;
}

std::vector<char32_t> codePoints(std::string_view s) {
    std::vector<char32_t> out;
    out.reserve(s.size());
    for (std::size_t i = 0, n = 0; i < s.size(); i += n) out.push_back(decodeUtf8(s, i, &n));
    return out;
}

namespace {

utf8proc_category_t category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

bool isPunctCategory(utf8proc_category_t k) {
    return k == UTF8PROC_CATEGORY_PC || k == UTF8PROC_CATEGORY_PD || k == UTF8PROC_CATEGORY_PS ||
           k == UTF8PROC_CATEGORY_PE || k == UTF8PROC_CATEGORY_PI || k == UTF8PROC_CATEGORY_PF ||
           k == UTF8PROC_CATEGORY_PO;
}

}  // namespace

bool isWhitespace(char32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
    switch (c) {
        case 0x85:
        case 0xA0:
        case 0x1680:
        case 0x2028:
        case 0x2029:
        case 0x202F:
        case 0x205F:
        case 0x3000: return true;
        default: return c >= 0x2000 && c <= 0x200A;
    }
}

bool isNumeric(char32_t c) {
    const auto k = category(c);
    return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}

bool isWordChar(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    const auto k = category(c);
    switch (k) {
        case UTF8PROC_CATEGORY_LU:
        case UTF8PROC_CATEGORY_LL:
        case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM:
        case UTF8PROC_CATEGORY_LO:
        case UTF8PROC_CATEGORY_MN:
        case UTF8PROC_CATEGORY_MC:
        case UTF8PROC_CATEGORY_ME:
        case UTF8PROC_CATEGORY_ND:
        case UTF8PROC_CATEGORY_NL:
        case UTF8PROC_CATEGORY_PC: return true;
        default: return c == 0x200C || c == 0x200D;
    }
}

bool isPunctuation(char32_t c) {
    if (c < 0x80)
        return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
               (c >= 0x7B && c <= 0x7E);
    return isPunctCategory(category(c));
}

bool isBertControl(char32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return false;
    const auto k = category(c);
    return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CN ||
           k == UTF8PROC_CATEGORY_CO || k == UTF8PROC_CATEGORY_CS;
}

bool isBertWhitespace(char32_t c) { return c == '\t' || c == '\n' || c == '\r' || isWhitespace(c); }

bool isChineseChar(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool isMarkNonspacing(char32_t c) { return category(c) == UTF8PROC_CATEGORY_MN; }

bool isMark(char32_t c) {
    const auto k = category(c);
    return k == UTF8PROC_CATEGORY_MN || k == UTF8PROC_CATEGORY_MC || k == UTF8PROC_CATEGORY_ME;
}

void appendLowercase(std::vector<char32_t>& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
    } else if (c == 0x130) {  // the one unconditional multi-character lowercase mapping
        out.push_back('i');
        out.push_back(0x307);
    } else {
        out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
}

int combiningClass(char32_t c) {
    return c < 0x300 ? 0 : utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
}

std::vector<char32_t> normalizeForm(const std::vector<char32_t>& in, NormalForm form) {
    if (in.empty()) return {};
    int options = UTF8PROC_STABLE;
    switch (form) {
        case NormalForm::NFC: options |= UTF8PROC_COMPOSE; break;
        case NormalForm::NFD: options |= UTF8PROC_DECOMPOSE; break;
        case NormalForm::NFKC: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
        case NormalForm::NFKD: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
    }
    std::vector<utf8proc_int32_t> buf(in.size() * 4 + 8);
    for (std::size_t i = 0; i < in.size(); ++i) buf[i] = static_cast<utf8proc_int32_t>(in[i]);
    // utf8proc works in place on a buffer of code points: decompose, then reorder and compose.
    std::vector<utf8proc_int32_t> out(in.size() * 18 + 8);
    utf8proc_ssize_t n = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const auto r = utf8proc_decompose_char(
                buf[i], out.data() + n, static_cast<utf8proc_ssize_t>(out.size()) - n,
                static_cast<utf8proc_option_t>((options & ~UTF8PROC_COMPOSE) | UTF8PROC_DECOMPOSE), nullptr);
        if (r < 0) return in;
        n += r;
    }
    // Canonical ordering of combining marks (stable insertion sort by combining class).
    for (utf8proc_ssize_t i = 1; i < n; ++i) {
        const int cc = combiningClass(static_cast<char32_t>(out[i]));
        if (cc == 0) continue;
        for (utf8proc_ssize_t j = i; j > 0; --j) {
            const int prev = combiningClass(static_cast<char32_t>(out[j - 1]));
            if (prev == 0 || prev <= cc) break;
            std::swap(out[j], out[j - 1]);
        }
    }
    if (options & UTF8PROC_COMPOSE) {
        n = utf8proc_normalize_utf32(out.data(), n, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
        if (n < 0) return in;
    }
    return std::vector<char32_t>(out.begin(), out.begin() + n);
}

std::vector<std::pair<std::size_t, std::size_t>> graphemeClusters(std::string_view s) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    utf8proc_int32_t state = 0;
    char32_t prev = 0;
    for (std::size_t i = 0, n = 0; i < s.size(); i += n) {
        const char32_t c = decodeUtf8(s, i, &n);
        if (i == 0 || utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(prev),
                                                       static_cast<utf8proc_int32_t>(c), &state))
            out.emplace_back(i, 0);
        out.back().second += n;
        prev = c;
    }
    return out;
}

}  // namespace attnscope::tok
