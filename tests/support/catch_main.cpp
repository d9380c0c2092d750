// main for the test executables that need no QApplication; the framework is catch_impl.cpp.
#include "catch_run.h"

int main(int argc, char** argv) { return attnscope::testing::runCatchSession(argc, argv); }
