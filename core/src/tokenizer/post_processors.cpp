// Post-processors: TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel (offset
// trimming) and Sequence. Tokens they add have offsets (0, 0).
#include "components.h"
#include "vocabulary.h"
#include "io/json_util.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace attnscope::tok {

namespace {

struct SpecialPiece {
    std::vector<std::int64_t> ids;
    std::vector<std::string> tokens;
};

void appendSpecial(Encoded& e, const SpecialPiece& p) {
    for (std::size_t i = 0; i < p.ids.size(); ++i) {
        e.tokens.push_back({p.ids[i], p.tokens[i], 0, 0});
        e.special.push_back(true);
    }
}

// Byte-level offsets exclude the leading and trailing spaces of each token (except the one space
// add_prefix_space put before the first word). The spaces are counted in characters of the
// original text, as Hugging Face's bindings do (they trim char offsets), so a space token that
// stands for part of a multi-byte character never ends up inside that character.
void trimOffsets(Encoded& e, bool addPrefixSpace) {
    const char32_t space = byteToChar(' ');
    auto isSpace = [&](char32_t c) { return c == space || isWhitespace(c); };
    std::vector<std::size_t> starts;  // byte offset of each character, then the length
    for (std::size_t i = 0, n = 0; i < e.text.size(); i += n) {
        decodeUtf8(e.text, i, &n);
        starts.push_back(i);
    }
    starts.push_back(e.text.size());
    auto toChar = [&](std::size_t byte) {  // index of the character holding `byte`
        return static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), byte) - starts.begin()) - 1;
    };
    std::vector<char32_t> chars;  // the token's characters; one buffer for all tokens
    for (std::size_t i = 0; i < e.tokens.size(); ++i) {
        Token& t = e.tokens[i];
        chars.clear();
        for (std::size_t k = 0, n = 0; k < t.value.size(); k += n) chars.push_back(decodeUtf8(t.value, k, &n));
        std::size_t lead = 0, trail = 0;
        while (lead < chars.size() && isSpace(chars[lead])) ++lead;
        while (trail < chars.size() && isSpace(chars[chars.size() - 1 - trail])) ++trail;
        if (lead == 0 && trail == 0) continue;
        std::size_t begin = toChar(t.begin);
        std::size_t end = t.end >= e.text.size() ? starts.size() - 1 : toChar(t.end);
        if (lead > 0) {
            const bool first = i == 0 || begin == 0;
            if (first && addPrefixSpace && lead == 1) lead = 0;
            begin = std::min(begin + lead, end);
        }
        if (trail > 0 && end >= trail) end = std::max(end - trail, begin);
        t.begin = starts[begin];
        t.end = starts[end];
    }
}

class ByteLevelPost final : public PostProcessor {
public:
    ByteLevelPost(bool trim, bool addPrefixSpace) : trim_(trim), addPrefixSpace_(addPrefixSpace) {}
    void process(Encoded& e, bool) const override {
        if (trim_) trimOffsets(e, addPrefixSpace_);
    }

private:
    bool trim_, addPrefixSpace_;
};

class ClsSepPost final : public PostProcessor {  // BertProcessing and RobertaProcessing
public:
    ClsSepPost(SpecialPiece cls, SpecialPiece sep, bool trim, bool addPrefixSpace)
        : cls_(std::move(cls)), sep_(std::move(sep)), trim_(trim), addPrefixSpace_(addPrefixSpace) {}
    void process(Encoded& e, bool addSpecialTokens) const override {
        if (trim_) trimOffsets(e, addPrefixSpace_);
        if (!addSpecialTokens) return;
        Encoded out;
        appendSpecial(out, cls_);
        out.tokens.insert(out.tokens.end(), e.tokens.begin(), e.tokens.end());
        out.special.insert(out.special.end(), e.special.begin(), e.special.end());
        appendSpecial(out, sep_);
        e = std::move(out);
    }

private:
    SpecialPiece cls_, sep_;
    bool trim_, addPrefixSpace_;
};

class TemplatePost final : public PostProcessor {
public:
    // Items of the single-sequence template: a special piece, or nullopt for the sequence.
    explicit TemplatePost(std::vector<std::optional<SpecialPiece>> items) : items_(std::move(items)) {}
    void process(Encoded& e, bool addSpecialTokens) const override {
        if (!addSpecialTokens) return;
        Encoded out;
        for (const auto& item : items_) {
            if (item) {
                appendSpecial(out, *item);
            } else {
                out.tokens.insert(out.tokens.end(), e.tokens.begin(), e.tokens.end());
                out.special.insert(out.special.end(), e.special.begin(), e.special.end());
            }
        }
        e = std::move(out);
    }

private:
    std::vector<std::optional<SpecialPiece>> items_;
};

class SequencePost final : public PostProcessor {
public:
    explicit SequencePost(std::vector<std::unique_ptr<PostProcessor>> items) : items_(std::move(items)) {}
    void process(Encoded& e, bool addSpecialTokens) const override {
        for (const auto& p : items_) p->process(e, addSpecialTokens);
    }

private:
    std::vector<std::unique_ptr<PostProcessor>> items_;
};

SpecialPiece readPair(const Fields& f, const char* key, std::int64_t maxId) {  // ["[CLS]", 101]
    const auto& v = f.object(key);
    if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_number_integer())
        f.fail("'" + std::string(key) + "' must be [token, id], not " + jsonExcerpt(v));
    // An unsigned JSON integer above 2^63 reads as negative here and is refused as such.
    if (v[1].get<std::int64_t>() < 0 || v[1].get<std::int64_t>() > maxId)
        f.fail("'" + std::string(key) + "' has " + tokenIdLimitError(v[1].get<std::int64_t>(), maxId));
    return {{v[1].get<std::int64_t>()}, {v[0].get<std::string>()}};
}

std::unique_ptr<PostProcessor> makeTemplate(const Fields& f, std::int64_t maxId) {
    std::map<std::string, SpecialPiece> specials;
    if (f.has("special_tokens")) {
        const auto& st = f.object("special_tokens");
        if (!st.is_object()) f.fail("'special_tokens' must be an object");
        for (auto it = st.begin(); it != st.end(); ++it) {
            const auto& v = it.value();
            if (!v.is_object() || !v.contains("ids") || !v.contains("tokens") || !v["ids"].is_array() ||
                !v["tokens"].is_array() || v["ids"].size() != v["tokens"].size())
                f.fail("special token '" + it.key() + "' must have lists 'ids' and 'tokens' of the same length");
            SpecialPiece p;
            for (const auto& id : v["ids"]) {
                if (!id.is_number_integer())
                    f.fail("special token '" + it.key() + "' has an invalid id " + jsonExcerpt(id));
                if (id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > maxId)
                    f.fail("special token '" + it.key() + "' has " + tokenIdLimitError(id.get<std::int64_t>(), maxId));
                p.ids.push_back(id.get<std::int64_t>());
            }
            for (const auto& t : v["tokens"]) {
                if (!t.is_string()) f.fail("special token '" + it.key() + "' has an invalid token " + jsonExcerpt(t));
                p.tokens.push_back(t.get<std::string>());
            }
            specials.emplace(it.key(), std::move(p));
        }
    }
    const auto& single = f.object("single");
    if (!single.is_array()) f.fail("'single' must be a list");
    std::vector<std::optional<SpecialPiece>> items;
    for (const auto& item : single) {
        if (item.is_object() && item.contains("SpecialToken") && item["SpecialToken"].contains("id")) {
            const std::string id = item["SpecialToken"]["id"].get<std::string>();
            const auto it = specials.find(id);
            if (it == specials.end()) f.fail("the template names '" + id + "', which is not in special_tokens");
            items.emplace_back(it->second);
        } else if (item.is_object() && item.contains("Sequence")) {
            items.emplace_back(std::nullopt);
        } else {
            f.fail("template item " + jsonExcerpt(item) + " is neither a SpecialToken nor a Sequence");
        }
    }
    return std::make_unique<TemplatePost>(std::move(items));
}

}  // namespace

std::unique_ptr<PostProcessor> makePostProcessor(const nlohmann::json& j, const Origin& origin) {
    if (j.is_null()) return nullptr;
    const std::string type = componentType(j, origin.at("post_processor"));
    const Fields f{j, origin.at("post_processor (" + type + ")")};
    if (type == "ByteLevel")
        return std::make_unique<ByteLevelPost>(f.boolean("trim_offsets", true), f.boolean("add_prefix_space", true));
    if (type == "BertProcessing")
        return std::make_unique<ClsSepPost>(readPair(f, "cls", origin.maxId), readPair(f, "sep", origin.maxId), false,
                                            false);
    if (type == "RobertaProcessing")
        return std::make_unique<ClsSepPost>(readPair(f, "cls", origin.maxId), readPair(f, "sep", origin.maxId),
                                            f.boolean("trim_offsets", true), f.boolean("add_prefix_space", true));
    if (type == "TemplateProcessing") return makeTemplate(f, origin.maxId);
    if (type == "Sequence") {
        const auto& list = f.object("processors");
        if (!list.is_array()) f.fail("'processors' must be a list");
        std::vector<std::unique_ptr<PostProcessor>> items;
        for (const auto& item : list)
            if (auto p = makePostProcessor(item, origin)) items.push_back(std::move(p));
        return std::make_unique<SequencePost>(std::move(items));
    }
    throw Error(origin.at("post_processor") + ": type '" + type +
                "' is not supported (TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence)");
}

}  // namespace attnscope::tok
