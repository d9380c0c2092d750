// Screenshots of the Compare tab's training curves and Kinds panels (not run by ctest):
//   ATTNSCOPE_SCREENSHOT_DIR=DIR ATTNSCOPE_SHOT_RUN=RUN_FOLDER ATTNSCOPE_SHOT_KINDS=REPORT_FOLDER \
//     xvfb-run -s "-screen 0 1366x768x24" build/tools/attnscope-devtools "[.kinds-shots]"
// RUN_FOLDER: a train or distil output (monitors.csv); REPORT_FOLDER: a kinds-report output.
#include "window_fixture.h"

#include "panels/kindspanel.h"
#include "panels/trainingcurvespanel.h"

#include <QTabWidget>

#include <cstdlib>

using namespace uitest;

TEST_CASE_METHOD(WindowFixture, "save screenshots of the training curves and kinds panels", "[.kinds-shots]") {
    const char* dir = std::getenv("ATTNSCOPE_SCREENSHOT_DIR");
    const char* run = std::getenv("ATTNSCOPE_SHOT_RUN");
    const char* kinds = std::getenv("ATTNSCOPE_SHOT_KINDS");
    REQUIRE(dir);
    REQUIRE(run);
    REQUIRE(kinds);
    window.resize(1366, 768);
    auto* curves = window.findChild<TrainingCurvesPanel*>();
    auto* report = window.findChild<KindsPanel*>();
    REQUIRE(curves);
    REQUIRE(report);
    REQUIRE(curves->openRun(QString::fromLocal8Bit(run)));
    window.tabs()->setCurrentWidget(curves);
    QTest::qWait(400);
    window.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/training_curves.png"));
    REQUIRE(report->openReport(QString::fromLocal8Bit(kinds)));
    window.tabs()->setCurrentWidget(report);
    QTest::qWait(400);
    window.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/kinds_panel.png"));
    report->exportFigures(QString::fromLocal8Bit(dir));
}
