// A SentencePiece model file (.model / .spm) read and run by Debian's libsentencepiece, as a
// tokenizer model of the pipeline: the library normalizes and segments each piece of text the
// added tokens leave, so ids equal SentencePiece's own. Only the id numbering is ours, because
// Hugging Face's slow tokenizers renumber some vocabularies (SpmIds). The library is reached
// through libattnscope_sentencepiece.so in a namespace of its own (sentencepiece_shim.h says why).
#pragma once

#include "components.h"

#include <filesystem>
#include <functional>
#include <memory>

#include <unordered_map>

namespace attnscope::tok {

// One loaded model file; immutable after loading, shared by the model and the decoder.
class SentencePieceFile {
public:
    // Throws attnscope::Error "FILE: not a SentencePiece model (...)" when the library refuses it.
    // dummyPrefix false turns the model's add_dummy_prefix off, as transformers' non-legacy
    // Llama tokenizer does.
    explicit SentencePieceFile(const std::filesystem::path& file, bool dummyPrefix = true);
    ~SentencePieceFile();
    SentencePieceFile(const SentencePieceFile&) = delete;
    SentencePieceFile& operator=(const SentencePieceFile&) = delete;

    struct Piece {
        int id;
        std::uint32_t begin, end;  // byte offsets into the encoded text
    };
    // SentencePiece's encoding of `text` (its ids, not the folder's). Throws attnscope::Error.
    std::vector<Piece> encode(const std::string& text) const;
    // The library's text for SentencePiece ids (spaces restored, byte pieces joined).
    std::string decode(const std::vector<int>& ids) const;

    int size() const;                        // number of pieces
    const std::string& piece(int id) const;  // id in [0, size())
    std::optional<int> find(const std::string& piece) const;
    bool isControl(int id) const;  // <s>, </s> and other pieces encode never emits
    bool isUnused(int id) const;
    int unkId() const;
    const std::string& file() const { return file_; }

private:
    std::string file_;
    void* model_ = nullptr;  // owned, in the library's namespace
    std::vector<std::string> pieces_;
    std::vector<int> flags_;
    std::unordered_map<std::string, int> ids_;
    int unkId_ = -1;
};

// How a folder numbers the model's pieces: the outer id of SentencePiece id `id` (its piece
// text given), or nullopt when the piece has none (Marian's vocab.json may omit control pieces).
using SpmIds = std::function<std::optional<std::int64_t>(int id, const std::string& piece)>;

// The model stage over a SentencePiece file; tokens are the vocabulary's pieces (an unknown
// character reads as the unknown piece, as in tokenizer.json's Unigram), offsets are the
// library's byte spans.
// unkPrefix (non-legacy Llama): a piece starting with a space or "▁" is encoded behind this
// text, whose own pieces are then dropped, so the model keeps the leading "▁" a model without
// its dummy prefix would strip.
// digitComma (ALBERT, XLNet): a piece of two or more characters ending in a digit and ",", such
// as "▁1990,", is encoded again without the "," and without "▁" and the "," put after it; a
// piece that did not start with "▁" loses the "▁" the new encoding starts with (a lone "▁" is
// dropped), and a piece the vocabulary lacks then reads as the unknown piece.
std::unique_ptr<Model> makeSentencePieceModel(std::shared_ptr<const SentencePieceFile> file, const SpmIds& ids,
                                              const std::string& unkPrefix = {}, bool digitComma = false);
// The decoder: runs of the model's pieces through the library's decoder (spaces restored, byte
// pieces joined), other tokens (added and control ones) written as they are.
std::unique_ptr<Decoder> makeSentencePieceDecoder(std::shared_ptr<const SentencePieceFile> file);

}  // namespace attnscope::tok
