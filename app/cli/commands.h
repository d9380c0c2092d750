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

// The whole command line after start-up (argv[0] the program, argv[1] the command): finds the
// command, runs it and maps its errors to the exit codes (entry.cpp). main.cpp and the tests'
// fork server (tests/cli/fork_server.cpp) call it.
int runCommandLine(int argc, char** argv);

// Ends the process with runCommandLine's code: flushes stdout and stderr (a failed flush of a
// successful run becomes "error: ..." and exit 2), runs the leak checker in an AddressSanitizer
// build (unless checkLeaks is false), and exits without running static destructors. At exit LibTorch unregisters every
// operator kernel one by one, touching pages all over its registry: 0.35 s of every run here
// (0.8 s under ASan), freeing nothing the end of the process does not.
[[noreturn]] void exitProcess(int code, bool checkLeaks = true);

// Each command is defined in its own cmd_NAME.cpp.
Command infoCommand();
Command attentionCommand();
Command benchCommand();
Command metricsCommand();
Command trainCommand();
// distil --per-head (cmd_distil_heads.cpp), dispatched from distil.
int runDistilHeads(const std::vector<std::string>& argv);
Command listBuiltinCommand();
Command tokenizeCommand();
Command exportCommand();
Command corpusCommand();
Command corpusMergeCommand();
Command corpusPlotCommand();
Command builtinDataCommand();
Command kindsReportCommand();
Command distilCommand();
Command lensCommand();
Command dlaCommand();
Command patchCommand();
Command evictCommand();
Command niahCommand();
Command compareModelsCommand();

}  // namespace attnscope::cli
