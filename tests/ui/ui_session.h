// The process the ui tests and the developer tools (tools/devtools) run in: a QApplication that
// lives for the whole Catch2 session, set up as the window's own main sets it up.
#pragma once

namespace uitest {

// Runs the Catch2 session on argv (Qt does not parse it) and returns its exit code. Built-in
// names resolve to the shipped models in resources/builtin; a GPT-2 stand-in folder
// (builtin_fixture.h) serves the tests about the window in general, and settings (recent
// folders) go to a throwaway config folder; both are removed afterwards.
int runUiSession(int argc, char** argv);

}  // namespace uitest
