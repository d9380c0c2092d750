// Trace: what one forward pass recorded, enough to recompute any attention map on demand.
//
// Per attention block (GPT-2 has one, "self"; encoder-decoder models add "cross") and per layer,
// the Trace keeps Q [heads, queries, head_dim] and K [kv_heads, keys, head_dim] exactly as the
// model used them, plus the model's additive mask [queries, keys] (0 or -inf). Storing Q/K
// instead of maps keeps capture memory O(L·H·n·d) rather than O(L·H·n²); a map is one small
// matmul + softmax away. Tensors stay on the device the model ran on.
//
// A Trace is immutable once built: share it as std::shared_ptr<const Trace> across threads.
// Torch stays out of this header (pimpl) so ui code compiles without LibTorch's headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

// Row-major probabilities: values[query * cols + key]; each row sums to 1 over allowed keys.
struct HeadMap {
    int rows = 0;  // queries
    int cols = 0;  // keys
    std::vector<float> values;

    float at(int query, int key) const { return values[static_cast<std::size_t>(query) * cols + key]; }
};

// How a layer computes attention (built-in models may use any; pretrained models use Dot).
// Local, TopK and Lsh are dot-product logits softmaxed over a kept set of keys (MapVariant of the
// same names); Hybrid mixes additive and dot maps with a learned gate per query.
enum class AttentionKind { Dot, Additive, Linear, Local, TopK, Lsh, Hybrid };
const char* kindName(AttentionKind kind);  // "dot", "additive", "linear", "local", "topk", "lsh", "hybrid"

// Which map to compute from a head's captured Q and K.
enum class MapVariant {
    Native,  // the layer's own kind, exactly as the model used it
    Dot,     // softmax(q·k·scale / T + mask); for a Dot layer the same as Native
    Linear,  // φ(q)·φ(k) normalised over allowed keys, φ on the unscaled q, k
    // The layer's own logits (scale, cap, biases, at temperature T) softmaxed over a kept subset
    // of the allowed keys; kept-out keys are exactly 0 (core/src/attention/kinds.h):
    Local,  // query i (at position p = i + keys - queries) keeps keys p-W < j <= p, or |p - j| < W two-sided
    TopK,   // the `keep` largest logits of the row; ties go to the lower key index
    Lsh,    // Reformer: the keys sharing a hash chunk (or the one before) with the query in any round
};
// φ = elu+1, relu, FAVOR+ positive random features, cosFormer's relu with cos(π/2·(i−j)/M)
// re-weighting (M = max(queries, keys); positions are the row and column indices).
enum class FeatureMap { Elu, Relu, Favor, Cos };

// Parameters of the sparse variants (MapVariant Local, TopK, Lsh).
struct SparseOptions {
    int window = 4;          // Local: W >= 1
    bool twoSided = false;   // Local: |p - j| < W instead of the causal window p-W < j <= p
    int keep = 4;            // TopK: k >= 1 (a row with fewer allowed keys keeps them all)
    int buckets = 4;         // Lsh: even, >= 2; hash h(x) = argmax([xR; -xR]), R [d, buckets/2]
    int rounds = 1;          // Lsh: independent hash rounds; a key kept in any round is kept
    int chunk = 0;           // Lsh: chunk length of the sorted order; 0 = ceil(length / buckets)
    std::uint64_t seed = 0;  // Lsh: the random rotations R ~ N(0, 1) (core's own generator)
};

struct MapOptions {
    // Display temperature T: softmax(logits/T + mask). T = 1 is the model's own map. Applies to
    // Dot and Additive maps; a Linear map has no softmax and ignores it, except with FAVOR+,
    // which estimates softmax(q·k·scale/T + mask) (see core/src/lab/favor.h).
    double temperature = 1.0;
    MapVariant variant = MapVariant::Native;
    FeatureMap featureMap = FeatureMap::Elu;  // Linear only
    int features = 256;                       // FAVOR+ only: number of random features (>= 1)
    std::uint64_t seed = 0;                   // FAVOR+ only: orthogonal random features, fixed by seed
    SparseOptions sparse;                     // Local, TopK, Lsh
};

// How a pooled map folds a bin of cells into one value: Max keeps a single strong cell visible
// (thumbnails of sparse heads), Mean is the bin's average (masked cells count as 0), Sum keeps
// the mass (a row bin's values sum to the number of its rows).
enum class Pooling { Max, Mean, Sum };

// A rectangle of a head's map, rows [rowBegin, rowEnd) x keys [colBegin, colEnd) (an end of 0
// means the map's last row / key + 1), folded into at most outRows x outCols bins. Bin r takes
// the rows i with floor((i - rowBegin) · bins / visibleRows) = r, so every cell lies in exactly
// one bin; when the rectangle has no more cells than bins each cell is its own bin.
struct PoolRequest {
    int rowBegin = 0, rowEnd = 0, colBegin = 0, colEnd = 0;
    int outRows = 64, outCols = 64;
    Pooling pooling = Pooling::Max;
};

struct BlockInfo {
    std::string name;  // "self", "encoder", "decoder", "cross"
    int layers = 0;
    int heads = 0;    // query heads
    int kvHeads = 0;  // key/value heads (== heads unless grouped-query attention)
    bool causal = false;
    AttentionKind kind = AttentionKind::Dot;
    // One label per map row / column, in readable form when the model has a tokenizer (see
    // Trace::displayTokens); Trace::tokens() keeps the raw vocabulary strings.
    std::vector<std::string> queryTokens;
    std::vector<std::string> keyTokens;
    // Per layer, the sliding window (a query sees the `window` latest keys, itself included) or
    // 0 for global attention; empty when every layer is global (Gemma-2/3, GPT-Neo, Mistral).
    std::vector<std::int64_t> layerWindows;

    // The key/value group query head `head` shares (grouped-query attention: heads / kvHeads
    // consecutive query heads per group); == head when kvHeads == heads.
    int kvGroup(int head) const { return kvHeads > 0 && heads >= kvHeads ? head / (heads / kvHeads) : head; }
};

// A masked-LM head's guesses (ModernBERT's decoder): for every position the k ids it finds most
// likely, most likely first, and their probabilities (softmax over the vocabulary), row-major
// [tokens, k].
struct TokenPredictions {
    int k = 0;
    std::vector<std::int64_t> ids;
    std::vector<float> probabilities;
};

class Trace {
public:
    struct Impl;  // defined in core/src/trace_impl.h
    explicit Trace(std::unique_ptr<Impl> impl);
    ~Trace();
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    const std::vector<std::int64_t>& ids() const;  // the input ids; empty for an image input
    // One raw vocabulary string per input id ([CLS], rRcC patches for images).
    const std::vector<std::string>& tokens() const;
    // Readable labels parallel to tokens(): byte-level marks decoded, "▁" as a space, "##"
    // dropped, spaces shown as "·" (Tokenizer::displayToken); equal to tokens() for a model
    // without a tokenizer.
    const std::vector<std::string>& displayTokens() const;
    const std::vector<BlockInfo>& blocks() const;
    // Index of the block with this name; throws attnscope::Error listing the names if absent.
    int blockIndex(const std::string& name) const;

    // The attention probabilities of one head. Throws attnscope::Error on an index out of range
    // or a temperature that is not finite and > 0.
    HeadMap map(int block, int layer, int head, const MapOptions& options = {}) const;
    // The same map pooled (PoolRequest): rows/cols are the bin counts, values [rows, cols]
    // row-major. Dot maps on the CPU are computed block of query rows by block over the
    // rectangle's keys on every core, so a head's full map is never held (peak: one [128, keys]
    // block per worker); other variants pool the full map. Throws like map(), and on a rectangle
    // outside the map or bins < 1.
    HeadMap pooledMap(int block, int layer, int head, const PoolRequest& pool, const MapOptions& options = {}) const;

    // Model outputs: logits of the token after the last position (decoder LMs), else empty.
    const std::vector<float>& nextTokenLogits() const;
    // Classifiers: class names and probabilities (parallel), else empty.
    const std::vector<std::string>& classLabels() const;
    const std::vector<float>& classProbabilities() const;
    // Encoder-decoder models: the generated output ids and their labels (no start/end marks),
    // else empty.
    const std::vector<std::int64_t>& outputIds() const;
    const std::vector<std::string>& outputTokens() const;
    // Encoder-decoders run on a forced target (TextInput::targetIds): per decoder row but the
    // last, the natural-log probability the model gives the next target id (row i: target[i + 1]),
    // what interventions compare; else empty.
    const std::vector<float>& targetLogProbs() const;
    // Encoders without a task head (BERT, RoBERTa, DistilBERT; ViT without a classifier): the
    // final hidden states, row-major [tokens, finalHiddenWidth()] float32 on the CPU (Hugging
    // Face's last_hidden_state: BERT's last layer, ViT's after its final LayerNorm), else empty
    // with width 0. Models with another output leave it empty.
    const std::vector<float>& finalHidden() const;
    int finalHiddenWidth() const;
    // Masked-LM encoders (ModernBERT with its MLM head, which also keep finalHidden): the head's
    // top predictions at every position, else k = 0.
    const TokenPredictions& tokenPredictions() const;
    std::string device() const;  // "cpu" or "cuda:N"

    const Impl& impl() const { return *impl_; }

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace attnscope
