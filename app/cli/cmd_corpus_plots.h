// The corpus command's PDF plots, drawn with the app's figure code (ui/figure): a layer × head
// importance heat map per block (importance.pdf) and the pruning curve (pruning.pdf).
#pragma once

#include "attnscope/corpus/corpus_result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace attnscope::cli {

// Writes DIR/importance.pdf (when the result has importance) and DIR/pruning.pdf (when it has a
// curve). Without the Qt build, says on stderr that the plots are skipped.
void writeCorpusPlots(const CorpusResult& result, const std::filesystem::path& dir);
// The pruning curves of several results in one figure (PDF, SVG or PNG by the extension); throws
// attnscope::Error without the Qt build.
void writePruningComparison(const std::vector<CorpusResult>& results, const std::vector<std::string>& names,
                            const std::filesystem::path& file);

}  // namespace attnscope::cli
