// An independent forward of the built-in models for tests: plain loops in double precision over
// the weights of a model folder (read through the public safetensors reader), written from the
// definitions in core/src/builtin/config.h (pre-LN transformer; dot, Bahdanau additive, and elu+1
// linear attention). Nothing is shared with core's implementation.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attnscope::testing {

// maps[layer][head] = rows × cols probabilities, row-major.
struct RefBlock {
    int rows = 0, cols = 0;
    std::vector<std::vector<std::vector<double>>> maps;
    // Per layer, the head-concatenated query and key projections: q[layer][i][h * d + a].
    std::vector<std::vector<std::vector<double>>> q, k;
    // Per layer, what the value sources read: f[layer][h][j] = f_h(x̃_j) = v_j^h W_O^h [width]
    // (zero for a head the run masked), the residual x entering the layer (encoder layers only:
    // the one stream ALTI is defined over) and the output projection's bias b_O.
    std::vector<std::vector<std::vector<std::vector<double>>>> f;
    std::vector<std::vector<std::vector<double>>> residual;
    std::vector<std::vector<double>> outBias;
};

struct BuiltinRefOptions {
    double temperature = 1.0;            // inside the softmax of dot/additive layers
    std::vector<int> temperatureLayers;  // empty = every layer
    struct Masked {
        std::string block;
        int layer, head;
    };
    std::vector<Masked> masked;  // heads whose output is zeroed
};

struct RefClassifier {
    RefBlock self;
    std::vector<double> probabilities;
};

struct RefSeq2seq {
    RefBlock encoder, decoder, cross;
    std::vector<std::vector<double>> logits;  // per decoder row, [vocab]
};

RefClassifier referenceClassifier(const std::filesystem::path& folder, const std::vector<long long>& ids,
                                  const BuiltinRefOptions& options = {});
// Teacher-forced: the decoder reads `decoderInput` (starting with <s>).
RefSeq2seq referenceSeq2seq(const std::filesystem::path& folder, const std::vector<long long>& source,
                            const std::vector<long long>& decoderInput, const BuiltinRefOptions& options = {});

}  // namespace attnscope::testing
