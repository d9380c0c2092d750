// Unigram model: the Viterbi path of highest total log-probability over the vocabulary's pieces;
// characters no piece covers become the unknown piece (runs of them fused into one), or their
// <0xNN> byte pieces with byte_fallback.
#include "models.h"
#include "io/json_util.h"
#include "vocabulary.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

namespace attnscope::tok {

namespace {

class Unigram final : public VocabularyModel {
public:
    Unigram(const nlohmann::json& j, const Origin& origin) {
        const Fields f{j, origin.at("model (Unigram)")};
        where_ = f.where;
        const auto& vocab = f.object("vocab");
        if (!vocab.is_array()) f.fail("'vocab' must be a list of [piece, score]");
        scores_.reserve(vocab.size());
        minScore_ = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < vocab.size(); ++i) {
            const auto& e = vocab[i];
            if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
                f.fail("vocab entry " + std::to_string(i) + " must be [piece, score], not " + jsonExcerpt(e));
            const std::string piece = e[0].get<std::string>();
            vocab_.add(piece, static_cast<std::int64_t>(i), f.where);
            scores_.push_back(e[1].get<double>());
            minScore_ = std::min(minScore_, scores_.back());
            maxPieceBytes_ = std::max(maxPieceBytes_, piece.size());
        }
        if (f.has("unk_id")) {
            unkId_ = f.integer("unk_id");
            if (*unkId_ < 0 || static_cast<std::size_t>(*unkId_) >= scores_.size())
                f.fail("unk_id " + std::to_string(*unkId_) + " is outside the vocabulary");
        }
        byteFallback_ = f.boolean("byte_fallback", false);
    }

    void tokenize(const std::string& piece, std::vector<Token>& out) const override {
        if (piece.empty()) return;
        struct Node {
            double score = 0;
            std::int64_t start = -1;
            std::int64_t id = 0;
        };
        const std::size_t size = piece.size();
        const double unkScore = minScore_ - 10.0;
        std::vector<Node> best(size + 1);
        std::string_view text(piece);
        for (std::size_t start = 0, n = 0; start < size; start += n) {
            decodeUtf8(piece, start, &n);
            const double here = best[start].score;
            bool single = false;
            const std::size_t limit = std::min(maxPieceBytes_, size - start);
            for (std::size_t len = 1; len <= limit; ++len) {
                const auto* id = vocab_.find(text.substr(start, len));
                if (!id) continue;
                Node& target = best[start + len];
                const double candidate = scores_[static_cast<std::size_t>(*id)] + here;
                if (target.start < 0 || candidate > target.score)
                    target = {candidate, static_cast<std::int64_t>(start), *id};
                if (len == n) single = true;
            }
            if (!single) {
                if (!unkId_)
                    throw Error(where_ + ": the text has a character no piece covers and the model has no unk_id");
                Node& target = best[start + n];
                const double candidate = unkScore + here;
                if (target.start < 0 || candidate > target.score)
                    target = {candidate, static_cast<std::int64_t>(start), *unkId_};
            }
        }
        // Walk back, fusing consecutive unknown pieces.
        std::vector<std::pair<std::size_t, std::size_t>> pieces;
        std::size_t end = size, unkEnd = 0;
        bool inUnk = false;
        while (end > 0) {
            const Node& node = best[end];
            const auto start = static_cast<std::size_t>(node.start);
            if (unkId_ && node.id == *unkId_) {
                if (!inUnk) unkEnd = end;
                inUnk = true;
            } else {
                if (inUnk) pieces.emplace_back(end, unkEnd);
                inUnk = false;
                pieces.emplace_back(start, end);
            }
            end = start;
        }
        if (inUnk) pieces.emplace_back(0, unkEnd);
        std::reverse(pieces.begin(), pieces.end());
        for (const auto& [b, e] : pieces) {
            const std::string s = piece.substr(b, e - b);
            if (const auto* id = vocab_.find(s)) {
                out.push_back({*id, s, b, e});
                continue;
            }
            if (byteFallback_) {
                std::vector<Token> bytes;
                for (unsigned char c : s) {
                    char name[8];
                    std::snprintf(name, sizeof name, "<0x%02X>", c);
                    const auto* id = vocab_.find(name);
                    if (!id) break;
                    bytes.push_back({*id, name, b, e});
                }
                if (bytes.size() == s.size()) {
                    out.insert(out.end(), bytes.begin(), bytes.end());
                    continue;
                }
            }
            out.push_back({*unkId_, s, b, e});
        }
    }

private:
    std::string where_;
    std::vector<double> scores_;
    double minScore_ = 0;
    std::size_t maxPieceBytes_ = 0;
    std::optional<std::int64_t> unkId_;
    bool byteFallback_ = false;
};

}  // namespace

std::unique_ptr<Model> makeUnigram(const nlohmann::json& j, const Origin& origin) {
    return std::make_unique<Unigram>(j, origin);
}

std::unique_ptr<Model> makeModel(const nlohmann::json& j, const Origin& origin) {
    const std::string type =
            j.is_object() && !j.contains("type") && j.contains("merges") ? "BPE" : componentType(j, origin.at("model"));
    if (type == "BPE") return makeBpe(j, origin);
    if (type == "WordPiece") return makeWordPiece(j, origin);
    if (type == "Unigram") return makeUnigram(j, origin);
    throw Error(origin.at("model") + ": type '" + type + "' is not supported (BPE, WordPiece, Unigram)");
}

}  // namespace attnscope::tok
