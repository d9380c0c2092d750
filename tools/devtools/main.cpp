// attnscope-devtools: the developer's jobs that drive the real window but are not tests
// (screenshots, timings, a fixture writer; tools/README.md). Each is a hidden Catch2 case run by
// its tag, in the ui tests' process set-up (tests/ui/ui_session.h), so it can use their
// fixtures. Without arguments it lists the jobs instead of running nothing.
#include "ui_session.h"

#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc > 1) return uitest::runUiSession(argc, argv);
    std::string self = argv[0], list = "--list-tests", hidden = "[.]";
    std::vector<char*> args = {self.data(), list.data(), hidden.data()};
    return uitest::runUiSession(int(args.size()), args.data());
}
