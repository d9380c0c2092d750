// Runs Catch2's session over the command line. The framework (and Catch::Session, which Catch2
// declares only where its implementation is compiled) lives in catch_impl.cpp, built once for all
// test executables; the mains call this.
#pragma once

namespace attnscope::testing {
int runCatchSession(int argc, char** argv);
}
