#include "normalized.h"

#include <algorithm>

namespace attnscope::tok {

Pattern charPattern(std::function<bool(char32_t)> predicate) {
    return [predicate = std::move(predicate)](std::string_view s, std::vector<PatternMatch>& out) {
        out.clear();
        if (s.empty()) {
            out.push_back({0, 0, false});
            return;
        }
        std::size_t last = 0, n = 0;
        for (std::size_t i = 0; i < s.size(); i += n) {
            const char32_t c = decodeUtf8(s, i, &n);
            if (!predicate(c)) continue;
            if (last < i) out.push_back({last, i, false});
            out.push_back({i, i + n, true});
            last = i + n;
        }
        if (last < s.size()) out.push_back({last, s.size(), false});
    };
}

Pattern literalPattern(std::string literal) {
    return [literal = std::move(literal)](std::string_view s, std::vector<PatternMatch>& out) {
        out.clear();
        if (literal.empty()) {
            out.push_back({0, s.size(), false});
            return;
        }
        if (s.empty()) {
            out.push_back({0, 0, false});
            return;
        }
        std::size_t last = 0;
        for (std::size_t at = s.find(literal); at != std::string_view::npos;
             at = s.find(literal, at + literal.size())) {
            if (last < at) out.push_back({last, at, false});
            out.push_back({at, at + literal.size(), true});
            last = at + literal.size();
        }
        if (last < s.size()) out.push_back({last, s.size(), false});
    };
}

Pattern regexPattern(std::shared_ptr<const Regex> regex) {
    return [regex = std::move(regex)](std::string_view s, std::vector<PatternMatch>& out) {
        out.clear();
        if (s.empty()) {
            out.push_back({0, 0, false});
            return;
        }
        thread_local std::vector<std::pair<std::size_t, std::size_t>> found;
        regex->findAll(s, found);
        std::size_t last = 0;
        for (const auto& [b, e] : found) {
            if (last != b) out.push_back({last, b, false});
            out.push_back({b, e, true});
            last = e;
        }
        if (last != s.size()) out.push_back({last, s.size(), false});
    };
}

Pattern invertPattern(Pattern pattern) {
    return [pattern = std::move(pattern)](std::string_view s, std::vector<PatternMatch>& out) {
        pattern(s, out);
        for (auto& m : out) m.isMatch = !m.isMatch;
    };
}

NormalizedString::NormalizedString(std::string_view text, std::size_t shift)
    : s_(text), identity_(true), shift_(shift) {}

void NormalizedString::materialize() {
    if (!identity_) return;
    identity_ = false;
    align_.resize(s_.size());
    for (std::size_t i = 0, n = 0; i < s_.size(); i += n) {
        decodeUtf8(s_, i, &n);
        for (std::size_t k = 0; k < n && i + k < s_.size(); ++k)
            align_[i + k] = {static_cast<std::uint32_t>(shift_ + i), static_cast<std::uint32_t>(shift_ + i + n)};
    }
}

void NormalizedString::transformRange(std::size_t begin, std::size_t end, const std::vector<Change>& dest,
                                      std::size_t initialOffset) {
    materialize();
    // Old characters of [begin, end) are consumed as the changes say; `offset` is the byte in the
    // old string where the next consumed character starts.
    std::size_t cursor = begin;
    auto nextOld = [&]() -> std::size_t {  // byte length of the next old character, 0 when none left
        if (cursor >= end) return 0;
        std::size_t n = 0;
        decodeUtf8(s_, cursor, &n);
        cursor += n;
        return n;
    };
    std::size_t offset = begin;
    for (std::size_t k = 0; k < initialOffset; ++k) offset += nextOld();
    std::string out;
    std::vector<Span> align;
    out.reserve(end - begin);
    align.reserve(end - begin);
    for (const Change& ch : dest) {
        Span a;
        if (ch.change > 0)
            a = offset < 1 ? Span{static_cast<std::uint32_t>(shift_), static_cast<std::uint32_t>(shift_)}
                           : align_[offset - 1];
        else
            a = offset < align_.size()
                        ? align_[offset]
                        : (align_.empty() ? Span{static_cast<std::uint32_t>(shift_), static_cast<std::uint32_t>(shift_)}
                                          : align_.back());
        if (ch.change <= 0) offset += nextOld();
        for (int k = 0; k < -ch.change; ++k) offset += nextOld();
        const std::size_t len = utf8Length(ch.c);
        appendUtf8(out, ch.c);
        for (std::size_t k = 0; k < len; ++k) align.push_back(a);
    }
    if (begin == 0 && end == s_.size()) {  // the whole string (most transformations): no splicing
        s_.swap(out);
        align_.swap(align);
        return;
    }
    s_.replace(begin, end - begin, out);
    align_.erase(align_.begin() + static_cast<std::ptrdiff_t>(begin),
                 align_.begin() + static_cast<std::ptrdiff_t>(end));
    align_.insert(align_.begin() + static_cast<std::ptrdiff_t>(begin), align.begin(), align.end());
}

void NormalizedString::mapBytes(const std::array<char32_t, 256>& table) {
    std::string out;
    std::vector<Span> align;
    out.reserve(s_.size() * 2);
    align.reserve(s_.size() * 2);
    for (std::size_t i = 0, n = 0; i < s_.size(); i += n) {
        decodeUtf8(s_, i, &n);
        const Span first =
                identity_ ? Span{static_cast<std::uint32_t>(shift_ + i), static_cast<std::uint32_t>(shift_ + i + n)}
                          : align_[i];
        const Span last = identity_ ? first : align_[i + n - 1];
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t before = out.size();
            appendUtf8(out, table[static_cast<unsigned char>(s_[i + k])]);
            align.insert(align.end(), out.size() - before, k == 0 ? first : last);
        }
    }
    s_.swap(out);
    align_.swap(align);
    identity_ = false;
}

void NormalizedString::prepend(std::string_view text) {
    if (s_.empty() || text.empty()) return;
    std::size_t n = 0;
    const char32_t first = decodeUtf8(s_, 0, &n);
    std::vector<Change> changes;
    bool head = true;
    for (char32_t c : codePoints(text)) {
        changes.push_back({c, head ? 0 : 1});
        head = false;
    }
    changes.push_back({first, 1});
    transformRange(0, n, changes, 0);
}

void NormalizedString::replace(const Pattern& pattern, std::string_view content) {
    // One pass, with the alignments Hugging Face's per-match transformation gives: each inserted
    // character takes the alignment of the last byte the match removed.
    std::vector<PatternMatch> matches;
    pattern(s_, matches);
    if (std::none_of(matches.begin(), matches.end(), [](const PatternMatch& m) { return m.isMatch; })) return;
    materialize();
    std::string out;
    std::vector<Span> align;
    out.reserve(s_.size());
    align.reserve(s_.size());
    const Span start{static_cast<std::uint32_t>(shift_), static_cast<std::uint32_t>(shift_)};
    for (const auto& m : matches) {
        if (!m.isMatch) {
            out.append(s_, m.begin, m.end - m.begin);
            align.insert(align.end(), align_.begin() + static_cast<std::ptrdiff_t>(m.begin),
                         align_.begin() + static_cast<std::ptrdiff_t>(m.end));
            continue;
        }
        const Span a = m.end < 1 ? start : align_[m.end - 1];
        out.append(content);
        align.insert(align.end(), content.size(), a);
    }
    s_.swap(out);
    align_.swap(align);
}

void NormalizedString::filter(const std::function<bool(char32_t)>& keep) {
    const auto chars = codePoints(s_);
    std::vector<Change> kept;
    kept.reserve(chars.size());
    int removed = 0;
    // Walk backwards so each removed run is charged to the kept character before it.
    for (auto it = chars.rbegin(); it != chars.rend(); ++it) {
        if (keep(*it)) {
            kept.push_back({*it, -removed});
            removed = 0;
        } else {
            ++removed;
        }
    }
    std::reverse(kept.begin(), kept.end());
    transform(kept, static_cast<std::size_t>(removed));
}

void NormalizedString::mapChars(const std::function<char32_t(char32_t)>& f) {
    std::vector<Change> changes;
    for (char32_t c : codePoints(s_)) changes.push_back({f(c), 0});
    transform(changes, 0);
}

void NormalizedString::lowercase() {
    std::vector<Change> changes;
    std::vector<char32_t> lower;
    for (char32_t c : codePoints(s_)) {
        lower.clear();
        appendLowercase(lower, c);
        for (std::size_t i = 0; i < lower.size(); ++i) changes.push_back({lower[i], i > 0 ? 1 : 0});
    }
    transform(changes, 0);
}

void NormalizedString::normalize(NormalForm form) {
    // Normalise one run at a time: a starter and the characters that can combine with it. Within
    // a run output character k stands for input character k; extra output characters are
    // insertions, and when the output is shorter its last character also drops the rest of the
    // input (so a composed "é" keeps the alignment of the "e" it started from).
    const auto chars = codePoints(s_);
    std::vector<Change> changes;
    changes.reserve(chars.size());
    std::size_t i = 0;
    while (i < chars.size()) {
        std::size_t j = i + 1;
        while (j < chars.size() && (combiningClass(chars[j]) != 0 || (chars[j] >= 0x1160 && chars[j] <= 0x11FF) ||
                                    (chars[j] >= 0x3099 && chars[j] <= 0x309A)))
            ++j;
        const std::vector<char32_t> run(chars.begin() + static_cast<std::ptrdiff_t>(i),
                                        chars.begin() + static_cast<std::ptrdiff_t>(j));
        const auto out = normalizeForm(run, form);
        const int n = static_cast<int>(run.size()), m = static_cast<int>(out.size());
        for (int k = 0; k < m; ++k) {
            int change = k < n ? 0 : 1;
            if (m < n && k == m - 1) change = -(n - m);
            changes.push_back({out[static_cast<std::size_t>(k)], change});
        }
        if (m == 0) {  // a run that normalises to nothing
            if (!changes.empty()) changes.back().change -= n;
        }
        i = j;
    }
    transform(changes, 0);
}

void NormalizedString::strip(bool left, bool right) {
    const auto chars = codePoints(s_);
    std::size_t lead = 0, trail = 0;
    if (left)
        while (lead < chars.size() && isWhitespace(chars[lead])) ++lead;
    if (right)
        while (trail < chars.size() - lead && isWhitespace(chars[chars.size() - 1 - trail])) ++trail;
    if (lead == 0 && trail == 0) return;
    std::vector<Change> changes;
    for (std::size_t i = lead; i + trail < chars.size(); ++i) changes.push_back({chars[i], 0});
    transform(changes, lead);
}

NormalizedString NormalizedString::slice(std::size_t begin, std::size_t end) const {
    NormalizedString out;
    out.s_ = s_.substr(begin, end - begin);
    if (identity_) {
        out.identity_ = true;
        out.shift_ = shift_ + begin;
        return out;
    }
    out.align_.assign(align_.begin() + static_cast<std::ptrdiff_t>(begin),
                      align_.begin() + static_cast<std::ptrdiff_t>(end));
    out.shift_ = end > begin ? align_[begin].begin : shift_;
    return out;
}

std::vector<NormalizedString> NormalizedString::split(const Pattern& pattern, SplitBehavior behavior) const {
    thread_local std::vector<PatternMatch> matches;
    pattern(s_, matches);
    std::vector<PatternMatch> pieces;  // isMatch here means "remove"
    pieces.reserve(matches.size());
    bool previous = false;
    switch (behavior) {
        case SplitBehavior::Isolated:
            for (const auto& m : matches) pieces.push_back({m.begin, m.end, false});
            break;
        case SplitBehavior::Removed: pieces = matches; break;
        case SplitBehavior::Contiguous:
            for (const auto& m : matches) {
                if (m.isMatch == previous && !pieces.empty())
                    pieces.back().end = m.end;
                else
                    pieces.push_back({m.begin, m.end, false});
                previous = m.isMatch;
            }
            break;
        case SplitBehavior::MergedWithPrevious:
            for (const auto& m : matches) {
                if (m.isMatch && !previous && !pieces.empty())
                    pieces.back().end = m.end;
                else
                    pieces.push_back({m.begin, m.end, false});
                previous = m.isMatch;
            }
            break;
        case SplitBehavior::MergedWithNext:
            for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
                if (it->isMatch && !previous && !pieces.empty())
                    pieces.back().begin = it->begin;
                else
                    pieces.push_back({it->begin, it->end, false});
                previous = it->isMatch;
            }
            std::reverse(pieces.begin(), pieces.end());
            break;
    }
    std::vector<NormalizedString> out;
    out.reserve(pieces.size());
    for (const auto& p : pieces)
        if (!p.isMatch && p.end > p.begin) out.push_back(slice(p.begin, p.end));
    return out;
}

Span NormalizedString::original(std::size_t begin, std::size_t end) const {
    const auto at = [](std::size_t v) { return static_cast<std::uint32_t>(v); };
    if (begin >= end || begin >= s_.size()) return {at(shift_ + begin), at(shift_ + begin)};
    end = std::min(end, s_.size());
    if (identity_) {  // widen to whole characters
        auto continuation = [&](std::size_t i) { return (static_cast<unsigned char>(s_[i]) & 0xC0) == 0x80; };
        while (begin > 0 && continuation(begin)) --begin;
        while (end < s_.size() && continuation(end)) ++end;
        return {at(shift_ + begin), at(shift_ + end)};
    }
    return {align_[begin].begin, align_[end - 1].end};
}

}  // namespace attnscope::tok
