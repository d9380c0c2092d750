// A random Swin checkpoint (SwinForImageClassification's tensor names and shapes) and its
// independent double-precision reference (reference_swin.cpp: plain loops written from
// modeling_swin.py, window by window: pad, roll, partition, the -100 shift mask, the relative
// position index, reverse, patch merging; nothing shared with core).
#pragma once

#include "family_fixtures.h"

namespace attnscope::testing {

struct SwinSpec {
    int imageSize = 28, patch = 4, embed = 8, window = 3, labels = 5;
    std::vector<int> depths{2, 2}, heads{2, 4};
    double mlpRatio = 2.0, eps = 1e-5;
    bool prefix = true;  // "swin." (the classification model); without: SwinModel's names
};
Checkpoint makeSwin(const SwinSpec& spec, unsigned seed);

// What the reference leaves out, to show that a test sees each part.
struct SwinReferenceOptions {
    bool shiftMask = true;    // the -100 between the regions of a shifted window
    bool paddingKeys = true;  // the window padding takes part in the softmax
};

struct SwinReference {
    std::vector<int> rows, cols;  // each stage's grid
    // maps[stage][block][head][i * n + j]: the stage grid's map (n = rows · cols, row-major),
    // zero outside the query's window, without the window padding's columns.
    std::vector<std::vector<std::vector<std::vector<double>>>> maps;
    std::vector<double> logits;               // the classifier's, on the mean final token
    std::vector<std::vector<double>> hidden;  // after the final LayerNorm
};

// pixels: [3][size][size], preprocessed (channels first); size need not be a multiple of the patch.
SwinReference referenceSwin(const Checkpoint& c, const SwinSpec& spec, const std::vector<double>& pixels, int size,
                            const SwinReferenceOptions& options = {});

}  // namespace attnscope::testing
