// Tokenizer::fromFolder: tokenizer.json, else a SentencePiece model (sentencepiece_folder.cpp),
// or the legacy files older checkpoints ship, turned into the tokenizer.json pipeline Hugging
// Face's converters build from them:
//   vocab.json + merges.txt -> byte-level BPE: RoBERTa's <s> ... </s> when tokenizer_config.json's
//                              tokenizer_class says Roberta/Bart (or, without a class, when the
//                              vocabulary has <s> and </s>); otherwise GPT-2's, with "bos $A" when
//                              add_bos_token is set (OPT: "</s> $A") and the config's special tokens
//   vocab.txt               -> BERT WordPiece (do_lower_case from tokenizer_config.json)
// and, next to a tokenizer.json, what transformers' Llama/CodeLlama/Gemma/GPT-NeoX fast tokenizers
// do on loading: they rebuild the post-processor from tokenizer_config.json's add_bos_token
// (default true; false for GPT-NeoX) and add_eos_token (default false), whatever tokenizer.json
// says (Phi-3's file keeps "<s> $A" while its config turns the BOS off).
#include "gguf_tokenizer.h"
#include "attnscope/io/gguf.h"
#include "attnscope/tokenizer/tokenizer.h"

#include "components.h"
#include "folder_config.h"
#include "sentencepiece_folder.h"
#include "tokenizer_impl.h"

#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "vocabulary.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <fstream>

namespace attnscope {

namespace {

nlohmann::json addedToken(const std::string& content, std::int64_t id, bool lstrip = false) {
    return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", lstrip},
            {"rstrip", false}, {"normalized", false}, {"special", true}};
}

nlohmann::json readConfig(const std::filesystem::path& folder) { return tok::readFolderConfig(folder); }

// Weights and index files of a model folder (not tokenizer files), by name or content.
bool isModelFileName(const std::string& name) {
    auto ends = [&](const char* tail) {
        const std::string t = tail;
        return name.size() >= t.size() && name.compare(name.size() - t.size(), t.size(), t) == 0;
    };
    return ends(".safetensors") || ends(".bin") || ends(".pt") || ends(".pth") || ends(".gguf");
}
using tok::configBool;
using tok::configToken;

std::unique_ptr<Tokenizer> byteLevelBpe(const std::filesystem::path& folder) {
    const auto vocabFile = folder / "vocab.json", mergesFile = folder / "merges.txt";
    const nlohmann::json vocab = tok::readVocabJson(vocabFile);
    nlohmann::json merges = nlohmann::json::array();
    const std::vector<std::string> lines = tok::readUtf8Lines(mergesFile);
    for (std::size_t n = 1; n <= lines.size(); ++n) {
        const std::string& line = lines[n - 1];
        if (line.empty() || (n == 1 && line.rfind("#version", 0) == 0)) continue;
        if (line.find(' ') == std::string::npos || line.find(' ') != line.rfind(' '))
            throw Error(mergesFile.string() + ": line " + std::to_string(n) +
                        " is not two tokens separated by one space");
        merges.push_back(line);
    }
    const nlohmann::json config = readConfig(folder);
    const bool prefixSpace = configBool(config, folder, "add_prefix_space", false);
    auto byteLevel = [](bool prefix, bool trim) {
        return nlohmann::json{
                {"type", "ByteLevel"}, {"add_prefix_space", prefix}, {"trim_offsets", trim}, {"use_regex", true}};
    };
    nlohmann::json added = nlohmann::json::array();
    auto id = [&](const std::string& t) {
        return vocab.contains(t) && vocab[t].is_number_integer() ? vocab[t].get<std::int64_t>() : -1;
    };
    auto addOnce = [&](const std::string& t, bool lstrip = false) {
        if (t.empty() || id(t) < 0) return;
        for (const auto& a : added)
            if (a["content"] == t) return;
        added.push_back(addedToken(t, id(t), lstrip));
    };
    const std::string cls = config.value("tokenizer_class", std::string());
    const bool roberta =
            cls.empty() ? id("<s>") >= 0 && id("</s>") >= 0 : cls.rfind("Roberta", 0) == 0 || cls.rfind("Bart", 0) == 0;
    nlohmann::json post = byteLevel(true, false);
    if (roberta) {
        for (const char* t : {"<s>", "<pad>", "</s>", "<unk>"}) addOnce(t);
        addOnce("<mask>", true);
        post = {{"type", "RobertaProcessing"},
                {"sep", {"</s>", id("</s>")}},
                {"cls", {"<s>", id("<s>")}},
                {"trim_offsets", true},
                {"add_prefix_space", prefixSpace}};
    } else {
        // What the slow GPT2Tokenizer's special tokens become in the converted fast one.
        for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"})
            addOnce(configToken(config, folder, key));
        if (configBool(config, folder, "add_bos_token", false)) {
            const std::string bos = configToken(config, folder, "bos_token");
            if (id(bos) < 0)
                throw Error((folder / "tokenizer_config.json").string() + ": add_bos_token is set but bos_token '" +
                            bos + "' is not in vocab.json");
            nlohmann::json special = nlohmann::json::object();
            special[bos] = {
                    {"id", bos}, {"ids", nlohmann::json::array({id(bos)})}, {"tokens", nlohmann::json::array({bos})}};
            const nlohmann::json single = nlohmann::json::array(
                    {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}});
            post = {{"type", "TemplateProcessing"}, {"single", single}, {"special_tokens", special}};
        }
    }
    addOnce("<|endoftext|>");
    const nlohmann::json root = {
            {"added_tokens", added},
            {"normalizer", nullptr},
            {"pre_tokenizer", byteLevel(prefixSpace, true)},
            {"post_processor", post},
            {"decoder", byteLevel(true, true)},
            {"model",
             {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"fuse_unk", false}, {"byte_fallback", false}}},
    };
    return Tokenizer::fromJson(root.dump(), folder.string() + " (vocab.json + merges.txt)");
}

std::unique_ptr<Tokenizer> wordPiece(const std::filesystem::path& folder) {
    const auto vocabFile = folder / "vocab.txt";
    const nlohmann::json vocab = tok::readVocabTxt(vocabFile);
    if (vocab.empty()) throw Error(vocabFile.string() + ": the vocabulary is empty");
    const nlohmann::json config = readConfig(folder);
    const bool lower = configBool(config, folder, "do_lower_case", true);
    nlohmann::json stripAccents = nullptr;
    if (config.contains("strip_accents") && config["strip_accents"].is_boolean())
        stripAccents = config["strip_accents"];
    auto id = [&](const char* t) { return vocab.contains(t) ? vocab[t].get<std::int64_t>() : -1; };
    nlohmann::json added = nlohmann::json::array();
    for (const char* t : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
        if (id(t) >= 0) added.push_back(addedToken(t, id(t)));
    nlohmann::json post = nullptr;
    if (id("[CLS]") >= 0 && id("[SEP]") >= 0)
        post = {{"type", "BertProcessing"}, {"sep", {"[SEP]", id("[SEP]")}}, {"cls", {"[CLS]", id("[CLS]")}}};
    const nlohmann::json root = {
            {"added_tokens", added},
            {"normalizer",
             {{"type", "BertNormalizer"},
              {"clean_text", true},
              {"handle_chinese_chars", configBool(config, folder, "tokenize_chinese_chars", true)},
              {"strip_accents", stripAccents},
              {"lowercase", lower}}},
            {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
            {"post_processor", post},
            {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
            {"model",
             {{"type", "WordPiece"},
              {"unk_token", "[UNK]"},
              {"continuing_subword_prefix", "##"},
              {"max_input_chars_per_word", 100},
              {"vocab", vocab}}},
    };
    return Tokenizer::fromJson(root.dump(), folder.string() + " (vocab.txt)");
}

// The post-processor transformers' LlamaTokenizerFast.update_post_processor builds (Gemma's,
// CodeLlama's and GPTNeoX's are copies): "[bos] $A [eos]" as add_bos_token / add_eos_token say
// (GPT-NeoX defaults both to false); null when the config's tokenizer_class is none of those.
nlohmann::json configTemplate(const Tokenizer& tok, const std::filesystem::path& folder) {
    const nlohmann::json config = readConfig(folder);
    const std::string cls = config.value("tokenizer_class", std::string());
    const bool gemma = cls == "GemmaTokenizer" || cls == "GemmaTokenizerFast";
    const bool llama = cls == "LlamaTokenizer" || cls == "LlamaTokenizerFast" || cls == "CodeLlamaTokenizer" ||
                       cls == "CodeLlamaTokenizerFast";
    const bool neox = cls == "GPTNeoXTokenizer" || cls == "GPTNeoXTokenizerFast";  // no BOS unless asked
    if (!gemma && !llama && !neox) return nullptr;
    const char* bosDefault = gemma ? "<bos>" : llama ? "<s>" : "<|endoftext|>";
    const char* eosDefault = gemma ? "<eos>" : llama ? "</s>" : "<|endoftext|>";
    nlohmann::json single = nlohmann::json::array(), special = nlohmann::json::object();
    auto add = [&](const char* flag, const char* key, const char* fallback, bool byDefault) {
        if (!configBool(config, folder, flag, byDefault)) return;
        std::string token = config.contains(key) ? configToken(config, folder, key) : std::string(fallback);
        const auto id = tok.tokenToId(token);
        if (token.empty() || !id)
            throw Error((folder / "tokenizer_config.json").string() + ": " + flag + " is set but " + key + " '" +
                        token + "' is not in the tokenizer's vocabulary");
        single.push_back({{"SpecialToken", {{"id", token}, {"type_id", 0}}}});
        special[token] = {
                {"id", token}, {"ids", nlohmann::json::array({*id})}, {"tokens", nlohmann::json::array({token})}};
    };
    add("add_bos_token", "bos_token", bosDefault, !neox);
    single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
    add("add_eos_token", "eos_token", eosDefault, false);
    return {{"type", "TemplateProcessing"}, {"single", single}, {"special_tokens", special}};
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::fromFolder(const std::filesystem::path& folder) {
    std::error_code ec;
    if (looksLikeGguf(folder)) return tok::ggufTokenizer(folder);  // a GGUF file carries its tokenizer
    if (std::filesystem::exists(folder / "tokenizer.json", ec)) {
        auto tok = fromFile(folder / "tokenizer.json");
        const nlohmann::json post = configTemplate(*tok, folder);
        if (!post.is_null())
            tok->impl_->postProcessor =
                    tok::makePostProcessor(post, tok::Origin{(folder / "tokenizer_config.json").string()});
        return tok;
    }
    if (auto spm = tok::sentencePieceFromFolder(folder, TokenizerSide::Source))
        return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(spm)));
    if (std::filesystem::exists(folder / "vocab.json", ec) && std::filesystem::exists(folder / "merges.txt", ec))
        return byteLevelBpe(folder);
    if (std::filesystem::exists(folder / "vocab.txt", ec)) return wordPiece(folder);
    return nullptr;
}

std::unique_ptr<Tokenizer> Tokenizer::fromPath(const std::filesystem::path& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec)) throw Error(path.string() + ": no such file or folder");
    if (looksLikeGguf(path)) {
        if (auto tok = tok::ggufTokenizer(path)) return tok;
        throw Error(path.string() + ": this GGUF file has no tokenizer (no tokenizer.ggml.model)");
    }
    const fs::path folder = fs::is_directory(path, ec) ? path : path.parent_path().empty() ? "." : path.parent_path();
    if (!fs::is_directory(path, ec)) {
        // By content: tokenizer.json is a JSON object; a SentencePiece model is a binary
        // protobuf; the other files stand for their folder's tokenizer.
        std::ifstream in(path, std::ios::binary);
        char c = ' ';
        while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
        }
        const std::string name = path.filename().string();
        const bool json = in && c == '{';
        if (json && name != "vocab.json" && name != "config.json" && name != "tokenizer_config.json" &&
            name.find(".index.json") == std::string::npos)
            return fromFile(path);
        if (!json && !isModelFileName(name) && name != "merges.txt" && name != "vocab.txt")
            return std::unique_ptr<Tokenizer>(new Tokenizer(tok::sentencePieceFromFile(
                    folder, path, name == "target.spm" ? TokenizerSide::Target : TokenizerSide::Source)));
    }
    auto tok = fromFolder(folder);
    if (!tok)
        throw Error(folder.string() +
                    ": no tokenizer here (tokenizer.json, spiece.model, tokenizer.model, sentencepiece.bpe.model, "
                    "source.spm + vocab.json, vocab.json + merges.txt, or vocab.txt)");
    return tok;
}

std::unique_ptr<Tokenizer> Tokenizer::fromFolder(const std::filesystem::path& folder, TokenizerSide side) {
    // Only SentencePiece folders (Marian's target.spm, mBART's tgt_lang) have a target side.
    std::error_code ec;
    if (side == TokenizerSide::Target && !std::filesystem::exists(folder / "tokenizer.json", ec))
        if (auto spm = tok::sentencePieceFromFolder(folder, side))
            return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(spm)));
    return fromFolder(folder);
}

}  // namespace attnscope
