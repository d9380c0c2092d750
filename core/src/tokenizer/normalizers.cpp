// Normalizers of tokenizer.json: BertNormalizer, NFC/NFD/NFKC/NFKD, Lowercase, StripAccents,
// Strip, Prepend, Replace, Nmt, Precompiled (precompiled.cpp) and Sequence.
#include "components.h"
#include "precompiled.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

namespace attnscope::tok {

namespace {

class BertNormalizer final : public Normalizer {
public:
    explicit BertNormalizer(const Fields& f)
        : cleanText_(f.boolean("clean_text", true)), chinese_(f.boolean("handle_chinese_chars", true)),
          lowercase_(f.boolean("lowercase", true)), stripAccents_(f.boolean("strip_accents", lowercase_)) {}

    void normalize(NormalizedString& s) const override {
        if (cleanText_) {
            s.filter([](char32_t c) { return !(c == 0 || c == 0xFFFD || isBertControl(c)); });
            s.mapChars([](char32_t c) { return isBertWhitespace(c) ? U' ' : c; });
        }
        if (chinese_) {
            std::vector<Change> changes;
            for (char32_t c : codePoints(s.get())) {
                if (isChineseChar(c)) {
                    changes.push_back({U' ', 0});
                    changes.push_back({c, 1});
                    changes.push_back({U' ', 1});
                } else {
                    changes.push_back({c, 0});
                }
            }
            s.transform(changes, 0);
        }
        if (stripAccents_) {
            s.normalize(NormalForm::NFD);
            s.filter([](char32_t c) { return !isMarkNonspacing(c); });
        }
        if (lowercase_) s.lowercase();
    }

private:
    bool cleanText_, chinese_, lowercase_, stripAccents_;
};

class FormNormalizer final : public Normalizer {
public:
    explicit FormNormalizer(NormalForm form) : form_(form) {}
    void normalize(NormalizedString& s) const override { s.normalize(form_); }

private:
    NormalForm form_;
};

class LowercaseNormalizer final : public Normalizer {
public:
    void normalize(NormalizedString& s) const override { s.lowercase(); }
};

// Removes every combining mark (Mn, Mc, Me); BertNormalizer's accent stripping removes only Mn.
class StripAccentsNormalizer final : public Normalizer {
public:
    void normalize(NormalizedString& s) const override {
        s.filter([](char32_t c) { return !isMark(c); });
    }
};

class StripNormalizer final : public Normalizer {
public:
    StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
    void normalize(NormalizedString& s) const override { s.strip(left_, right_); }

private:
    bool left_, right_;
};

class PrependNormalizer final : public Normalizer {
public:
    explicit PrependNormalizer(std::string text) : text_(std::move(text)) {}
    void normalize(NormalizedString& s) const override { s.prepend(text_); }

private:
    std::string text_;
};

class ReplaceNormalizer final : public Normalizer {
public:
    ReplaceNormalizer(Pattern pattern, std::string content)
        : pattern_(std::move(pattern)), content_(std::move(content)) {}
    void normalize(NormalizedString& s) const override { s.replace(pattern_, content_); }

private:
    Pattern pattern_;
    std::string content_;
};

// SentencePiece's NMT rule without a charsmap: control characters dropped, odd spaces made ' '.
class NmtNormalizer final : public Normalizer {
public:
    void normalize(NormalizedString& s) const override {
        s.filter([](char32_t c) {
            return !((c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || c == 0x8F ||
                     c == 0x9F);
        });
        s.mapChars([](char32_t c) {
            const bool space = c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x1680 ||
                               (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 || c == 0x2581 ||
                               c == 0xFEFF || c == 0xFFFD;
            return space ? U' ' : c;
        });
    }
};

class SequenceNormalizer final : public Normalizer {
public:
    explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> items) : items_(std::move(items)) {}
    void normalize(NormalizedString& s) const override {
        for (const auto& n : items_) n->normalize(s);
    }

private:
    std::vector<std::unique_ptr<Normalizer>> items_;
};

}  // namespace

std::unique_ptr<Normalizer> makeNormalizer(const nlohmann::json& j, const Origin& origin) {
    if (j.is_null()) return nullptr;
    const std::string type = componentType(j, origin.at("normalizer"));
    const Fields f{j, origin.at("normalizer (" + type + ")")};
    if (type == "BertNormalizer") return std::make_unique<BertNormalizer>(f);
    if (type == "NFC") return std::make_unique<FormNormalizer>(NormalForm::NFC);
    if (type == "NFD") return std::make_unique<FormNormalizer>(NormalForm::NFD);
    if (type == "NFKC") return std::make_unique<FormNormalizer>(NormalForm::NFKC);
    if (type == "NFKD") return std::make_unique<FormNormalizer>(NormalForm::NFKD);
    if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
    if (type == "StripAccents") return std::make_unique<StripAccentsNormalizer>();
    if (type == "Strip")
        return std::make_unique<StripNormalizer>(f.boolean("strip_left", true), f.boolean("strip_right", true));
    if (type == "Prepend") return std::make_unique<PrependNormalizer>(f.string("prepend"));
    if (type == "Replace")
        return std::make_unique<ReplaceNormalizer>(readPattern(f.object("pattern"), f.where), f.string("content"));
    if (type == "Precompiled") return makePrecompiled(f);
    if (type == "Nmt") return std::make_unique<NmtNormalizer>();
    if (type == "Sequence") {
        const auto& list = f.object("normalizers");
        if (!list.is_array()) f.fail("'normalizers' must be a list");
        std::vector<std::unique_ptr<Normalizer>> items;
        for (const auto& item : list)
            if (auto n = makeNormalizer(item, origin)) items.push_back(std::move(n));
        return std::make_unique<SequenceNormalizer>(std::move(items));
    }
    throw Error(origin.at("normalizer") + ": type '" + type +
                "' is not supported (BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Prepend, "
                "Replace, Nmt, Precompiled, Sequence)");
}

}  // namespace attnscope::tok
