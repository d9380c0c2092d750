// Random ModernBERT checkpoints for tests, with the real Hugging Face tensor names and shapes, and
// their independent double-precision reference (reference_encoders.cpp: plain loops written from
// modeling_modernbert.py).
#pragma once

#include "family_fixtures.h"

namespace attnscope::testing {

struct ModernBertSpec {
    int vocab = 50, hidden = 24, inner = 20, layers = 4, heads = 2, positions = 64;
    int localAttention = 4, globalEvery = 3;  // layers 1, 2 local (|i - j| <= 2), 0 and 3 global
    double globalTheta = 1000.0, localTheta = 40.0;
    bool ropeParameters = false;  // the newer layout: layer_types and rope_parameters per type
    bool normBias = false, attentionBias = false, mlpBias = false, classifierBias = false;
    std::string activation = "gelu", classifierActivation = "gelu";
    std::string head = "none";  // none (ModernBertModel), classifier, mlm
    std::string pooling = "cls";
    int labels = 3;
    bool tied = true;  // mlm: decoder.weight left out (tied to the embeddings)
    bool decoderBias = true;
};
Checkpoint makeModernBert(const ModernBertSpec& spec, unsigned seed);

// probs per layer and head; hidden: the final norm's rows; logits: the classifier's (classifier
// head); mlm: each position's decoder logits [n][vocab] (mlm head). attend empty: all real tokens.
struct ModernBertReference {
    Reference base;
    std::vector<std::vector<double>> mlm;
};
ModernBertReference referenceModernBert(const Checkpoint& c, const ModernBertSpec& spec,
                                        const std::vector<long long>& ids, const std::vector<int>& attend = {});

}  // namespace attnscope::testing
