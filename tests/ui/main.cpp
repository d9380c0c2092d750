// Catch2 main for the ui tests: widgets need a QApplication that lives for the whole run.
// Built-in model names resolve to GPT-2 fixtures (builtin_fixture.h) through
// $ATTNSCOPE_BUILTIN_DIR, and settings (recent folders) go to a throwaway config folder.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "builtin_fixture.h"
#include "gpt2_fixture.h"

#include <QApplication>

#include <cstdlib>
#include <filesystem>

int main(int argc, char** argv) {
    // Headless by default (ctest also sets it); QT_QPA_PLATFORM=xcb shows the windows.
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    const auto builtin = attnscope::testing::writeBuiltinFixtures(attnscope::testing::freshDir("ui-builtin"));
    const auto config = attnscope::testing::freshDir("ui-config");
    qputenv("ATTNSCOPE_BUILTIN_DIR", builtin.string().c_str());
    qputenv("XDG_CONFIG_HOME", config.string().c_str());
    int qtArgc = 1;  // Catch parses the command line, not Qt
    QApplication app(qtArgc, argv);
    const int result = Catch::Session().run(argc, argv);
    std::error_code ec;
    std::filesystem::remove_all(builtin, ec);
    std::filesystem::remove_all(config, ec);
    return result;
}

// Writes the fixture folders to $ATTNSCOPE_FIXTURE_OUT for trying the app by hand:
//   ATTNSCOPE_FIXTURE_OUT=/tmp/builtin build/tests/ui/attnscope_ui_tests "[.write-fixtures]"
TEST_CASE("write the built-in fixture folders", "[.write-fixtures]") {
    const char* out = std::getenv("ATTNSCOPE_FIXTURE_OUT");
    REQUIRE(out);
    attnscope::testing::writeBuiltinFixtures(out);
}
