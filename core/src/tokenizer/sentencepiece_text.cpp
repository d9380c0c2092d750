#include "sentencepiece_text.h"

#include "unicode.h"

#include <utf8proc.h>

#include <utility>

namespace attnscope::tok {

namespace {

bool isPythonSpace(char32_t c) { return isWhitespace(c) || (c >= 0x1C && c <= 0x1F); }

// Runs of Python whitespace as matches; `edgesOnly` keeps only a run at the start or the end.
Pattern spaceRuns(bool edgesOnly) {
    return [edgesOnly](std::string_view s, std::vector<PatternMatch>& out) {
        std::size_t i = 0, plain = 0;
        while (i < s.size()) {
            std::size_t len = 0;
            if (!isPythonSpace(decodeUtf8(s, i, &len))) {
                i += len;
                continue;
            }
            std::size_t j = i + len;
            while (j < s.size()) {
                std::size_t l = 0;
                if (!isPythonSpace(decodeUtf8(s, j, &l))) break;
                j += l;
            }
            if (!edgesOnly || i == 0 || j == s.size()) {
                if (i > plain) out.push_back({plain, i, false});
                out.push_back({i, j, true});
                plain = j;
            }
            i = j;
        }
        if (plain < s.size()) out.push_back({plain, s.size(), false});
    };
}

class AlbertNormalizer final : public Normalizer {
public:
    AlbertNormalizer(bool removeSpace, bool keepAccents, bool lower)
        : removeSpace_(removeSpace), keepAccents_(keepAccents), lower_(lower) {}

    void normalize(NormalizedString& s) const override {
        if (removeSpace_) {
            s.replace(spaceRuns(true), "");
            s.replace(spaceRuns(false), " ");
        }
        s.replace(literalPattern("``"), "\"");
        s.replace(literalPattern("''"), "\"");
        if (!keepAccents_) {
            s.normalize(NormalForm::NFKD);
            s.filter([](char32_t c) { return combiningClass(c) == 0; });
        }
        if (lower_) s.lowercase();
    }

private:
    bool removeSpace_, keepAccents_, lower_;
};

}  // namespace

std::unique_ptr<Normalizer> makeAlbertNormalizer(bool removeSpace, bool keepAccents, bool lower) {
    return std::make_unique<AlbertNormalizer>(removeSpace, keepAccents, lower);
}

bool isPythonDigit(char32_t c) {
    if (c >= '0' && c <= '9') return true;
    if (c < 0x80) return false;
    if (utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_ND) return true;
    // Python 3.11's isdigit() characters outside Nd (Numeric_Type=Digit).
    static const std::pair<char32_t, char32_t> kDigit[] = {
            {0xB2, 0xB3},     {0xB9, 0xB9},       {0x1369, 0x1371},   {0x19DA, 0x19DA},   {0x2070, 0x2070},
            {0x2074, 0x2079}, {0x2080, 0x2089},   {0x2460, 0x2468},   {0x2474, 0x247C},   {0x2488, 0x2490},
            {0x24EA, 0x24EA}, {0x24F5, 0x24FD},   {0x24FF, 0x24FF},   {0x2776, 0x277E},   {0x2780, 0x2788},
            {0x278A, 0x2792}, {0x10A40, 0x10A43}, {0x10E60, 0x10E68}, {0x11052, 0x1105A}, {0x1F100, 0x1F10A}};
    for (const auto& [lo, hi] : kDigit)
        if (c >= lo && c <= hi) return true;
    return false;
}

}  // namespace attnscope::tok
