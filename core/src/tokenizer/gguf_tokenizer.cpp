// A GGUF file's tokenizer (tokenizer.ggml.*), written as the tokenizer.json Hugging Face ships
// for the same model and read by the one tokenizer.json pipeline (Tokenizer::fromJson), so the
// ids are Hugging Face's:
//   model "gpt2":  byte-level BPE from tokens + merges; the pre-tokenizer from tokenizer.ggml.pre
//                  (gpt-2's regex, Llama-3's split with ignore_merges, Qwen2's split after NFC);
//   model "llama": SentencePiece-style BPE with byte fallback; the merges are derived from the
//                  token scores as transformers' SentencePieceExtractor derives them (each token's
//                  splits into two tokens, ranked by the token's score), the "▁" space marks
//                  and the dummy prefix (tokenizer.ggml.add_space_prefix, default true) as
//                  LlamaConverter writes them.
// Control tokens (token type 3) and unknown ones (2) are special added tokens; user-defined ones
// (4) are plain added tokens, matched on the raw text (normalized false, as transformers adds
// them). BOS / EOS are added exactly when add_bos_token / add_eos_token are true.
#include "gguf_tokenizer.h"

#include "attnscope/io/gguf.h"
#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

namespace attnscope::tok {

namespace {

using json = nlohmann::json;

constexpr const char* kLlama3Split =
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
        "\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2Split =
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
        "\\s+(?!\\S)|\\s+";

json splitThenBytes(const char* regex) {
    return {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
}

// Token types (llama.cpp's llama_token_type).
enum TokenType { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

// Transformers' SentencePieceExtractor: for every token (in id order), its splits into two
// tokens ordered by the ids of the left and right parts; then all of them ordered by the
// token's score, highest first (a stable sort, so equal scores keep id order).
json mergesFromScores(const std::vector<std::string>& tokens, const std::vector<double>& scores) {
    std::unordered_map<std::string, std::size_t> ids;
    for (std::size_t i = 0; i < tokens.size(); ++i) ids.emplace(tokens[i], i);
    struct Merge {
        std::size_t left, right;
        double score;
    };
    std::vector<Merge> merges;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string& t = tokens[i];
        const std::size_t first = merges.size();
        for (std::size_t cut = 1; cut < t.size(); ++cut) {
            if ((static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) continue;  // inside a character
            auto l = ids.find(t.substr(0, cut));
            if (l == ids.end()) continue;
            auto r = ids.find(t.substr(cut));
            if (r == ids.end()) continue;
            merges.push_back({l->second, r->second, scores[i]});
        }
        std::sort(merges.begin() + static_cast<std::ptrdiff_t>(first), merges.end(),
                  [](const Merge& a, const Merge& b) { return std::tie(a.left, a.right) < std::tie(b.left, b.right); });
    }
    std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) { return a.score > b.score; });
    json out = json::array();
    for (const Merge& m : merges) out.push_back(json::array({tokens[m.left], tokens[m.right]}));
    return out;
}

json templateOf(const GgufFile& f, const std::vector<std::string>& tokens) {
    json single = json::array(), special = json::object();
    const auto add = [&](const char* flag, const char* idKey) {
        if (!f.boolean(flag).value_or(false)) return;
        const auto id = f.integer(idKey);
        if (!id || *id < 0 || *id >= static_cast<std::int64_t>(tokens.size()))
            f.fail(std::string(flag) + " is true but " + idKey + " is missing or outside the vocabulary");
        const std::string& token = tokens[static_cast<std::size_t>(*id)];
        single.push_back({{"SpecialToken", {{"id", token}, {"type_id", 0}}}});
        special[token] = {{"id", token}, {"ids", json::array({*id})}, {"tokens", json::array({token})}};
    };
    add("tokenizer.ggml.add_bos_token", "tokenizer.ggml.bos_token_id");
    single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
    add("tokenizer.ggml.add_eos_token", "tokenizer.ggml.eos_token_id");
    return {{"type", "TemplateProcessing"}, {"single", single}, {"special_tokens", special}};
}

}  // namespace

std::string ggufTokenizerJson(const GgufFile& f) {
    const std::string model = f.requireString("tokenizer.ggml.model");
    const std::vector<std::string>* tokens = f.strings("tokenizer.ggml.tokens");
    if (!tokens || tokens->empty()) f.fail("metadata 'tokenizer.ggml.tokens' is missing or empty");
    const std::vector<double>* types = f.numbers("tokenizer.ggml.token_type");
    if (types && types->size() != tokens->size())
        f.fail("tokenizer.ggml.token_type has " + std::to_string(types->size()) + " entries for " +
               std::to_string(tokens->size()) + " tokens");
    // llama.cpp's token types are 0 (undefined) .. 6 (byte); anything else is a broken file, and
    // converting it to int unchecked would be undefined.
    const auto typeOf = [&](std::size_t i) {
        if (!types) return static_cast<int>(Normal);
        const double v = (*types)[i];
        if (!(v >= 0 && v <= 6) || v != std::floor(v)) {
            std::ostringstream shown;
            shown << v;
            f.fail("tokenizer.ggml.token_type[" + std::to_string(i) + "] is " + shown.str() +
                   " (token types are whole numbers 0..6)");
        }
        return static_cast<int>(v);
    };

    json vocab = json::object(), added = json::array();
    std::string unk;
    for (std::size_t i = 0; i < tokens->size(); ++i) {
        const std::string& t = (*tokens)[i];
        if (!vocab.contains(t)) vocab[t] = i;  // a repeated token keeps its first id, as a JSON vocab would
        const int type = typeOf(i);
        if (type == Unknown && unk.empty()) unk = t;
        if (type == Control || type == Unknown || type == UserDefined)
            added.push_back({{"id", i},
                             {"content", t},
                             {"single_word", false},
                             {"lstrip", false},
                             {"rstrip", false},
                             {"normalized", false},
                             {"special", type != UserDefined}});
    }
    json j = {{"version", "1.0"}, {"added_tokens", added}, {"post_processor", templateOf(f, *tokens)}};
    json bpe = {{"type", "BPE"},
                {"dropout", nullptr},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"vocab", vocab}};
    if (model == "gpt2") {
        const std::vector<std::string>* merges = f.strings("tokenizer.ggml.merges");
        if (!merges) f.fail("metadata 'tokenizer.ggml.merges' is missing (a gpt2 tokenizer needs its merges)");
        bpe["merges"] = *merges;
        bpe["unk_token"] = nullptr;
        bpe["fuse_unk"] = false;
        bpe["byte_fallback"] = false;
        const std::string pre = f.string("tokenizer.ggml.pre").value_or("default");
        if (pre == "default" || pre == "gpt-2" || pre == "gpt2") {
            j["pre_tokenizer"] = {
                    {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
        } else if (pre == "llama-bpe" || pre == "llama3") {
            j["pre_tokenizer"] = splitThenBytes(kLlama3Split);
            bpe["ignore_merges"] = true;
        } else if (pre == "qwen2") {
            j["normalizer"] = {{"type", "NFC"}};
            j["pre_tokenizer"] = splitThenBytes(kQwen2Split);
        } else {
            f.fail("tokenizer.ggml.pre '" + pre + "' is not supported (gpt-2, llama-bpe, qwen2)");
        }
        j["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
    } else if (model == "llama") {
        const std::vector<double>* scores = f.numbers("tokenizer.ggml.scores");
        if (!scores || scores->size() != tokens->size())
            f.fail("metadata 'tokenizer.ggml.scores' must give a score for each of the " +
                   std::to_string(tokens->size()) + " tokens");
        bpe["merges"] = mergesFromScores(*tokens, *scores);
        bpe["unk_token"] = unk.empty() ? json(nullptr) : json(unk);
        bpe["fuse_unk"] = true;
        bpe["byte_fallback"] = true;
        const bool prefix = f.boolean("tokenizer.ggml.add_space_prefix").value_or(true);
        json norms = json::array();
        if (prefix) norms.push_back({{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}});
        norms.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}});
        j["normalizer"] = {{"type", "Sequence"}, {"normalizers", norms}};
        json decoders = {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
                         {{"type", "ByteFallback"}},
                         {{"type", "Fuse"}}};
        if (prefix) decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
        j["decoder"] = {{"type", "Sequence"}, {"decoders", decoders}};
    } else {
        f.fail("tokenizer.ggml.model '" + model + "' is not supported (gpt2, llama)");
    }
    j["model"] = bpe;
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::unique_ptr<Tokenizer> ggufTokenizer(const std::filesystem::path& file) {
    const auto f = GgufFile::open(file);
    if (!f->value("tokenizer.ggml.model")) return nullptr;  // a file without a tokenizer: ids only
    return Tokenizer::fromJson(ggufTokenizerJson(*f), file.string() + " (tokenizer.ggml.*)");
}

}  // namespace attnscope::tok
