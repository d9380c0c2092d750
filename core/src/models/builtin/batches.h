// Training batches of the built-in tasks and the task loss over one, shared by the trainer and
// attention distillation (distillation.h). Every batch is a pure function of its TaskData stream.
#pragma once

#include "config.h"
#include "net.h"
#include "symbols.h"

#include <cstdint>
#include <vector>

namespace attnscope::builtin {

// source [B, S] ids padded with kPad, sourceAllowed [B, S] bool; seq2seq: targetIn [B, T + 1]
// (<s> then the target), targetOut [B, T + 1] (the target then </s>, -100 where padded);
// classifier: labels [B].
struct Batch {
    at::Tensor source, sourceAllowed, targetIn, targetOut, labels;
};

Batch reverseBatch(TaskData& data, const Symbols& symbols, int size);
Batch sentimentBatch(TaskData& data, const Symbols& symbols, int size);

// A task file's example as ids: source (classifier: <cls> + units) and target ids or the label.
struct Encoded {
    std::vector<std::int64_t> source, target;
    std::int64_t label = 0;
};

// `size` examples drawn uniformly (the project's generator) from `examples`.
Batch fileBatch(TaskData& data, const std::vector<Encoded>& examples, bool seq2seq, int size);

// The cross-entropy of the model on the batch (training pass); `maps` (optional) receives every
// attention module's weights.
at::Tensor taskLoss(const Weights& w, const Config& c, const Batch& b, std::vector<SiteMap>* maps = nullptr);

}  // namespace attnscope::builtin
