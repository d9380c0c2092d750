// --source and --block for the commands that write or measure a map source (attention, metrics).
#pragma once

#include "attnscope/analysis/map_source.h"
#include "attnscope/models/model.h"

#include <optional>
#include <string>
#include <vector>

namespace attnscope::cli {

// The blocks to use, in the trace's order: all of them, or the one `block` names (a name the
// trace lacks is refused, naming its blocks). The ALTI sources refuse an encoder-decoder's
// decoder and cross blocks (they mix two streams) in one line, unless --block encoder asks for
// the encoder alone.
std::vector<int> sourceBlocks(const Trace& trace, MapSource source, const std::optional<std::string>& block);

// Refuses, naming the family and block, a Trace-based source whose inputs a chosen block did
// not record (the value sources need the values, ALTI also the residuals).
void requireSourceCovered(const Trace& trace, const ModelInfo& info, MapSource source, const std::vector<int>& blocks);

}  // namespace attnscope::cli
