#include "ui_session.h"

#include "catch_run.h"  // the framework: tests/support/catch_impl.cpp

#include "builtin_fixture.h"
#include "gpt2_fixture.h"

#include "attnscope/runtime/allocator.h"
#include "attnscope/runtime/blas_kernels.h"

#include <QApplication>

#include <cstdlib>
#include <filesystem>

namespace uitest {

int runUiSession(int argc, char** argv) {
    // The process set up as the window's own main sets it up (app/gui_main.cpp): OpenBLAS's idle
    // threads spinning for ~0.1 s, or the heap handing back large blocks, would make the window
    // slower here than for a user.
    attnscope::shortenBlasSpin();
    attnscope::tuneAllocator();
    // Headless by default (ctest also sets it); QT_QPA_PLATFORM=xcb shows the windows.
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    const auto standIn = attnscope::testing::writeStandInModel(attnscope::testing::freshDir("ui-stand-in"));
    attnscope::testing::setStandInModel(standIn);
    const auto config = attnscope::testing::freshDir("ui-config");
    qputenv("ATTNSCOPE_BUILTIN_DIR", ATTNSCOPE_SHIPPED_BUILTIN_DIR);
    qputenv("XDG_CONFIG_HOME", config.string().c_str());
    int qtArgc = 1;  // Catch parses the command line, not Qt
    QApplication app(qtArgc, argv);
    const int result = attnscope::testing::runCatchSession(argc, argv);
    std::error_code ec;
    std::filesystem::remove_all(standIn, ec);
    std::filesystem::remove_all(config, ec);
    return result;
}

}  // namespace uitest
