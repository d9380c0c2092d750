// The command line of attnscope-cli, after main's start-up (main.cpp). Exit codes: 0 success,
// 1 usage error (with a hint), 2 invalid input or a failure, reported as one line "error: ..."
// on stderr.
#include "attnscope/runtime/error.h"
#include "attnscope/runtime/version.h"
#include "commands.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define ATTNSCOPE_LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNSCOPE_LEAK_CHECK 1
#endif
#endif
#ifdef ATTNSCOPE_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif

namespace attnscope::cli {
namespace {

void printHelp(std::ostream& out) {
    out << "usage: attnscope-cli COMMAND [ARGS...]\n\ncommands:\n";
    for (const auto& c : commands())
        out << "  " << c.name << std::string(std::strlen(c.name) < 14 ? 14 - std::strlen(c.name) : 1, ' ') << c.summary
            << "\n";
    out << "\nRun 'attnscope-cli COMMAND --help' for a command's options.\n";
}

// --help-all (not listed; cmake/make_manpage.cmake writes the man page from it in one start): the
// top-level help, then for each command a form feed, its name, a newline and its --help text.
void printAllHelp(std::ostream& out) {
    printHelp(out);
    for (const auto& c : commands()) out << '\f' << c.name << '\n' << c.usage;
}

}  // namespace

int runCommandLine(int argc, char** argv) {
    // A file over the size limit (ulimit -f) is a write error like a full disk: write() then fails
    // with EFBIG and the writer reports the path (exit 2), instead of SIGXFSZ killing the process.
    std::signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        printHelp(std::cerr);
        return 1;
    }
    const std::string name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        printHelp(std::cout);
        return 0;
    }
    if (name == "--help-all") {
        printAllHelp(std::cout);
        return 0;
    }
    if (name == "--version") {
        std::cout << "attnscope-cli " << attnscope::kVersion << "\n";
        return 0;
    }
    const Command* command = nullptr;
    for (const auto& c : commands())
        if (name == c.name) command = &c;
    if (!command) {
        std::cerr << "attnscope-cli: unknown command '" << name << "'\n";
        printHelp(std::cerr);
        return 1;
    }
    std::vector<std::string> rest(argv + 2, argv + argc);
    for (const auto& a : rest)
        if (a == "--help" || a == "-h") {
            std::cout << command->usage;
            return 0;
        }
    try {
        return command->run(rest);
    } catch (const UsageError& e) {
        std::cerr << "attnscope-cli " << name << ": " << e.what() << "\n"
                  << "Try 'attnscope-cli " << name << " --help'.\n";
        return 1;
    } catch (const attnscope::Cancelled&) {
        std::cerr << "error: cancelled\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory\n";
        return 2;
    } catch (const std::exception& e) {
        // attnscope::Error carries a user-readable message; anything else (a LibTorch error)
        // is still reported on one line rather than aborting.
        std::string what = e.what();
        std::cerr << "error: " << what.substr(0, what.find('\n')) << "\n";
        return 2;
    }
}

void exitProcess(int code, bool checkLeaks) {
    std::cout.flush();
    const bool written = std::cout.good() && std::fflush(stdout) == 0;
    if (!written && code == 0) {
        std::cerr << "error: could not write the output (" << std::strerror(errno) << ")\n";
        code = 2;
    }
    std::cerr.flush();
    std::fflush(nullptr);
#ifdef ATTNSCOPE_LEAK_CHECK
    if (checkLeaks) __lsan_do_leak_check();  // what exit() would run; a no-op with detect_leaks=0
#else
    (void)checkLeaks;
#endif
    std::_Exit(code);
}

}  // namespace attnscope::cli
