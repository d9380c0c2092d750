// Pre-tokenizers of tokenizer.json: ByteLevel, Split, BertPreTokenizer, Whitespace,
// WhitespaceSplit, Punctuation, Digits, Metaspace, CharDelimiterSplit and Sequence.
#include "components.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <array>

namespace attnscope::tok {

namespace {

// Applies f to every split without tokens; f returns the pieces that replace it (empty ones are
// dropped, as Hugging Face's PreTokenizedString does).
template <typename F>
void splitEach(std::vector<Split>& splits, F f) {
    std::vector<Split> out;
    out.reserve(splits.size());
    for (auto& s : splits) {
        if (s.tokens) {
            out.push_back(std::move(s));
            continue;
        }
        for (auto& piece : f(s.text))
            if (!piece.empty()) out.push_back({std::move(piece), std::nullopt});
    }
    splits.swap(out);
}

SplitBehavior readBehavior(const Fields& f, const char* key, SplitBehavior fallback) {
    if (!f.has(key)) return fallback;
    const std::string b = f.string(key);
    if (b == "Removed") return SplitBehavior::Removed;
    if (b == "Isolated") return SplitBehavior::Isolated;
    if (b == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
    if (b == "MergedWithNext") return SplitBehavior::MergedWithNext;
    if (b == "Contiguous") return SplitBehavior::Contiguous;
    f.fail("behavior '" + b + "' is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

class PatternSplit final : public PreTokenizer {
public:
    PatternSplit(Pattern pattern, SplitBehavior behavior) : pattern_(std::move(pattern)), behavior_(behavior) {}
    void preTokenize(std::vector<Split>& splits) const override {
        splitEach(splits, [&](NormalizedString& s) { return s.split(pattern_, behavior_); });
    }

private:
    Pattern pattern_;
    SplitBehavior behavior_;
};

class ByteLevelPre final : public PreTokenizer {
public:
    ByteLevelPre(bool addPrefixSpace, bool useRegex) : addPrefixSpace_(addPrefixSpace), useRegex_(useRegex) {}

    void preTokenize(std::vector<Split>& splits) const override {
        static const Pattern gpt2 = regexPattern(std::make_shared<const Regex>(
                R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", "ByteLevel"));
        splitEach(splits, [&](NormalizedString& s) {
            if (addPrefixSpace_ && s.get().compare(0, 1, " ") != 0) s.prepend(" ");
            if (useRegex_) return s.split(gpt2, SplitBehavior::Isolated);
            return std::vector<NormalizedString>{std::move(s)};
        });
        static const auto table = [] {
            std::array<char32_t, 256> t{};
            for (int b = 0; b < 256; ++b) t[static_cast<std::size_t>(b)] = byteToChar(static_cast<unsigned char>(b));
            return t;
        }();
        for (auto& split : splits)
            if (!split.tokens) split.text.mapBytes(table);
    }

private:
    bool addPrefixSpace_, useRegex_;
};

class BertPre final : public PreTokenizer {
public:
    void preTokenize(std::vector<Split>& splits) const override {
        static const Pattern space = charPattern(isWhitespace);
        static const Pattern punct = charPattern(isPunctuation);
        splitEach(splits, [&](NormalizedString& s) { return s.split(space, SplitBehavior::Removed); });
        splitEach(splits, [&](NormalizedString& s) { return s.split(punct, SplitBehavior::Isolated); });
    }
};

enum class Prepend { Always, First, Never };

class MetaspacePre final : public PreTokenizer {
public:
    MetaspacePre(std::string replacement, Prepend prepend, bool split)
        : replacement_(std::move(replacement)), prepend_(prepend), split_(split), spaces_(literalPattern(" ")),
          marks_(literalPattern(replacement_)) {}

    void preTokenize(std::vector<Split>& splits) const override {
        splitEach(splits, [&](NormalizedString& s) {
            s.replace(spaces_, replacement_);
            const bool starts = s.get().compare(0, replacement_.size(), replacement_) == 0;
            if (!starts && (prepend_ == Prepend::Always || (prepend_ == Prepend::First && s.shift() == 0)))
                s.prepend(replacement_);
            if (split_) return s.split(marks_, SplitBehavior::MergedWithNext);
            return std::vector<NormalizedString>{std::move(s)};
        });
    }

private:
    std::string replacement_;
    Prepend prepend_;
    bool split_;
    Pattern spaces_, marks_;
};

class SequencePre final : public PreTokenizer {
public:
    explicit SequencePre(std::vector<std::unique_ptr<PreTokenizer>> items) : items_(std::move(items)) {}
    void preTokenize(std::vector<Split>& splits) const override {
        for (const auto& p : items_) p->preTokenize(splits);
    }

private:
    std::vector<std::unique_ptr<PreTokenizer>> items_;
};

}  // namespace

std::unique_ptr<PreTokenizer> makePreTokenizer(const nlohmann::json& j, const Origin& origin) {
    if (j.is_null()) return nullptr;
    const std::string type = componentType(j, origin.at("pre_tokenizer"));
    const Fields f{j, origin.at("pre_tokenizer (" + type + ")")};
    if (type == "ByteLevel")
        return std::make_unique<ByteLevelPre>(f.boolean("add_prefix_space", true), f.boolean("use_regex", true));
    if (type == "BertPreTokenizer") return std::make_unique<BertPre>();
    if (type == "Whitespace") {
        static const auto words = std::make_shared<const Regex>(R"(\w+|[^\w\s]+)", "Whitespace");
        return std::make_unique<PatternSplit>(invertPattern(regexPattern(words)), SplitBehavior::Removed);
    }
    if (type == "WhitespaceSplit")
        return std::make_unique<PatternSplit>(charPattern(isWhitespace), SplitBehavior::Removed);
    if (type == "Punctuation")
        return std::make_unique<PatternSplit>(charPattern(isPunctuation),
                                              readBehavior(f, "behavior", SplitBehavior::Isolated));
    if (type == "Digits")
        return std::make_unique<PatternSplit>(charPattern(isNumeric), f.boolean("individual_digits", false)
                                                                              ? SplitBehavior::Isolated
                                                                              : SplitBehavior::Contiguous);
    if (type == "CharDelimiterSplit") {
        const auto cps = codePoints(f.string("delimiter"));
        if (cps.size() != 1) f.fail("'delimiter' must be one character");
        const char32_t d = cps[0];
        return std::make_unique<PatternSplit>(charPattern([d](char32_t c) { return c == d; }), SplitBehavior::Removed);
    }
    if (type == "Split") {
        Pattern p = readPattern(f.object("pattern"), f.where);
        if (f.boolean("invert", false)) p = invertPattern(std::move(p));
        return std::make_unique<PatternSplit>(std::move(p), readBehavior(f, "behavior", SplitBehavior::Isolated));
    }
    if (type == "Metaspace") {
        const std::string replacement = f.string("replacement", std::string("\xE2\x96\x81"));
        if (codePoints(replacement).size() != 1) f.fail("'replacement' must be one character");
        Prepend prepend = f.boolean("add_prefix_space", true) ? Prepend::Always : Prepend::Never;
        if (f.has("prepend_scheme")) {
            const std::string s = f.string("prepend_scheme");
            if (s == "always")
                prepend = Prepend::Always;
            else if (s == "first")
                prepend = Prepend::First;
            else if (s == "never")
                prepend = Prepend::Never;
            else
                f.fail("prepend_scheme '" + s + "' is not one of always, first, never");
        }
        return std::make_unique<MetaspacePre>(replacement, prepend, f.boolean("split", true));
    }
    if (type == "Sequence") {
        const auto& list = f.object("pretokenizers");
        if (!list.is_array()) f.fail("'pretokenizers' must be a list");
        std::vector<std::unique_ptr<PreTokenizer>> items;
        for (const auto& item : list)
            if (auto p = makePreTokenizer(item, origin)) items.push_back(std::move(p));
        return std::make_unique<SequencePre>(std::move(items));
    }
    throw Error(origin.at("pre_tokenizer") + ": type '" + type +
                "' is not supported (ByteLevel, Split, BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation, "
                "Digits, Metaspace, CharDelimiterSplit, Sequence)");
}

}  // namespace attnscope::tok
