// Readable token labels for axes and figures (Tokenizer::displayToken, readableToken).
#include "attnscope/tokenizer/tokenizer.h"

#include "components.h"
#include "decoding.h"

namespace attnscope {

namespace {

// Spaces and line breaks stay visible but discreet; other control characters become their
// Unicode "control picture".
std::string showWhitespace(const std::string& s) {
    std::string out;
    for (char32_t c : tok::codePoints(s)) {
        if (c == ' ' || (c != '\n' && c != '\t' && c != '\r' && tok::isWhitespace(c)))
            out += "\xC2\xB7";  // ·
        else if (c == '\n')
            out += "\xE2\x86\xB5";  // ↵
        else if (c == '\t')
            out += "\xE2\x87\xA5";  // ⇥
        else if (c == '\r')
            out += "\xE2\x90\x8D";  // ␍
        else if (c < 0x20)
            tok::appendUtf8(out, 0x2400 + c);
        else
            tok::appendUtf8(out, c);
    }
    return out;
}

std::string hexByte(unsigned char b) {
    static const char* digits = "0123456789ABCDEF";
    return std::string("<0x") + digits[b >> 4] + digits[b & 15] + ">";
}

// Bytes as text; bytes that are not part of a whole UTF-8 character are shown as <0xNN>.
std::string bytesAsText(const std::string& bytes) {
    std::string out;
    for (std::size_t i = 0; i < bytes.size();) {
        std::size_t n = 0;
        std::size_t bad = 0;
        tok::decodeUtf8(bytes, i, &n);
        const std::string_view one = std::string_view(bytes).substr(i, n);
        if (tok::isValidUtf8(one, &bad)) {
            out.append(one);
        } else {
            out += hexByte(static_cast<unsigned char>(bytes[i]));
            n = 1;
        }
        i += n;
    }
    return out;
}

// "<0x41>" -> 'A' for printable ASCII bytes, -1 otherwise.
int printableByteToken(const std::string& raw) {
    if (raw.size() != 6 || raw.compare(0, 3, "<0x") != 0 || raw[5] != '>') return -1;
    int v = 0;
    for (int i = 3; i < 5; ++i) {
        const char c = raw[static_cast<std::size_t>(i)];
        v = v * 16 + (c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99);
    }
    return v >= 0x20 && v < 0x7F ? v : -1;
}

}  // namespace

std::string readableToken(const std::string& raw, TokenStyle style, const std::string& continuingPrefix) {
    switch (style) {
        case TokenStyle::ByteLevel: {
            std::string bytes;
            for (char32_t c : tok::codePoints(raw)) {
                const int b = tok::charToByte(c);
                if (b < 0) return showWhitespace(raw);  // not byte-level text (an added token)
                bytes += static_cast<char>(b);
            }
            return showWhitespace(bytesAsText(bytes));
        }
        case TokenStyle::Metaspace: {
            if (const int b = printableByteToken(raw); b >= 0)
                return showWhitespace(std::string(1, static_cast<char>(b)));
            std::string out;
            for (char32_t c : tok::codePoints(raw)) {
                if (c == 0x2581)
                    out += ' ';
                else
                    tok::appendUtf8(out, c);
            }
            return showWhitespace(out);
        }
        case TokenStyle::WordPiece:
            if (!continuingPrefix.empty() && raw.size() > continuingPrefix.size() &&
                raw.compare(0, continuingPrefix.size(), continuingPrefix) == 0)
                return showWhitespace(raw.substr(continuingPrefix.size()));
            return showWhitespace(raw);
        case TokenStyle::Plain: break;
    }
    return showWhitespace(raw);
}

}  // namespace attnscope
