// BPE model (tokenizer.json "model": {"type": "BPE"}): merges in the "a b" or ["a", "b"] form,
// byte_fallback, fuse_unk, ignore_merges, continuing_subword_prefix, end_of_word_suffix.
// Words are cached: English prose repeats most of its words.
#include "components.h"
#include "io/json_util.h"
#include "models.h"
#include "vocabulary.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <mutex>
#include <queue>

namespace attnscope::tok {

namespace {

class Bpe final : public VocabularyModel {
public:
    Bpe(const nlohmann::json& j, const Origin& origin) {
        const Fields f{j, origin.at("model (BPE)")};
        where_ = f.where;
        vocab_ = Vocabulary::fromJsonObject(f.object("vocab"), f.where, origin.maxId);
        if (f.has("unk_token")) unk_ = f.string("unk_token");
        prefix_ = f.string("continuing_subword_prefix", std::string());
        suffix_ = f.string("end_of_word_suffix", std::string());
        fuseUnk_ = f.boolean("fuse_unk", false);
        byteFallback_ = f.boolean("byte_fallback", false);
        ignoreMerges_ = f.boolean("ignore_merges", false);
        if (f.has("dropout") && f.j.at("dropout").is_number() && f.j.at("dropout").get<double>() > 0.0)
            f.fail("dropout is not supported (tokenization would be random)");
        const auto& merges = f.has("merges") ? f.object("merges") : nlohmann::json::array();
        if (!merges.is_array()) f.fail("'merges' must be a list");
        merges_.reserve(merges.size());
        for (std::size_t rank = 0; rank < merges.size(); ++rank) {
            const auto& m = merges[rank];
            std::string a, b;
            if (m.is_string()) {
                const std::string s = m.get<std::string>();
                const auto space = s.find(' ', 1);
                if (space == std::string::npos)
                    f.fail("merge " + std::to_string(rank) + " '" + s + "' is not two tokens separated by a space");
                a = s.substr(0, space);
                b = s.substr(space + 1);
            } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
                a = m[0].get<std::string>();
                b = m[1].get<std::string>();
            } else {
                f.fail("merge " + std::to_string(rank) + " must be \"a b\" or [\"a\", \"b\"], not " + jsonExcerpt(m));
            }
            const std::string merged = a + (b.size() >= prefix_.size() ? b.substr(prefix_.size()) : std::string());
            auto id = [&](const std::string& t) {
                const auto* found = vocab_.find(t);
                if (!found)
                    f.fail("merge " + std::to_string(rank) + " '" + a + " " + b + "' needs '" + t +
                           "', which is not in the vocabulary");
                return *found;
            };
            const std::int64_t ia = id(a), ib = id(b), inew = id(merged);
            merges_.emplace(key(ia, ib), MergeInfo{static_cast<std::uint32_t>(rank), inew});
        }
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            const auto* found = vocab_.find(name);
            byteIds_[b] = found ? *found : -1;
        }
    }

    void tokenize(const std::string& piece, std::vector<Token>& out) const override {
        if (piece.empty()) return;
        if (ignoreMerges_) {
            if (const auto* id = vocab_.find(piece)) {
                out.push_back({*id, piece, 0, piece.size()});
                return;
            }
        }
        {
            std::lock_guard<std::mutex> lock(cacheMutex_);
            const auto it = cache_.find(piece);
            if (it != cache_.end()) {
                appendTokens(it->second, out);
                return;
            }
        }
        std::vector<Symbol> word = split(piece);
        mergeAll(word);
        std::vector<std::pair<std::int64_t, std::uint32_t>> result;  // (id, byte length)
        for (const auto& s : word)
            if (s.len > 0) result.emplace_back(s.id, s.len);
        appendTokens(result, out);
        std::lock_guard<std::mutex> lock(cacheMutex_);
        if (cache_.size() < kCacheCapacity) cache_.emplace(piece, std::move(result));
    }

private:
    struct MergeInfo {
        std::uint32_t rank;
        std::int64_t id;
    };
    struct Symbol {
        std::int64_t id;
        std::int32_t prev, next;
        std::uint32_t len;  // bytes of the piece this symbol covers (0 once merged away)
    };
    static constexpr std::size_t kCacheCapacity = 100000;

    static std::uint64_t key(std::int64_t a, std::int64_t b) {
        return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint64_t>(b);
    }

    void appendTokens(const std::vector<std::pair<std::int64_t, std::uint32_t>>& ids, std::vector<Token>& out) const {
        std::size_t at = 0;
        for (const auto& [id, len] : ids) {
            const auto* t = vocab_.token(id);
            out.push_back({id, t ? *t : std::string(), at, at + len});
            at += len;
        }
    }

    std::vector<Symbol> split(const std::string& w) const {
        std::vector<Symbol> word;
        word.reserve(w.size());
        auto add = [&](std::int64_t id, std::uint32_t len) {
            const auto n = static_cast<std::int32_t>(word.size());
            word.push_back({id, n - 1, -1, len});
            if (n > 0) word[static_cast<std::size_t>(n - 1)].next = n;
        };
        // A pending unknown token (id, bytes), fused with the next ones when fuse_unk is set.
        bool pending = false;
        std::int64_t pendingId = 0;
        std::uint32_t pendingLen = 0;
        std::string s;
        for (std::size_t i = 0, n = 0; i < w.size(); i += n) {
            decodeUtf8(w, i, &n);
            const bool first = i == 0, last = i + n == w.size();
            s.clear();
            if (!first) s += prefix_;
            s.append(w, i, n);
            if (last) s += suffix_;
            if (const auto* id = vocab_.find(s)) {
                if (pending) add(pendingId, pendingLen);
                pending = false;
                add(*id, static_cast<std::uint32_t>(n));
                continue;
            }
            if (byteFallback_) {
                bool all = true;
                for (unsigned char b : s) all = all && byteIds_[b] >= 0;
                if (all) {
                    for (unsigned char b : s) add(byteIds_[b], 1);
                    continue;
                }
            }
            if (!unk_) continue;
            const auto* unkId = vocab_.find(*unk_);
            if (!unkId) throw Error(where_ + ": unk_token '" + *unk_ + "' is not in the vocabulary");
            if (pending && fuseUnk_) {
                pendingLen += static_cast<std::uint32_t>(n);
            } else {
                if (pending) add(pendingId, pendingLen);
                pending = true;
                pendingId = *unkId;
                pendingLen = static_cast<std::uint32_t>(n);
            }
        }
        if (pending) add(pendingId, pendingLen);
        return word;
    }

    void mergeAll(std::vector<Symbol>& word) const {
        struct Candidate {
            std::uint32_t rank;
            std::int32_t pos;
            std::int64_t id;
            bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
        };
        std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
        auto consider = [&](std::int32_t pos) {
            const std::int32_t next = word[static_cast<std::size_t>(pos)].next;
            if (next < 0) return;
            const auto it =
                    merges_.find(key(word[static_cast<std::size_t>(pos)].id, word[static_cast<std::size_t>(next)].id));
            if (it != merges_.end()) queue.push({it->second.rank, pos, it->second.id});
        };
        for (std::int32_t i = 0; i + 1 < static_cast<std::int32_t>(word.size()); ++i) consider(i);
        while (!queue.empty()) {
            const Candidate top = queue.top();
            queue.pop();
            Symbol& left = word[static_cast<std::size_t>(top.pos)];
            if (left.len == 0 || left.next < 0) continue;
            Symbol& right = word[static_cast<std::size_t>(left.next)];
            const auto it = merges_.find(key(left.id, right.id));
            if (it == merges_.end() || it->second.id != top.id) continue;
            left.id = top.id;
            left.len += right.len;
            right.len = 0;
            left.next = right.next;
            if (left.next >= 0) word[static_cast<std::size_t>(left.next)].prev = top.pos;
            if (left.prev >= 0) consider(left.prev);
            consider(top.pos);
        }
    }

    std::string where_;
    std::unordered_map<std::uint64_t, MergeInfo> merges_;
    std::optional<std::string> unk_;
    std::string prefix_, suffix_;
    bool fuseUnk_ = false, byteFallback_ = false, ignoreMerges_ = false;
    std::int64_t byteIds_[256];
    mutable std::mutex cacheMutex_;
    mutable std::unordered_map<std::string, std::vector<std::pair<std::int64_t, std::uint32_t>>> cache_;
};

}  // namespace

std::unique_ptr<Model> makeBpe(const nlohmann::json& j, const Origin& origin) {
    return std::make_unique<Bpe>(j, origin);
}

}  // namespace attnscope::tok
