// Random T5, BART, mBART and Marian checkpoints for tests (the real Hugging Face tensor names and
// shapes, deterministic weights; write them with writeCheckpoint) and their independent
// double-precision references (reference_seq2seq.cpp: plain loops from modeling_t5.py,
// modeling_bart.py, modeling_mbart.py and modeling_marian.py).
#pragma once

#include "family_fixtures.h"

#include <string>
#include <vector>

namespace attnscope::testing {

// Where tied embeddings are stored: "shared" (shared.weight only), "encoder"
// (encoder.embed_tokens.weight only) or "all" (shared, encoder and decoder copies, as
// save_pretrained without tied-weight dedup writes them).
struct T5Spec {
    int vocab = 40, dModel = 24, dKv = 10, dFf = 36, layers = 2, decoderLayers = 3, heads = 3;
    int buckets = 8, maxDistance = 12;
    bool gated = false;  // "gated-gelu" (T5 1.1, Flan-T5) instead of "relu"
    bool tied = true;    // false: lm_head.weight, no output rescaling (T5 1.1)
    std::string embeddings = "shared";
    bool writeDecoderLayers = true;  // num_decoder_layers in config.json (else = num_layers)
};
Checkpoint makeT5(const T5Spec& spec, unsigned seed);

// type "bart" (post-LN, layernorm_embedding), "mbart" (pre-LN, final layer norms) or "marian"
// (post-LN, sinusoidal positions, no layernorm_embedding).
struct BartSpec {
    std::string type = "bart";
    int vocab = 40, dModel = 24, encoderLayers = 2, decoderLayers = 2, encoderHeads = 3, decoderHeads = 2;
    int encoderFfn = 32, decoderFfn = 28, positions = 20;
    bool scaleEmbedding = false;
    bool prefix = true;      // "model." (…ForConditionalGeneration)
    bool tied = true;        // false: a separate lm_head.weight
    bool logitsBias = true;  // final_logits_bias
    std::string embeddings = "shared";
    std::string activation = "gelu";
    int decoderVocab = 0;  // marian: > 0 writes share_encoder_decoder_embeddings false and decoder_vocab_size
    long long decoderStart = 2, eos = 2;
};
Checkpoint makeBart(const BartSpec& spec, unsigned seed);

// A tokenizer.json for the fixtures (Unigram over whole words, Metaspace): ids 0 "<pad>",
// 1 "</s>", 2 "<unk>", then "▁WORD" for each of `words` from id 3, then `specials` (added
// tokens such as a language code). The post-processor appends `suffix` (special token names)
// to every text, as T5 ("</s>") and mBART ("</s>", "ro_RO") do.
void writeWordTokenizer(const std::filesystem::path& dir, const std::vector<std::string>& words,
                        const std::vector<std::string>& specials, const std::vector<std::string>& suffix);

// What the forward is asked beyond the ids.
struct Seq2seqRun {
    double temperature = 1.0;            // divides every layer's logits (position bias included)
    std::vector<int> temperatureLayers;  // empty = every layer (of each block)
    struct Head {
        std::string block;  // "encoder", "decoder" or "cross"
        int layer = 0, head = 0;
    };
    std::vector<Head> maskHeads;  // that head's output is zeroed
};

struct Seq2seqReference {
    // probs[l][h][i * m + j] per block.
    std::vector<std::vector<std::vector<double>>> encoder, decoder, cross;
    std::vector<std::vector<double>> logits;  // [target row][target vocab]
    std::vector<long long> argmax() const;    // per row
};

Seq2seqReference referenceT5(const Checkpoint& c, const T5Spec& spec, const std::vector<long long>& source,
                             const std::vector<long long>& target, const Seq2seqRun& run = {});
Seq2seqReference referenceBart(const Checkpoint& c, const BartSpec& spec, const std::vector<long long>& source,
                               const std::vector<long long>& target, const Seq2seqRun& run = {});

// Greedy decoding with a forced reference: rows start at `start`, each step appends the last
// row's argmax until `eos` or maxNew tokens; returns the generated tokens (eos included).
template <class Forward>
std::vector<long long> referenceGreedy(const Forward& forward, long long start, long long eos, int maxNew) {
    std::vector<long long> rows = {start}, out;
    for (;;) {
        const long long next = forward(rows).argmax().back();
        out.push_back(next);
        if (next == eos || static_cast<int>(out.size()) >= maxNew) return out;
        rows.push_back(next);
    }
}

}  // namespace attnscope::testing
