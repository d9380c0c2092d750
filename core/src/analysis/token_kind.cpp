// Token kinds from raw vocabulary strings (token_kind.h).
#include "attnscope/analysis/token_kind.h"

#include "attnscope/runtime/error.h"
#include "runtime/text.h"

#include <algorithm>

namespace attnscope {

namespace {

const std::string kByteSpace = "\xC4\xA0";      // Ġ (byte-level BPE's space)
const std::string kByteNewline = "\xC4\x8A";    // Ċ
const std::string kMetaspace = "\xE2\x96\x81";  // ▁
const std::string kShownSpace = "\xC2\xB7";     // · (readable labels' space)

bool isSpecial(const std::string& t) {
    if (t.size() < 3) return false;
    if (t.front() == '[' && t.back() == ']') return true;
    if (t.front() == '<' && t.back() == '>') return !(t.size() == 6 && startsWith(t, "<0x"));  // a byte, not a mark
    return false;
}

// Every character is punctuation or a symbol; multi-byte characters only from a short list.
bool isPunctuation(const std::string& t) {
    static const std::vector<std::string> unicode = {"\xE2\x80\x9C", "\xE2\x80\x9D", "\xE2\x80\x98", "\xE2\x80\x99",
                                                     "\xE2\x80\x94", "\xE2\x80\x93", "\xE2\x80\xA6", "\xC2\xAB",
                                                     "\xC2\xBB",     "\xC2\xBF",     "\xC2\xA1"};
    if (t.empty()) return false;
    for (std::size_t i = 0; i < t.size();) {
        const auto c = static_cast<unsigned char>(t[i]);
        if (c < 0x80) {
            if (!((c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
                  (c >= 0x7B && c <= 0x7E)))
                return false;
            ++i;
            continue;
        }
        const auto it = std::find_if(unicode.begin(), unicode.end(),
                                     [&](const std::string& u) { return t.compare(i, u.size(), u) == 0; });
        if (it == unicode.end()) return false;
        i += it->size();
    }
    return true;
}

// "r3c12": an image patch's name in an image model's trace.
bool isPatchName(const std::string& t) {
    std::size_t i = 0;
    const auto digits = [&] {
        const std::size_t from = i;
        while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
        return i > from;
    };
    if (i >= t.size() || t[i++] != 'r' || !digits()) return false;
    if (i >= t.size() || t[i++] != 'c' || !digits()) return false;
    return i == t.size();
}

enum class Marks { None, ByteLevel, Metaspace, WordPiece, Shown };

Marks marksOf(const std::vector<std::string>& tokens) {
    for (const auto& t : tokens) {
        if (isSpecial(t)) continue;
        if (t.find(kByteSpace) != std::string::npos || t.find(kByteNewline) != std::string::npos)
            return Marks::ByteLevel;
        if (t.find(kMetaspace) != std::string::npos) return Marks::Metaspace;
        if (startsWith(t, "##") && t.size() > 2) return Marks::WordPiece;
    }
    for (const auto& t : tokens)
        if (startsWith(t, kShownSpace)) return Marks::Shown;
    return Marks::None;
}

std::vector<TokenKind> kindsWith(const std::vector<std::string>& tokens, Marks marks) {
    std::vector<TokenKind> out;
    out.reserve(tokens.size());
    bool wordBoundary = true;  // the next token starts a word whatever its marks say
    for (const auto& raw : tokens) {
        if (isSpecial(raw)) {
            out.push_back(TokenKind::Special);
            wordBoundary = true;
            continue;
        }
        std::string text = raw;
        bool start = wordBoundary;
        const auto strip = [&](const std::string& mark) {
            if (!startsWith(text, mark)) return false;
            while (startsWith(text, mark)) text.erase(0, mark.size());
            return true;
        };
        switch (marks) {
            case Marks::ByteLevel: start = strip(kByteSpace) || strip(kByteNewline) || start; break;
            case Marks::Metaspace: start = strip(kMetaspace) || start; break;
            case Marks::Shown: start = strip(kShownSpace) || start; break;
            case Marks::WordPiece: start = !strip("##"); break;
            case Marks::None: start = true; break;
        }
        wordBoundary = raw.find(kByteNewline) != std::string::npos || raw == "\n";
        // A token that is only a space or a line break is no word either.
        if (text.empty() || isPunctuation(text))
            out.push_back(TokenKind::Punctuation);
        else
            out.push_back(start ? TokenKind::WordStart : TokenKind::Continuation);
    }
    return out;
}

}  // namespace

const char* tokenKindName(TokenKind kind) {
    switch (kind) {
        case TokenKind::Special: return "special";
        case TokenKind::Punctuation: return "punctuation";
        case TokenKind::WordStart: return "word start";
        case TokenKind::Continuation: return "continuation";
        case TokenKind::Patch: return "patch";
    }
    return "?";
}

std::vector<TokenKind> tokenKinds(const std::vector<std::string>& rawTokens) {
    return kindsWith(rawTokens, marksOf(rawTokens));
}

std::vector<TokenKind> blockTokenKinds(const Trace& trace, int block, bool keys) {
    if (block < 0 || block >= static_cast<int>(trace.blocks().size()))
        throw Error("token kinds: block " + std::to_string(block) + " is out of range (the trace has " +
                    std::to_string(trace.blocks().size()) + ")");
    const BlockInfo& info = trace.blocks()[static_cast<std::size_t>(block)];
    const auto& labels = keys ? info.keyTokens : info.queryTokens;
    const auto& raw = trace.tokens();
    // An image input: no ids, tokens named [CLS] (and the like) and rRcC patches.
    const bool image =
            trace.ids().empty() && !raw.empty() &&
            std::all_of(raw.begin(), raw.end(), [](const std::string& t) { return isSpecial(t) || isPatchName(t); });
    if (image && raw.size() == labels.size()) {
        std::vector<TokenKind> out;
        for (const auto& t : raw) out.push_back(isSpecial(t) ? TokenKind::Special : TokenKind::Patch);
        return out;
    }
    // The input's own tokens: self-attention, an encoder, a cross block's keys.
    const bool inputSide = info.name != "decoder" && (info.name != "cross" || keys);
    if (inputSide && raw.size() == labels.size()) return tokenKinds(raw);
    return tokenKinds(labels);
}

}  // namespace attnscope
