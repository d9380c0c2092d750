#include "added_vocabulary.h"

namespace attnscope::tok {

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer)
    : tokens_(std::move(tokens)) {
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
        const AddedToken& t = tokens_[i];
        tokens_[i].decoded = t.content;
        if (t.content.empty()) continue;
        if (t.special) specials_.insert(t.content);
        if (t.normalized) {
            NormalizedString s(t.content, 0);
            if (normalizer) normalizer->normalize(s);
            tokens_[i].decoded = s.get();
            if (s.empty()) continue;
            normalized_.patterns.push_back(s.get());
            normalized_.token.push_back(i);
            normalized_.firstByte[static_cast<unsigned char>(s.get()[0])] = true;
        } else {
            raw_.patterns.push_back(t.content);
            raw_.token.push_back(i);
            raw_.firstByte[static_cast<unsigned char>(t.content[0])] = true;
        }
    }
}

const AddedToken* AddedVocabulary::byId(std::int64_t id) const {
    for (auto it = tokens_.rbegin(); it != tokens_.rend(); ++it)
        if (it->id == id) return &*it;
    return nullptr;
}

const AddedToken* AddedVocabulary::byContent(const std::string& content) const {
    for (auto it = tokens_.rbegin(); it != tokens_.rend(); ++it)
        if (it->content == content) return &*it;
    return nullptr;
}

std::int64_t AddedVocabulary::maxId() const {
    std::int64_t m = -1;
    for (const auto& t : tokens_) m = std::max(m, t.id);
    return m;
}

namespace {

bool wordCharBefore(std::string_view s, std::size_t at) {
    if (at == 0) return false;
    std::size_t b = at - 1;
    while (b > 0 && (static_cast<unsigned char>(s[b]) & 0xC0) == 0x80) --b;
    std::size_t n = 0;
    return isWordChar(decodeUtf8(s, b, &n));
}

bool wordCharAt(std::string_view s, std::size_t at) {
    if (at >= s.size()) return false;
    std::size_t n = 0;
    return isWordChar(decodeUtf8(s, at, &n));
}

}  // namespace

void AddedVocabulary::splitWithMatches(NormalizedString s, const MatchSet& set, std::vector<Split>& out) const {
    const std::string& text = s.get();
    if (set.patterns.empty() || text.empty()) {
        if (!text.empty()) out.push_back({std::move(s), std::nullopt});
        return;
    }
    std::size_t done = 0;  // end of the last split pushed
    auto pushText = [&](std::size_t b, std::size_t e) {
        if (e > b) out.push_back({s.slice(b, e), std::nullopt});
    };
    std::size_t pos = 0;
    while (pos < text.size()) {
        if (!set.firstByte[static_cast<unsigned char>(text[pos])]) {
            ++pos;
            continue;
        }
        std::size_t bestLen = 0, best = 0;
        for (std::size_t p = 0; p < set.patterns.size(); ++p) {
            const std::string& pat = set.patterns[p];
            if (pat.size() > bestLen && text.compare(pos, pat.size(), pat) == 0) {
                bestLen = pat.size();
                best = p;
            }
        }
        if (bestLen == 0) {
            ++pos;
            continue;
        }
        const AddedToken& token = tokens_[set.token[best]];
        std::size_t start = pos, stop = pos + bestLen;
        pos = stop;  // matches never overlap, whether or not this one is kept
        if (token.singleWord && (wordCharBefore(text, start) || wordCharAt(text, stop))) continue;
        if (token.lstrip) {
            std::size_t b = start;
            while (b > 0) {
                std::size_t c = b - 1;
                while (c > 0 && (static_cast<unsigned char>(text[c]) & 0xC0) == 0x80) --c;
                std::size_t n = 0;
                if (!isWhitespace(decodeUtf8(text, c, &n))) break;
                b = c;
            }
            start = std::max(b, done);
        }
        if (token.rstrip) {
            std::size_t n = 0;
            while (stop < text.size() && isWhitespace(decodeUtf8(text, stop, &n))) stop += n;
        }
        pushText(done, start);
        NormalizedString piece = s.slice(start, stop);
        std::vector<Token> tokens{{token.id, piece.get(), 0, piece.size()}};
        out.push_back({std::move(piece), std::move(tokens)});
        done = stop;
        pos = std::max(pos, stop);
    }
    pushText(done, text.size());
}

std::vector<Split> AddedVocabulary::extractAndNormalize(const std::string& text, const Normalizer* normalizer) const {
    std::vector<Split> first;
    splitWithMatches(NormalizedString(text, 0), raw_, first);
    std::vector<Split> out;
    out.reserve(first.size());
    for (auto& split : first) {
        if (split.tokens) {
            out.push_back(std::move(split));
            continue;
        }
        if (normalizer) normalizer->normalize(split.text);
        splitWithMatches(std::move(split.text), normalized_, out);
    }
    return out;
}

}  // namespace attnscope::tok
