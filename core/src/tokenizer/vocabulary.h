// Vocabularies, in one place: the token <-> id table the tokenizer models (BPE, WordPiece,
// Unigram) and the axis labels share, and the readers of the vocabulary files.
//   tokenizer.json model.vocab {"token": id}  -> Vocabulary::fromJsonObject (Unigram: its list)
//   vocab.json {"token": id}                  -> readVocabJson, then fromJsonObject
//   vocab.txt, one token per line             -> readVocabTxt, then fromJsonObject
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnscope::tok {

// The one limit on the token ids a file announces (vocabularies, added tokens, post-processors'
// ids): tokenIdLimit(the file's size). An id sizes the id -> token table (8 bytes per id) and
// every table keyed by vocabSize(), so it is checked before anything is allocated for it.
class Vocabulary {
public:
    // Never above 2^24 (60 times the largest real vocabularies).
    static constexpr std::int64_t kMaxId = std::int64_t{1} << 24;
    // Ids up to 2^17 are always accepted (tables of 1 MiB at most), so that small hand-made files
    // may still use the ids of large vocabularies (Llama-3's specials at 128,000).
    static constexpr std::int64_t kAlwaysAllowedId = std::int64_t{1} << 17;

    // Ids in [0, idLimit] are accepted by add (default: kMaxId, for ids that are list indices).
    explicit Vocabulary(std::int64_t idLimit = kMaxId) : idLimit_(idLimit) {}
    // Moves keep the stored strings in place; a copy would leave the views pointing at the
    // original's, so there is none.
    Vocabulary(Vocabulary&&) = default;
    Vocabulary& operator=(Vocabulary&&) = default;
    Vocabulary(const Vocabulary&) = delete;
    Vocabulary& operator=(const Vocabulary&) = delete;

    // Adds a token with an id in [0, idLimit]; `where` labels errors (duplicate ids are allowed, the
    // last one wins for id->token).
    void add(const std::string& token, std::int64_t id, const std::string& where);
    // {"token": id, ...} with ids in [0, idLimit] (tokenIdLimit of the file it came from); throws
    // naming `where` on a malformed entry.
    static Vocabulary fromJsonObject(const nlohmann::json& j, const std::string& where, std::int64_t idLimit);

    const std::int64_t* find(std::string_view token) const {
        const auto it = ids_.find(token);
        return it == ids_.end() ? nullptr : &it->second;
    }
    const std::string* token(std::int64_t id) const {
        return id >= 0 && static_cast<std::size_t>(id) < byId_.size() && byId_[static_cast<std::size_t>(id)]
                       ? byId_[static_cast<std::size_t>(id)]
                       : nullptr;
    }
    std::int64_t maxId() const { return static_cast<std::int64_t>(byId_.size()) - 1; }
    std::size_t size() const { return ids_.size(); }

private:
    std::int64_t idLimit_ = kMaxId;
    std::deque<std::string> storage_;  // stable addresses for the views
    std::unordered_map<std::string_view, std::int64_t> ids_;
    std::vector<const std::string*> byId_;
};

// The largest token id a file of `fileBytes` bytes may announce: its size (every real token takes
// several bytes of the file, so a larger id leaves more holes in the table than the file has
// bytes), at least kAlwaysAllowedId and at most kMaxId.
std::int64_t tokenIdLimit(std::uintmax_t fileBytes);
// "id 999999, above the limit 456789 (the file's size in bytes)", "id -1, below 0": the one wording.
std::string tokenIdLimitError(std::int64_t id, std::int64_t limit);

// vocab.json as its JSON object {"token": id, ...}; the entries are checked by whoever builds
// from it (fromJsonObject, the built-in models' symbols). Throws attnscope::Error naming the
// file when it cannot be read, is not JSON or not an object.
nlohmann::json readVocabJson(const std::filesystem::path& file);
// A text file's lines (readTextLines) checked to be UTF-8, as tokens must be: throws
// attnscope::Error "FILE: line N is not valid UTF-8 (byte K of the line)".
std::vector<std::string> readUtf8Lines(const std::filesystem::path& file);
// vocab.txt (WordPiece) as {"token": id}: id = line number from 0, a trailing '\r' dropped. An
// empty line leaves its id without a token and a repeated token keeps its first id. Throws
// attnscope::Error naming the file when it cannot be read.
nlohmann::json readVocabTxt(const std::filesystem::path& file);

}  // namespace attnscope::tok
