// The neuron view's numbers (BertViz's neuron view, for every family): for one query position
// and head, the query vector, every key vector and their element-wise product q⊙k, the scaled
// sum per key, the model's logit and the softmax weight.
//
// The vectors are the ones the Trace keeps, i.e. the ones the model's scores come from: after
// the family's q/k norms and rotary, in the key/value group the head shares (grouped-query
// attention). With ScoreSpec's terms (attention_ops.h):
//   dot_j    = Σ_d q_d · k_jd                      (sum of the products row j)
//   scaled_j = scale · dot_j
//   logit_j  = cap(scaled_j) + alibi_j + bias_j    (the model's own pre-mask logit; `extra_j` is
//                                                   logit_j − scaled_j)
//   weight_j = softmax over allowed keys of logit_j / T   (0 where masked)
// so weight equals the row of Trace::map(block, layer, head, {T}) the heat map shows. T is the
// display temperature times the temperature the layer ran at.
//
// Only dot-product layers have q·k logits: additive and linear layers are refused with a message
// saying why. Plain C++ types; vectors are copied to the CPU as float32 / float64.
#pragma once

#include "attnscope/attention/trace.h"

#include <string>
#include <vector>

namespace attnscope {

struct NeuronRow {
    int block = 0, layer = 0, head = 0;
    int query = 0;             // the query position (map row)
    int kvGroup = 0;           // the key head the query head reads
    int dim = 0;               // head dimension d
    int keys = 0;              // m
    double scale = 1.0;        // the model's scale (1/√d, or its own)
    double softcap = 0.0;      // > 0: tanh soft-cap
    double temperature = 1.0;  // the T the weights use (display × propagated)
    std::string extras;        // what the logits carry beyond the scaled product ("" when plain)

    std::vector<float> queryVector;  // [dim]
    std::vector<float> keyVectors;   // [keys, dim] row-major
    std::vector<float> products;     // [keys, dim]: q_d · k_jd
    std::vector<double> dot;         // [keys] Σ_d products (accumulated in double)
    std::vector<double> scaled;      // [keys] scale · dot
    std::vector<double> extra;       // [keys] logit − scaled (soft-cap change, ALiBi, position bias)
    std::vector<double> logits;      // [keys] the model's pre-mask logits
    std::vector<bool> allowed;       // [keys] keys the mask lets this query see
    std::vector<double> weights;     // [keys] the softmax weights at temperature

    float product(int key, int d) const { return products[static_cast<std::size_t>(key) * dim + d]; }
};

// The row of (block, layer, head) for query position `query` at display temperature T.
// Throws attnscope::Error on an index out of range, a temperature that is not finite and > 0,
// or a layer whose attention is not a dot product.
NeuronRow neuronRow(const Trace& trace, int block, int layer, int head, int query, double temperature = 1.0);

}  // namespace attnscope
