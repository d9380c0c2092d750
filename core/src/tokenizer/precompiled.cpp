// The Precompiled normalizer (see precompiled.h for the map's layout and whose lookup rules these are).
#include "precompiled.h"

#include "decoding.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

namespace attnscope::tok {

namespace {

// darts-clone's unit fields (darts.h: DoubleArrayUnit).
bool hasLeaf(std::uint32_t u) { return ((u >> 8) & 1) == 1; }
std::uint32_t value(std::uint32_t u) { return u & ((1u << 31) - 1); }
std::uint32_t label(std::uint32_t u) { return u & ((1u << 31) | 0xFF); }
std::uint32_t offset(std::uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

// Appends `replacement` for the characters of `old`, with the alignment changes Hugging Face's
// `replace` writes: extra characters are insertions (+1), missing ones are dropped by the last.
void replace(std::vector<Change>& out, std::string_view old, std::string_view replacement) {
    const auto newChars = codePoints(replacement);
    const int diff = static_cast<int>(newChars.size()) - static_cast<int>(countCodePoints(old));
    for (char32_t c : newChars) out.push_back({c, 0});
    if (diff > 0) {
        for (std::size_t i = 0; i < static_cast<std::size_t>(diff); ++i) out[out.size() - 1 - i].change = 1;
    } else if (diff < 0 && !out.empty()) {
        out.back().change += diff;
    }
}

}  // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string_view bytes, std::string where) : where_(std::move(where)) {
    if (bytes.size() < 4)
        throw Error(where_ + ": precompiled_charsmap is " + std::to_string(bytes.size()) +
                    " bytes, too short for its header");
    std::uint32_t trieBytes = 0;
    for (int i = 3; i >= 0; --i)
        trieBytes = (trieBytes << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    if (trieBytes % 4 != 0 || trieBytes == 0 || trieBytes > bytes.size() - 4)
        throw Error(where_ + ": precompiled_charsmap's trie size " + std::to_string(trieBytes) + " does not fit its " +
                    std::to_string(bytes.size()) + " bytes");
    trie_.resize(trieBytes / 4);
    for (std::size_t i = 0; i < trie_.size(); ++i) {
        std::uint32_t u = 0;
        for (int b = 3; b >= 0; --b)
            u = (u << 8) | static_cast<unsigned char>(bytes[4 + i * 4 + static_cast<std::size_t>(b)]);
        trie_[i] = u;
    }
    normalized_.assign(bytes.substr(4 + trieBytes));
    std::size_t bad = 0;
    if (!isValidUtf8(normalized_, &bad))
        throw Error(where_ + ": precompiled_charsmap's replacement strings are not valid UTF-8 (byte " +
                    std::to_string(bad) + ")");
}

std::uint32_t PrecompiledCharsmap::unit(std::size_t pos) const {
    if (pos >= trie_.size())
        throw Error(where_ + ": precompiled_charsmap is damaged (a trie link points outside the trie)");
    return trie_[pos];
}

std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view chunk) const {
    // darts-clone's commonPrefixSearch, stopping at the first result (Hugging Face takes results[0]).
    std::size_t pos = offset(unit(0));
    for (unsigned char c : chunk) {
        if (c == 0) break;
        pos ^= c;
        const std::uint32_t u = unit(pos);
        if (label(u) != c) return std::nullopt;
        pos ^= offset(u);
        if (!hasLeaf(u)) continue;
        const std::size_t begin = value(unit(pos));
        if (begin >= normalized_.size())
            throw Error(where_ + ": precompiled_charsmap is damaged (a value points past its strings)");
        std::size_t end = normalized_.find('\0', begin);
        if (end == std::string::npos) end = normalized_.size();
        const std::string_view out(normalized_.data() + begin, end - begin);
        std::size_t at = 0;
        if (!isValidUtf8(out, &at))
            throw Error(where_ + ": precompiled_charsmap is damaged (a value points inside a character)");
        return out;
    }
    return std::nullopt;
}

void PrecompiledCharsmap::normalize(NormalizedString& s) const {
    const std::string& text = s.get();
    std::vector<Change> changes;
    changes.reserve(text.size());
    bool modified = false;
    for (const auto& [begin, length] : graphemeClusters(text)) {
        const std::string_view grapheme(text.data() + begin, length);
        if (grapheme.size() < 6) {
            if (const auto norm = transform(grapheme)) {
                modified = true;
                replace(changes, grapheme, *norm);
                continue;
            }
        }
        for (std::size_t i = 0, n = 0; i < grapheme.size(); i += n) {
            const char32_t c = decodeUtf8(grapheme, i, &n);
            const std::string_view part = grapheme.substr(i, n);
            if (const auto norm = transform(part)) {
                modified = true;
                replace(changes, part, *norm);
            } else {
                changes.push_back({c, 0});
            }
        }
    }
    if (modified) s.transform(changes, 0);
}

std::optional<std::string> decodeBase64(std::string_view text) {
    auto sextet = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    if (text.size() % 4 == 1) return std::nullopt;
    std::string out;
    out.reserve(text.size() * 3 / 4);
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        const int v = sextet(c);
        if (v < 0) return std::nullopt;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
        }
    }
    return out;
}

namespace {

class PrecompiledNormalizer final : public Normalizer {
public:
    explicit PrecompiledNormalizer(PrecompiledCharsmap map) : map_(std::move(map)) {}
    void normalize(NormalizedString& s) const override { map_.normalize(s); }

private:
    PrecompiledCharsmap map_;
};

class IdentityNormalizer final : public Normalizer {
public:
    void normalize(NormalizedString&) const override {}
};

}  // namespace

std::unique_ptr<Normalizer> makePrecompiled(const Fields& f) {
    const std::string encoded = f.string("precompiled_charsmap", std::string());
    if (encoded.empty()) return std::make_unique<IdentityNormalizer>();
    const auto bytes = decodeBase64(encoded);
    if (!bytes) f.fail("'precompiled_charsmap' is not base64");
    return std::make_unique<PrecompiledNormalizer>(PrecompiledCharsmap(*bytes, f.where));
}

}  // namespace attnscope::tok
