// Tokenizer: reads tokenizer.json and runs its pipeline (added tokens, normalizer, pre-tokenizer,
// model, post-processor), as Hugging Face's TokenizerImpl::encode does.
#include "attnscope/tokenizer/tokenizer.h"

#include "added_vocabulary.h"
#include "vocabulary.h"
#include "components.h"
#include "tokenizer_impl.h"

#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"
#include "io/json_util.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace attnscope {

using namespace tok;

namespace {

TokenStyle detectStyle(const nlohmann::json& root, std::string& prefix) {
    // The decoder says best how tokens read; the pre-tokenizer and model otherwise.
    std::function<std::optional<TokenStyle>(const nlohmann::json&)> scan =
            [&](const nlohmann::json& j) -> std::optional<TokenStyle> {
        if (j.is_array()) {
            for (const auto& e : j)
                if (auto s = scan(e)) return s;
            return std::nullopt;
        }
        if (!j.is_object()) return std::nullopt;
        const std::string type = j.value("type", std::string());
        if (type == "ByteLevel") return TokenStyle::ByteLevel;
        if (type == "Metaspace") return TokenStyle::Metaspace;
        if (type == "WordPiece") {
            prefix = j.value("prefix", j.value("continuing_subword_prefix", std::string("##")));
            return TokenStyle::WordPiece;
        }
        if ((type == "Replace" || type == "Prepend") && j.dump().find("\xE2\x96\x81") != std::string::npos)
            return TokenStyle::Metaspace;
        for (const char* key : {"decoders", "pretokenizers", "normalizers"})
            if (j.contains(key))
                if (auto s = scan(j[key])) return s;
        return std::nullopt;
    };
    for (const char* key : {"decoder", "pre_tokenizer", "model", "normalizer"})
        if (root.contains(key))
            if (auto s = scan(root[key])) return *s;
    return TokenStyle::Plain;
}

std::vector<AddedToken> readAddedTokens(const nlohmann::json& root, const Origin& origin) {
    std::vector<AddedToken> out;
    if (!root.contains("added_tokens") || root["added_tokens"].is_null()) return out;
    const auto& list = root["added_tokens"];
    if (!list.is_array()) throw Error(origin.at("added_tokens") + ": must be a list");
    for (const auto& t : list) {
        const Fields f{t, origin.at("added_tokens")};
        if (!t.is_object()) f.fail("each entry must be an object, not " + jsonExcerpt(t));
        AddedToken a;
        a.content = f.string("content");
        a.id = f.integer("id");
        // The vocabulary's one limit: vocabSize() (max id + 1) sizes tables and checks elsewhere.
        if (a.id < 0 || a.id > origin.maxId)
            f.fail("token '" + a.content + "' has " + tokenIdLimitError(a.id, origin.maxId));
        a.special = f.boolean("special", false);
        a.singleWord = f.boolean("single_word", false);
        a.lstrip = f.boolean("lstrip", false);
        a.rstrip = f.boolean("rstrip", false);
        a.normalized = f.boolean("normalized", !a.special);
        out.push_back(std::move(a));
    }
    return out;
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::fromJson(const std::string& json, const std::string& origin) {
    const nlohmann::json root = parseJson(json, origin);
    if (!root.is_object()) throw Error(origin + ": expected a JSON object");
    const Origin o{origin, tokenIdLimit(json.size())};
    auto impl = std::make_unique<Impl>();
    impl->origin = origin;
    if (!root.contains("model")) throw Error(o.at("model") + ": missing (a tokenizer.json needs a model)");
    impl->model = makeModel(root["model"], o);
    impl->normalizer = makeNormalizer(root.value("normalizer", nlohmann::json()), o);
    impl->preTokenizer = makePreTokenizer(root.value("pre_tokenizer", nlohmann::json()), o);
    impl->postProcessor = makePostProcessor(root.value("post_processor", nlohmann::json()), o);
    impl->decoder = makeDecoder(root.value("decoder", nlohmann::json()), o);
    impl->added = AddedVocabulary(readAddedTokens(root, o), impl->normalizer.get());
    impl->style = detectStyle(root, impl->prefix);
    return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
}

std::unique_ptr<Tokenizer> Tokenizer::fromFile(const std::filesystem::path& file) {
    return fromJson(readInputFile(file, kMaxJsonFileBytes, "tokenizer.json"), file.string());
}

Encoding Tokenizer::encode(const std::string& text, bool addSpecialTokens) const {
    std::size_t bad = 0;
    if (!isValidUtf8(text, &bad)) throw Error("the text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    if (text.size() >= (std::size_t{1} << 32)) throw Error("the text is longer than 4 GiB");
    const Impl& m = *impl_;
    std::vector<Split> splits = m.added.extractAndNormalize(text, m.normalizer.get());
    if (m.preTokenizer) m.preTokenizer->preTokenize(splits);
    Encoded e;
    e.text = text;
    e.tokens.reserve(splits.size() + 4);
    e.special.reserve(splits.size() + 4);
    thread_local std::vector<Token> tokens;  // reused: one allocation per thread, not per word
    for (auto& split : splits) {
        std::vector<Token>* from = split.tokens ? &*split.tokens : &tokens;
        if (!split.tokens) {
            tokens.clear();
            m.model->tokenize(split.text.get(), tokens);
        }
        for (auto& t : *from) {
            const Span span = split.text.original(t.begin, t.end);
            e.tokens.push_back({t.id, std::move(t.value), span.begin, span.end});
            e.special.push_back(false);
        }
    }
    if (m.postProcessor) m.postProcessor->process(e, addSpecialTokens);
    Encoding out;
    out.ids.reserve(e.tokens.size());
    out.tokens.reserve(e.tokens.size());
    out.offsets.reserve(e.tokens.size());
    for (std::size_t i = 0; i < e.tokens.size(); ++i) {
        out.ids.push_back(e.tokens[i].id);
        out.tokens.push_back(std::move(e.tokens[i].value));
        out.offsets.emplace_back(e.tokens[i].begin, e.tokens[i].end);
        out.special.push_back(e.special[i]);
    }
    return out;
}

std::string Tokenizer::decode(const std::vector<std::int64_t>& ids, bool skipSpecialTokens) const {
    std::vector<std::string> tokens;
    for (auto id : ids) {
        std::optional<std::string> t;
        if (const auto* a = impl_->added.byId(id))
            t = a->decoded;
        else
            t = impl_->model->idToToken(id);
        if (!t || (skipSpecialTokens && impl_->added.isSpecial(*t))) continue;
        tokens.push_back(std::move(*t));
    }
    std::string out;
    if (impl_->decoder) {
        for (const auto& s : impl_->decoder->decodeChain(std::move(tokens))) out += s;
        return out;
    }
    for (std::size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
}

std::optional<std::int64_t> Tokenizer::tokenToId(const std::string& token) const {
    if (const auto* a = impl_->added.byContent(token)) return a->id;
    return impl_->model->tokenToId(token);
}

std::optional<std::string> Tokenizer::idToToken(std::int64_t id) const {
    if (const auto* a = impl_->added.byId(id)) return a->content;
    return impl_->model->idToToken(id);
}

std::int64_t Tokenizer::vocabSize() const { return std::max(impl_->model->maxId(), impl_->added.maxId()) + 1; }

TokenStyle Tokenizer::style() const { return impl_->style; }

const std::string& Tokenizer::origin() const { return impl_->origin; }

std::string Tokenizer::displayToken(std::int64_t id) const {
    // Special tokens read as written; other added tokens (GPT-NeoX's and CodeGen's runs of
    // spaces, Gemma's runs of newlines) show their whitespace like vocabulary tokens do.
    if (const auto* a = impl_->added.byId(id))
        return a->special ? a->content : readableToken(a->content, impl_->style, impl_->prefix);
    const auto t = impl_->model->idToToken(id);
    if (!t) throw Error(impl_->origin + ": token id " + std::to_string(id) + " is not in the vocabulary");
    return readableToken(*t, impl_->style, impl_->prefix);
}

std::vector<std::string> Tokenizer::displayTokens(const std::vector<std::int64_t>& ids) const {
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (auto id : ids) out.push_back(displayToken(id));
    return out;
}

}  // namespace attnscope
