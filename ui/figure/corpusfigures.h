// Figures of corpus results (core/corpus): the layer × head importance heat map (an attention-map
// Figure with one panel per block: rows = layers, columns = heads) and pruning curves. Used by
// `attnscope-cli corpus`, the window's Corpus tab and docs/ (the built-ins' comparison).
#pragma once

#include "figure/curvefigure.h"
#include "figure/figure.h"

#include "attnscope/corpus/corpus_result.h"

#include <optional>
#include <vector>

// Heads' mean importance divided by the largest (negative values, heads whose masking helps,
// show as 0), so the colour scale is the figures' [0, 1]; the colour bar names the maximum.
// Nothing when the result has no importance.
std::optional<Figure> importanceFigure(const attnscope::CorpusResult& result);

// What the Corpus tab's heat map can show per head: "importance" (the pruning order's measure),
// "masked_metric" (the task metric with the head alone masked) or a statistic of
// corpusStatKeys(); each with its name and unit for the colour bar.
struct CorpusQuantity {
    std::string key;
    QString name;  // "Entropy", "Induction det.", the result's importance name
    QString unit;  // "nats", "tokens" or "" (a share / the metric's own scale)
};
// The quantities this result has, importance first; none for a result without heads.
std::vector<CorpusQuantity> corpusQuantities(const attnscope::CorpusResult& result);
// A head's mean of quantity `key`; NaN where it has none (a detector in no example, no stats).
double headValue(const attnscope::HeadSummary& head, const std::string& key);

// The grid of one block's quantity `key`: rows = layers, cols = heads, raw means (not
// normalised; NaN where the head has none).
attnscope::HeadMap headGrid(const attnscope::CorpusResult& result, const std::string& block, const std::string& key);
attnscope::HeadMap importanceGrid(const attnscope::CorpusResult& result, const std::string& block);
// Block names in the order the result lists heads.
std::vector<std::string> resultBlocks(const attnscope::CorpusResult& result);

// The task metric against heads pruned, one series per result (names: legend entries; empty:
// none), with a ±std band for a single series.
CurveFigure pruningFigure(const std::vector<attnscope::CorpusResult>& results, const std::vector<QString>& names);
