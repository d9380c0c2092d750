// Tokenizer: text -> token ids exactly as Hugging Face's `tokenizers` library computes them from
// a tokenizer.json (added tokens, normalizer, pre-tokenizer, BPE / WordPiece / Unigram model,
// post-processor, decoder), or from a legacy folder (vocab.json + merges.txt, or vocab.txt).
//
// Offsets are byte offsets [begin, end) into the UTF-8 text given to encode(); tokens the
// post-processor adds ([CLS], <s>, ...) have (0, 0). A Tokenizer is immutable after loading and
// encode() may be called from several threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnscope {

// Which side of a translation model's vocabulary a tokenizer reads: Marian ships source.spm and
// target.spm; every other folder has one tokenizer for both sides.
enum class TokenizerSide { Source, Target };

struct Encoding {
    std::vector<std::int64_t> ids;
    std::vector<std::string> tokens;                           // raw vocabulary strings
    std::vector<std::pair<std::size_t, std::size_t>> offsets;  // byte [begin, end) in the text
    std::vector<bool> special;                                 // added by the post-processor
};

// How a vocabulary writes its tokens, which decides how a raw token reads (see displayToken).
enum class TokenStyle {
    Plain,      // tokens are text as is
    ByteLevel,  // GPT-2: bytes as printable characters, "Ġ" = space, "Ċ" = newline
    WordPiece,  // BERT: "##" marks a piece that continues the previous one
    Metaspace,  // SentencePiece: "▁" = space, "<0xNN>" = a raw byte
};

class Tokenizer {
public:
    // A tokenizer.json file. Throws attnscope::Error naming the file and the component (bad
    // JSON, unknown component types, merges naming unknown tokens, a regex that does not compile).
    static std::unique_ptr<Tokenizer> fromFile(const std::filesystem::path& file);
    // tokenizer.json content; `origin` names it in error messages.
    static std::unique_ptr<Tokenizer> fromJson(const std::string& json, const std::string& origin);
    // A model folder: tokenizer.json (it wins, as in Hugging Face's fast tokenizers), else a
    // SentencePiece model (Marian's source.spm with vocab.json, spiece.model, tokenizer.model,
    // sentencepiece.bpe.model; read by libsentencepiece, with the ids and special tokens of the
    // family's Hugging Face slow tokenizer: T5, Llama, Gemma, XLM-R, mBART, Marian), else
    // vocab.json + merges.txt (byte-level BPE, GPT-2 or RoBERTa), else vocab.txt (WordPiece;
    // lower-casing from tokenizer_config.json's do_lower_case, default true). nullptr when the
    // folder has none of them. With a Llama, CodeLlama, Gemma or GPT-NeoX tokenizer_class in
    // tokenizer_config.json, the post-processor is rebuilt from its add_bos_token /
    // add_eos_token as transformers does on loading. origin() then names the file used.
    static std::unique_ptr<Tokenizer> fromFolder(const std::filesystem::path& folder);
    // The tokenizer of one side: Target differs from Source only for SentencePiece folders with a
    // target side (Marian's target.spm; mBART's tgt_lang code); otherwise fromFolder(folder).
    static std::unique_ptr<Tokenizer> fromFolder(const std::filesystem::path& folder, TokenizerSide side);
    // A path as a user gives it, recognised by what it is: a folder (fromFolder); a JSON file
    // (fromFile, as a tokenizer.json); a SentencePiece model file (spiece.model, tokenizer.model,
    // source.spm, ...: that file with its folder's tokenizer_config.json, as fromFolder reads it);
    // another file of a model folder (vocab.json, merges.txt, vocab.txt, config.json, weights):
    // fromFolder of its folder. Throws attnscope::Error naming the path when there is no tokenizer.
    static std::unique_ptr<Tokenizer> fromPath(const std::filesystem::path& path);

    ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

    // Throws attnscope::Error when the text is not valid UTF-8.
    Encoding encode(const std::string& text, bool addSpecialTokens = true) const;
    // The decoder's text for ids (ids the vocabulary lacks are skipped).
    std::string decode(const std::vector<std::int64_t>& ids, bool skipSpecialTokens = false) const;

    std::optional<std::int64_t> tokenToId(const std::string& token) const;
    std::optional<std::string> idToToken(std::int64_t id) const;
    std::int64_t vocabSize() const;  // highest id + 1, added tokens included

    TokenStyle style() const;
    // The readable form of a token: byte-level marks decoded, "▁" as a space, "##" dropped,
    // printable <0xNN> bytes as their character; spaces shown as "·", newlines as "↵", tabs as
    // "⇥". Special tokens are returned raw; other added tokens show their whitespace the same way.
    // Throws for an unknown id.
    std::string displayToken(std::int64_t id) const;
    std::vector<std::string> displayTokens(const std::vector<std::int64_t>& ids) const;

    const std::string& origin() const;  // the file or folder it was read from

    struct Impl;

private:
    explicit Tokenizer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// The readable form of a raw token in a vocabulary of the given style (see displayToken).
std::string readableToken(const std::string& raw, TokenStyle style, const std::string& continuingPrefix = "##");

}  // namespace attnscope
