// Catch2 main for the ui tests: widgets need a QApplication that lives for the whole run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <QApplication>

int main(int argc, char** argv) {
    // Headless by default (ctest also sets it); QT_QPA_PLATFORM=xcb shows the windows.
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    int qtArgc = 1;  // Catch parses the command line, not Qt
    QApplication app(qtArgc, argv);
    return Catch::Session().run(argc, argv);
}
