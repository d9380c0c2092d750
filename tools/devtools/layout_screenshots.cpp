// Pictures of the window as a whole (issue 29), for looking at by hand (not run by ctest):
//   QT_QPA_PLATFORM=xcb ATTNSCOPE_SHOT_DIR=/tmp/shots ATTNSCOPE_SHOT_SIZE=1366x768 \
//       xvfb-run -s "-screen 0 1366x768x24" build/tools/attnscope-devtools "[.layout-shots]"
// At the window's first-start size on that screen: the default built-in (reverse-dot), a
// 12-layer × 12-head GPT-2-shaped folder with the GPT-2 tokenizer, the Compare tab, the Views
// dock and the Lab dock on it. Prints the window's size and its minimum with every dock open.
#include "window_fixture.h"

#include "controllers/labcontroller.h"
#include "controllers/viewscontroller.h"
#include "panels/labpanel.h"

#include "gpt2_fixture.h"

#include <QDockWidget>
#include <QLayout>

#include <cstdio>

using namespace uitest;
using namespace attnscope::testing;

namespace {

std::filesystem::path gpt2Folder() {
    Gpt2Spec spec;
    spec.vocab = 8257;  // the GPT-2 tokenizer's first ids (tests/data/tokenizers/gpt2.json)
    spec.layers = 12;
    spec.heads = 12;
    spec.embd = 48;
    spec.positions = 64;
    spec.vocabJson = false;
    const auto dir = freshDir("layout-shots-gpt2");
    writeGpt2Folder(dir, makeGpt2(spec, 29));
    std::filesystem::copy_file(std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / "gpt2.json", dir / "tokenizer.json");
    return dir;
}

QDockWidget* dock(MainWindow& w, const char* name) { return w.findChild<QDockWidget*>(QString::fromLatin1(name)); }

void report(MainWindow& w, const char* what) {
    w.layout()->activate();
    const QSize min = w.layout()->totalMinimumSize().expandedTo(w.minimumSize());
    std::printf("%s: window %dx%d, minimum %dx%d, heat map %dx%d\n", what, w.width(), w.height(), min.width(),
                min.height(), w.heatmap()->width(), w.heatmap()->height());
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "layout screenshots", "[.layout-shots]") {
    const QString out = qEnvironmentVariable("ATTNSCOPE_SHOT_DIR");
    REQUIRE(!out.isEmpty());
    const QString size = qEnvironmentVariable("ATTNSCOPE_SHOT_SIZE", QStringLiteral("1366x768"));
    const auto save = [&](const QString& name) {
        QTest::qWait(500);
        window.grab().save(out + QLatin1Char('/') + name + QLatin1Char('-') + size + QStringLiteral(".png"));
    };
    report(window, "fresh");
    open(QStringLiteral("builtin:reverse-dot"));
    report(window, "builtin:reverse-dot");
    save(QStringLiteral("default"));
    window.tabs()->setCurrentWidget(window.compare());
    QTest::qWait(3000);  // the three built-in kinds run on the built-in's own input
    save(QStringLiteral("compare-builtin"));
    window.showExplore();

    open(qpath(gpt2Folder()));
    runText(QStringLiteral("The quick brown fox jumps over the lazy dog because it wants to"));
    layer->setValue(5);
    head->setValue(7);
    QTest::qWait(300);
    report(window, "gpt2 12x12");
    save(QStringLiteral("gpt2-12x12"));

    window.tabs()->setCurrentWidget(window.compare());
    QTest::qWait(3000);  // the three built-in kinds run
    save(QStringLiteral("compare"));
    window.showExplore();

    dock(window, "viewsDock")->show();
    dock(window, "viewsDock")->raise();
    window.views()->tabs()->setCurrentIndex(0);
    QTest::qWait(1500);
    save(QStringLiteral("views-lines"));
    window.views()->tabs()->setCurrentIndex(2);
    QTest::qWait(1500);
    save(QStringLiteral("views-qk"));

    dock(window, "labDock")->raise();
    window.lab()->panel()->variantCombo()->setCurrentIndex(int(LabVariant::Linear));
    QTest::qWait(1500);
    save(QStringLiteral("lab"));

    for (QDockWidget* d : window.findChildren<QDockWidget*>()) d->show();
    report(window, "gpt2 12x12, every dock open");
}
