#pragma once

#include "args.h"

#include <string>
#include <vector>

namespace attnscope::cli {

struct Command {
    const char* name;
    const char* summary;
    const char* usage;  // full --help text
    int (*run)(const std::vector<std::string>& argv);
};

const std::vector<Command>& commands();

// Each command is defined in its own cmd_NAME.cpp.
Command infoCommand();
Command attentionCommand();
Command benchCommand();
Command metricsCommand();
Command trainCommand();
Command listBuiltinCommand();
Command tokenizeCommand();
Command exportCommand();
Command corpusCommand();
Command corpusMergeCommand();
Command corpusPlotCommand();
Command builtinDataCommand();

}  // namespace attnscope::cli
