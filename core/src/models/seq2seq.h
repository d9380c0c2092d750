// The skeleton the Hugging Face encoder-decoder families share (t5.cpp, bart.cpp for bart and
// mbart, marian.cpp): source and target tokenizers and labels, forced targets and greedy
// decoding, the three blocks "encoder", "decoder", "cross", the encoder and decoder layer stacks
// (layer_stack.h), the head and the Trace's outputs. A family loads the stacks and implements
// embed() (and selfBias() for positions in the logits); everything a caller sees is here.
//
// Trace of an encoder-decoder run:
//   forced (TextInput::targetIds): decoder rows are the target ids exactly as given; outputIds
//     holds, per row, the model's argmax next token.
//   greedy (no target ids): rows are the decoder start token, then each generated token but the
//     last; outputIds are the generated tokens (the last row's argmax is the last of them, the
//     end token unless maxNewTokens or the decoder's positions stopped the decoding). So in both
//     modes outputIds has one entry per decoder row.
#pragma once

#include "family_common.h"
#include "layer_stack.h"
#include "io/weights.h"
#include "runtime/memory.h"

#include <optional>

namespace attnscope {

// The embedding [rows, E] the encoder and decoder share, under the first of its tied names
// (shared, encoder.embed_tokens, decoder.embed_tokens) the checkpoint keeps.
at::Tensor sharedEmbedding(WeightStore& weights, std::int64_t rows, std::int64_t hidden);

// What the skeleton needs to know of a family's model.
struct Seq2seqShape {
    std::int64_t sourceVocab = 0, targetVocab = 0;  // rows of the encoder's / decoder's embedding
    std::int64_t maxSource = 0, maxTarget = 0;      // positions; 0 = no limit (T5's relative positions)
    std::int64_t decoderStart = 0;                  // decoder_start_token_id
    std::optional<std::int64_t> eos;                // eos_token_id: greedy decoding stops after it
    bool shiftLastToFront = false;                  // mBART's shift_tokens_right (see encodeTarget)
};

class Seq2seqModel : public Model {
public:
    const ModelInfo& info() const override { return info_; }
    // Labels of source ids (the encoder's vocabulary).
    std::vector<std::string> tokenLabels(const std::vector<std::int64_t>& ids) const override;
    std::vector<std::int64_t> encodeText(const std::string& text) const override { return source_.encode(text, info_); }
    // The target tokenizer's ids with its special tokens (the labels Hugging Face trains on),
    // shifted right: [decoder_start] + labels[:-1], or for mBART [labels.back()] + labels[:-1]
    // (its labels end with the end token and the language code, which starts the decoder).
    std::vector<std::int64_t> encodeTarget(const std::string& text) const override;
    const Tokenizer* tokenizer() const override { return source_.tokenizer(); }

protected:
    Seq2seqModel(const std::filesystem::path& folder, c10::Device device, std::int64_t sourceVocab);
    // Called by the family's constructor once its weights are read: the shape, and ModelInfo's
    // common fields from the stacks (the family adds its notes).
    void finishLoad(const std::string& family, const std::filesystem::path& folder, const WeightStore& weights,
                    const Seq2seqShape& shape);

    // Ids [n] -> the decoder's (or encoder's) input [n, E] on the device: embeddings and positions.
    virtual at::Tensor embed(bool decoder, const std::vector<std::int64_t>& ids) const = 0;
    // The additive self-attention bias [H, n, n] (T5's relative positions), or undefined.
    virtual at::Tensor selfBias(bool /*decoder*/, std::int64_t /*n*/) const { return {}; }

    // A stack of layers and its final norm (undefined: none).
    struct Stack {
        StackSpec spec;
        std::vector<StackLayer> layers;
        Norm finalNorm;
    };
    Stack encoder_, decoder_;
    at::Tensor head_, logitsBias_;       // [targetVocab, E], [targetVocab] or undefined
    std::optional<double> outputScale_;  // decoder output × this before the head (T5's tied head)

    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override;
    std::shared_ptr<const Trace> runForwardText(const TextInput& input, const RunOptions& options) const override;

    c10::Device device_;
    ModelInfo info_;

private:
    std::shared_ptr<const Trace> run(const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& target,
                                     int maxNewTokens, const RunOptions& options) const;
    // Source ids [S] -> the encoder's output [S, E]; block "encoder".
    at::Tensor encode(const std::vector<std::int64_t>& ids, const RunOptions& options, BlockCapture& capture) const;
    // Decoder input ids [T] against memory [S, E] -> logits [T, targetVocab] in float32 (only the
    // last row when lastOnly: [1, targetVocab]); blocks "decoder" and "cross".
    // With a cache (cached greedy decoding), only rows start.. run, against the cached keys.
    at::Tensor decode(const std::vector<std::int64_t>& ids, const at::Tensor& memory, const RunOptions& options,
                      BlockCapture& self, BlockCapture& cross, bool lastOnly, std::vector<KvLayer>* cache = nullptr,
                      std::int64_t start = 0) const;
    // Greedy decoding from the decoder start token with the self-attention keys and values
    // cached: outputs the generated tokens, rows the decoder's rows (all but the last output),
    // self / cross the captures of every row (those of one pass over rows).
    void decodeGreedy(const at::Tensor& memory, int maxNewTokens, const RunOptions& options,
                      std::vector<std::int64_t>& rows, std::vector<std::int64_t>& outputs, BlockCapture& self,
                      BlockCapture& cross) const;
    // Rough working set of a pass (see requireForwardMemory).
    ForwardFootprint footprint(std::int64_t queries, std::int64_t keys) const;
    // Readable labels of target ids.
    std::vector<std::string> targetDisplay(const std::vector<std::int64_t>& ids) const;

    FamilyText source_;
    std::unique_ptr<Tokenizer> targetTokenizer_;  // before targetVocab_, which points into it
    VocabLabels targetVocab_;
    Seq2seqShape shape_;
};

}  // namespace attnscope
