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

// The grid of one block's importance: rows = layers, cols = heads, raw means (not normalised);
// what the Corpus tab's heat map shows.
attnscope::HeadMap importanceGrid(const attnscope::CorpusResult& result, const std::string& block);
// Block names in the order the result lists heads.
std::vector<std::string> resultBlocks(const attnscope::CorpusResult& result);

// The task metric against heads pruned, one series per result (names: legend entries; empty:
// none), with a ±std band for a single series.
CurveFigure pruningFigure(const std::vector<attnscope::CorpusResult>& results, const std::vector<QString>& names);
