// Pictures of the Long context tab with every dock open, for looking at by hand (not run by ctest):
//   QT_QPA_PLATFORM=xcb ATTNSCOPE_SHOT_DIR=/tmp/shots ATTNSCOPE_SHOT_SIZE=1366x768 \
//       xvfb-run -s "-screen 0 1366x768x24" build/tools/attnscope-devtools "[.long-shots]"
// A needle scan on the hand-weighted copying GPT-2 (tests/support/needle_fixture.h: its head 0
// retrieves the needle's continuation) with that head's rows over a run's context, and a
// KV-eviction what-if (H2O) on a Llama-shaped folder with small random weights and a real
// tokenizer, layer 2's head 1 with its kv head's kept keys.
#include "window_fixture.h"

#include "controllers/longcontroller.h"
#include "panels/longpanel.h"
#include "views/headmetricmap.h"
#include "views/heatmapview.h"

#include "family_fixtures.h"
#include "needle_fixture.h"

#include <QComboBox>
#include <QGuiApplication>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScreen>
#include <QSpinBox>

using namespace uitest;
using namespace attnscope::testing;

TEST_CASE_METHOD(WindowFixture, "long context screenshots", "[.long-shots]") {
    const QString out = qEnvironmentVariable("ATTNSCOPE_SHOT_DIR");
    REQUIRE(!out.isEmpty());
    const QStringList size = qEnvironmentVariable("ATTNSCOPE_SHOT_SIZE", QStringLiteral("1366x768")).split('x');
    REQUIRE(size.size() == 2);
    const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
    window.resize(screen.width() * 9 / 10, screen.height() * 9 / 10);
    const QString tag = size.join(QLatin1Char('x'));
    // Every dock open: the tab fits beside them (its settings are two pages of a narrow column).
    LongController* controller = window.longContext();
    LongPanel* panel = controller->panel();
    const auto root = freshDir("long-shots");

    // The needle scan: 3 lengths × 5 depths, then head 0's rows on the longest run at depth 0.5.
    const auto copying = root / "copying";
    writeCopyingGpt2(copying);
    open(qpath(copying));
    runText(QStringLiteral("0 1 2 10 11 12 13 3 4 10"));
    window.tabs()->setCurrentWidget(panel);
    QStringList hay;
    for (int i = 0; i < 60; ++i) hay << QString::number((i * 3) % 10);
    panel->haystackEdit()->setPlainText(hay.join(QLatin1Char(' ')));
    panel->needleEdit()->setText(QStringLiteral("10 11 12 13"));
    panel->questionEdit()->setText(QStringLiteral("10"));
    panel->answerEdit()->setText(QStringLiteral("11 12 13"));
    panel->lengthsEdit()->setText(QStringLiteral("16,32,56"));
    panel->depthsEdit()->setText(QStringLiteral("0,0.25,0.5,0.75,1"));
    panel->scanTokensSpin()->setValue(3);
    QSignalSpy scanned(controller->service(), &LongService::scanReady);
    QTest::mouseClick(panel->scanButton(), Qt::LeftButton);
    REQUIRE(scanned.wait(60000));
    panel->runCombo()->setCurrentIndex(12);  // L 56, depth 0.5
    REQUIRE(QTest::qWaitFor([&] { return controller->rowsResult().run == 12 && controller->rowsResult().trace; },
                            30000));
    QTest::qWait(500);
    window.grab().save(out + QStringLiteral("/long-needle-") + tag + QStringLiteral(".png"));
    panel->longMap()->resetZoom();
    QTest::qWait(300);
    window.grab().save(out + QStringLiteral("/long-needle-whole-") + tag + QStringLiteral(".png"));

    // The eviction what-if on a Llama with a tokenizer: H2O keeping 24 of the prompt's keys.
    const auto llama = root / "llama";
    std::filesystem::create_directories(llama);
    LlamaSpec spec;
    spec.vocab = 9295;
    spec.layers = 4;
    spec.heads = 4;
    spec.kvHeads = 2;
    spec.positions = 256;
    spec.tied = true;
    writeCheckpoint(llama, makeLlama(spec, 42));
    std::filesystem::copy_file(std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / "llama2.json",
                               llama / "tokenizer.json", std::filesystem::copy_options::overwrite_existing);
    open(qpath(llama));
    runText(QStringLiteral("The quick brown fox jumps over the lazy dog. A key/value cache keeps the keys of the "
                           "prompt; an eviction policy keeps only some of them, and the next tokens may change."));
    window.tabs()->setCurrentWidget(panel);
    panel->policyCombo()->setCurrentIndex(0);  // H2O
    panel->budgetSpin()->setValue(24);
    panel->evictTokensSpin()->setValue(16);
    QSignalSpy evicted(controller->service(), &LongService::evictReady);
    QTest::mouseClick(panel->evictButton(), Qt::LeftButton);
    REQUIRE(evicted.wait(60000));
    panel->layerSpin()->setValue(2);
    panel->headSpin()->setValue(1);
    REQUIRE(QTest::qWaitFor([&] { return !panel->longMap()->map().values.empty(); }, 30000));
    QTest::qWait(500);
    window.grab().save(out + QStringLiteral("/long-evict-") + tag + QStringLiteral(".png"));
}
