// The window at a device pixel ratio of 2 (issue 29: "it looks right … with a device pixel ratio
// of 2"). Qt fixes the screens and their scale when the application starts, so the test runs
// this executable again on an offscreen screen of 1280 × 720 logical pixels at DPR 2 (a
// 2560 × 1440 panel at 200 %: the offscreen platform's configfile option; QT_SCALE_FACTOR=2 does
// the same on a smaller screen) and the checks run there, in "[.dpr2]".
#include "layout_checks.h"
#include "window_fixture.h"

#include "gpt2_fixture.h"

#include <QGuiApplication>
#include <QProcess>
#include <QScreen>

#include <fstream>

namespace test_window_dpr {

using namespace uitest;

TEST_CASE("At device pixel ratio 2 the window fits 1280x720 logical with every dock open, cells square",
          "[ui][window][layout][dpr]") {
    const auto dir = attnscope::testing::freshDir("ui-dpr2");
    std::ofstream(dir / "screen.json") << R"({"screens": [{"name": "hidpi", "x": 0, "y": 0, "width": 1280,
        "height": 720, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 2}]})";
    QProcess child;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen:configfile=") + qpath(dir / "screen.json"));
    child.setProcessEnvironment(env);
    child.setProcessChannelMode(QProcess::MergedChannels);
    child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("[.dpr2]")});
    REQUIRE(child.waitForFinished(180000));
    const QString out = QString::fromLocal8Bit(child.readAll());
    INFO(out.toStdString());
    CHECK(child.exitCode() == 0);
    CHECK(out.contains(QStringLiteral("All tests passed")));  // it ran, and passed
}

TEST_CASE_METHOD(WindowFixture, "At DPR 2: minimum, every dock, square cells (run by the test above)", "[.dpr2]") {
    QScreen* screen = QGuiApplication::primaryScreen();
    REQUIRE(window.devicePixelRatio() == 2.0);
    REQUIRE(screen->geometry().size() == QSize(1280, 720));
    // The first start takes most of the screen, never more.
    CHECK(window.width() <= 1280);
    CHECK(window.height() <= 720);
    open(qpath(gpt2TwelveByTwelve()));
    REQUIRE(session->model()->info().heads == 12);
    showEveryDock(window);
    const QSize minimum = windowMinimum(window);
    INFO("minimum " << minimum.width() << " x " << minimum.height() << " logical px");
    CHECK(minimum.width() <= 1280);
    CHECK(minimum.height() <= 720);
    window.resize(1280, 720);
    QTest::qWait(100);
    requireSquareCells(*heatmap, "heat map at DPR 2");
    // The Compare tab's three maps, on the built-in default's task.
    open(QStringLiteral("builtin:reverse-dot"));
    window.tabs()->setCurrentWidget(window.compare());
    REQUIRE(QTest::qWaitFor(
            [&] {
                for (int i = 0; i < 3; ++i)
                    if (window.compare()->view(i)->map().rows <= 0) return false;
                return true;
            },
            30000));
    QTest::qWait(100);
    for (int i = 0; i < 3; ++i) requireSquareCells(*window.compare()->view(i), "Compare at DPR 2");
}

}  // namespace test_window_dpr
