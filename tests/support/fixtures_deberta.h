// Random DeBERTa v2/v3 checkpoints for tests, with the real Hugging Face tensor names and shapes,
// and their independent double-precision reference (reference_deberta.cpp: plain loops written
// from modeling_deberta_v2.py).
#pragma once

#include "family_fixtures.h"

namespace attnscope::testing {

struct DebertaSpec {
    int vocab = 50, hidden = 24, inner = 40, layers = 2, heads = 3, positions = 64;
    int typeVocab = 0, embedding = 0;  // embedding 0: hidden_size (no embed_proj)
    bool relative = true;
    std::vector<std::string> posAtt = {"p2c", "c2p"};
    bool posAttString = false;  // write pos_att_type as "p2c|c2p" (the v2 configs' form)
    bool shareKey = false, normRel = false, positionBiased = false;
    int buckets = -1, maxRelative = -1;  // as config.json's position_buckets, max_relative_positions
    int convKernel = 0, convGroups = 1;
    std::string convAct = "tanh", activation = "gelu", poolerAct = "gelu";
    int labels = 0;  // > 0: DebertaV2ForSequenceClassification (deberta. prefix, pooler, classifier)

    bool has(const std::string& term) const;
    int span() const;  // att_span: the buckets, else max_relative_positions (else max_position_embeddings)
};
Checkpoint makeDeberta(const DebertaSpec& spec, unsigned seed);

// Hugging Face's make_log_bucket_position for one relative position, in double precision.
long long debertaBucket(long long relative, int buckets, int maxPosition);

// base: probs (padding query rows all zero, as XSoftmax), hidden (the last layer's rows), logits
// (classifier); terms[l][h][t][i * n + j]: c2c, c2p, p2c before the mask (zeros for a term left out).
struct DebertaReference {
    Reference base;
    std::vector<std::vector<std::vector<std::vector<double>>>> terms;
};
DebertaReference referenceDeberta(const Checkpoint& c, const DebertaSpec& spec, const std::vector<long long>& ids,
                                  const std::vector<long long>& typeIds = {}, const std::vector<int>& attend = {});

}  // namespace attnscope::testing
