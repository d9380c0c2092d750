// The stages of a tokenizer.json pipeline, as internal interfaces; each factory reads one
// component's JSON object and throws attnscope::Error naming the file and the component.
#pragma once

#include "normalized.h"
#include "vocabulary.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnscope::tok {

struct Token {
    std::int64_t id = 0;
    std::string value;
    std::size_t begin = 0, end = 0;  // byte offsets: in the piece for a model, in the original text after
};

// A piece of text on its way through the pipeline; `tokens` is set once it is tokenized (an added
// token, or the model's output).
struct Split {
    NormalizedString text;
    std::optional<std::vector<Token>> tokens;
};

// Where a component sits, for error messages: "FILE: pre_tokenizer (Split)".
struct Origin {
    std::string file;
    std::int64_t maxId = Vocabulary::kMaxId;  // tokenIdLimit(the file's size): for every id it announces
    std::string at(const std::string& component) const { return file + ": " + component; }
};

class Normalizer {
public:
    virtual ~Normalizer() = default;
    virtual void normalize(NormalizedString& s) const = 0;
};

class PreTokenizer {
public:
    virtual ~PreTokenizer() = default;
    // Splits (and for ByteLevel, transforms) every split that has no tokens yet.
    virtual void preTokenize(std::vector<Split>& splits) const = 0;
};

class Model {
public:
    virtual ~Model() = default;
    // Tokens of one pre-tokenized piece; offsets are byte offsets in `piece`.
    virtual void tokenize(const std::string& piece, std::vector<Token>& out) const = 0;
    virtual std::optional<std::int64_t> tokenToId(const std::string& token) const = 0;
    virtual std::optional<std::string> idToToken(std::int64_t id) const = 0;
    virtual std::int64_t maxId() const = 0;  // highest id, -1 when empty
};

// A model whose ids are one token -> id table (BPE, WordPiece, Unigram).
class VocabularyModel : public Model {
public:
    std::optional<std::int64_t> tokenToId(const std::string& token) const final {
        const auto* id = vocab_.find(token);
        return id ? std::optional<std::int64_t>(*id) : std::nullopt;
    }
    std::optional<std::string> idToToken(std::int64_t id) const final {
        const auto* t = vocab_.token(id);
        return t ? std::optional<std::string>(*t) : std::nullopt;
    }
    std::int64_t maxId() const final { return vocab_.maxId(); }

protected:
    Vocabulary vocab_;
};

// An encoding while post-processing.
struct Encoded {
    std::vector<Token> tokens;
    std::vector<bool> special;
    std::string_view text;  // the original text the offsets point into
};

class PostProcessor {
public:
    virtual ~PostProcessor() = default;
    virtual void process(Encoded& e, bool addSpecialTokens) const = 0;
};

class Decoder {
public:
    virtual ~Decoder() = default;
    virtual std::vector<std::string> decodeChain(std::vector<std::string> tokens) const = 0;
};

std::unique_ptr<Normalizer> makeNormalizer(const nlohmann::json& j, const Origin& origin);
std::unique_ptr<PreTokenizer> makePreTokenizer(const nlohmann::json& j, const Origin& origin);
std::unique_ptr<Model> makeModel(const nlohmann::json& j, const Origin& origin);
std::unique_ptr<PostProcessor> makePostProcessor(const nlohmann::json& j, const Origin& origin);
std::unique_ptr<Decoder> makeDecoder(const nlohmann::json& j, const Origin& origin);

// Byte-level alphabet (GPT-2): each byte as a printable code point, and back.
char32_t byteToChar(unsigned char b);
int charToByte(char32_t c);  // -1 when c is not in the alphabet

// Reading component fields with errors that name the component.
struct Fields {
    const nlohmann::json& j;
    std::string where;  // "FILE: normalizer (Replace)"
    bool boolean(const char* key, bool fallback) const;
    std::string string(const char* key, std::optional<std::string> fallback = std::nullopt) const;
    std::int64_t integer(const char* key, std::optional<std::int64_t> fallback = std::nullopt) const;
    const nlohmann::json& object(const char* key) const;  // required, any JSON type
    bool has(const char* key) const;                      // present and not null
    [[noreturn]] void fail(const std::string& what) const;
};
// "type" of a component object; throws when missing.
std::string componentType(const nlohmann::json& j, const std::string& where);
// A {"String": s} or {"Regex": r} pattern.
Pattern readPattern(const nlohmann::json& j, const std::string& where);

}  // namespace attnscope::tok
