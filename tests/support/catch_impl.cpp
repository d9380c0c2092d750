// Catch2's implementation, compiled once for every test executable (tests/CMakeLists.txt):
// CATCH_CONFIG_RUNNER brings in the framework without a main. catch_main.cpp is the plain main;
// tests/ui/main.cpp has its own (a QApplication around the session).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_run.h"

int attnscope::testing::runCatchSession(int argc, char** argv) { return Catch::Session().run(argc, argv); }
