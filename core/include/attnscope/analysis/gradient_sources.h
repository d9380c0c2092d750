// The gradient map sources of issue 31 (Chefer et al. 2021), through LibTorch autograd.
// s is one scalar the model outputs:
//   decoder language models: the logit of GradientTarget::token at the last position (default:
//   the model's argmax there), before any final soft-cap;
//   sequence classifiers (BERT, RoBERTa, DistilBERT *ForSequenceClassification checkpoints) and
//   ViT with a classification head: the logit of GradientTarget::classIndex or classLabel (default:
//   the argmax).
// A target of the wrong kind (a token for a classifier, a class for a decoder) or out of range, and
// masked heads or temperature layers outside the model, throw attnscope::Error naming them.
// grad-weighted: G[l, h, i, j] = (∂s/∂α_hij) · α_hij, signed; the derivative is the total one
//   through the whole model (later layers' attention included), α the tensor that multiplies V.
// relevance: Āˡ = mean_h max(Gˡ, 0); R = I; for each layer in order R ← R + Āˡ R; the map of
//   layer l is R after layer l.
// Encoder–decoders, encoders without a task head, the built-in models and decoders whose weights
// are streamed are refused with one line. Maps read from files have no model to run: not covered.
#pragma once

#include "attnscope/analysis/map_source.h"
#include "attnscope/analysis/source_metrics.h"
#include "attnscope/attention/run_options.h"
#include "attnscope/attention/trace.h"
#include "attnscope/io/input.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/progress.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

struct GradientTarget {
    std::optional<std::int64_t> token;  // decoder LMs: a vocabulary id
    std::optional<int> classIndex;      // classifiers and ViT: a class index (gradientClassLabels)
    std::string classLabel;             // or the class by its label name (non-empty: used when classIndex is not)
};

// The model's input: text ids (with token types for the BERT family) or, for image models, an image.
struct GradientInput {
    TextInput text;                 // used when image is empty
    std::optional<RgbImage> image;  // image models (ModelInfo::imageInput)
};

struct GradientMaps {
    int layers = 0, heads = 0, tokens = 0;
    std::int64_t target = -1;         // the explained vocabulary id or class index
    std::string targetLabel;          // its token text or class label
    double score = 0;                 // s
    std::vector<float> gradWeighted;  // [layers, heads, tokens, tokens], signed
    std::vector<float> relevance;     // [layers, tokens, tokens]
    // One map of it: GradWeighted (layer, head) or Relevance (layer; head ignored). Throws
    // attnscope::Error for another source or an index out of range.
    HeadMap map(MapSource source, int layer, int head) const;
};

// One forward and one backward through the model on the input with the run's interventions
// (temperature inside the model, masked heads). Checks the memory the backward needs first and
// refuses, naming it, where it would not fit. progress may be empty; returning false cancels
// (attnscope::Cancelled).
GradientMaps gradientSources(const Model& model, const GradientInput& input, const GradientTarget& target,
                             const RunOptions& options = {}, const Progress& progress = {});

// The maps of `maps` for sourceHeadMetrics (source_metrics.h): GradWeighted or Relevance (head
// ignored), of block 0, the block the gradients cover (another block throws attnscope::Error).
// The provider keeps `maps` alive.
MapProvider gradientMapProvider(std::shared_ptr<const GradientMaps> maps, MapSource source);

// Whether the model explains a class (ViT with a head) rather than a next token, and its class
// labels in index order (empty for decoders). Throws attnscope::Error with the one-line refusal
// for a model the gradient sources do not cover (encoder–decoders, encoders without a head,
// built-in models, streamed weights).
std::vector<std::string> gradientClassLabels(const Model& model);

// The bytes the forward with gradients and the backward keep for `tokens` positions (what the
// memory check compares with what is available): per layer α, its gradient and the backward's
// temporaries ([heads, n, n] each) and the activations autograd saves, plus the float32 maps.
std::uint64_t gradientSourcesBytes(const ModelInfo& info, std::int64_t tokens);

}  // namespace attnscope
