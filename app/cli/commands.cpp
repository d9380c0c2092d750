#include "commands.h"

namespace attnscope::cli {

const std::vector<Command>& commands() {
    // One line per command; each lives in its own cmd_*.cpp.
    static const std::vector<Command> all = {
            infoCommand(),        attentionCommand(),   benchCommand(),       metricsCommand(), trainCommand(),
            listBuiltinCommand(), tokenizeCommand(),    exportCommand(),      corpusCommand(),  corpusMergeCommand(),
            corpusPlotCommand(),  builtinDataCommand(), kindsReportCommand(), lensCommand(),    dlaCommand(),
            patchCommand(),       distilCommand(),      evictCommand(),       niahCommand(),    compareModelsCommand(),
    };
    return all;
}

}  // namespace attnscope::cli
