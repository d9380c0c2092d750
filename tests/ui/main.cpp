// Catch2 main for the ui tests: widgets need a QApplication that lives for the whole run
// (ui_session.h).
#include "ui_session.h"

int main(int argc, char** argv) { return uitest::runUiSession(argc, argv); }
