// Pictures of the Causal tab and the Lab's knockout for looking at by hand (not run by ctest):
//   ATTNSCOPE_SHOT_DIR=/tmp/shots ATTNSCOPE_SHOT_SIZE=1366x768 xvfb-run -s "-screen 0 1366x768x24" \
//       build/tools/attnscope-devtools "[.causal-shots]"
// (ATTNSCOPE_FIXTURE_OUT=DIR also leaves the three model folders in DIR.)
// GPT-2-, Llama- and Gemma-2-shaped folders with small random weights and real tokenizers
// (tests/data/tokenizers), each: the Causal tab with the lens, DLA and head patching, and the
// Lab's knockout shown in Explore.
#include "lab_fixture.h"

#include "controllers/causalcontroller.h"
#include "panels/causalpanel.h"

#include "family_fixtures.h"
#include "fixtures_gemma.h"
#include "gpt2_fixture.h"

#include <QDockWidget>
#include <QGuiApplication>
#include <QLineEdit>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>

using namespace uitest;
using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

std::filesystem::path writeFamily(const std::string& family, const std::filesystem::path& root) {
    const auto dir = root / family;
    std::filesystem::create_directories(dir);
    if (family == "gpt2") {
        writeGpt2TokenizerFolder(dir, kData / "gpt2.json", 41);
        return dir;
    }
    if (family == "llama") {
        LlamaSpec spec;
        spec.vocab = 9295;
        spec.layers = 4;
        spec.tied = true;
        writeCheckpoint(dir, makeLlama(spec, 42));
    } else {
        RmsFamilySpec spec;
        spec.type = "gemma2";
        spec.vocab = 9295;
        spec.layers = 4;
        spec.attnSoftcap = 50;
        spec.finalSoftcap = 30;
        spec.window = 4;
        writeCheckpoint(dir, makeRmsFamily(spec, 43));
    }
    std::filesystem::copy_file(kData / "llama2.json", dir / "tokenizer.json",
                               std::filesystem::copy_options::overwrite_existing);
    return dir;
}

}  // namespace

TEST_CASE_METHOD(LabFixture, "causal screenshots", "[.causal-shots]") {
    const QString out = qEnvironmentVariable("ATTNSCOPE_SHOT_DIR");
    REQUIRE(!out.isEmpty());
    // The window as it first opens on the screen xvfb-run gives (this names the files).
    const QStringList size = qEnvironmentVariable("ATTNSCOPE_SHOT_SIZE", QStringLiteral("1366x768")).split('x');
    REQUIRE(size.size() == 2);
    // As the window first opens on such a screen: 90% of it, the docks at their first widths.
    const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
    window.resize(screen.width() * 9 / 10, screen.height() * 9 / 10);
    window.resizeDocks({window.findChild<QDockWidget*>(QStringLiteral("controlsDock")),
                        window.findChild<QDockWidget*>(QStringLiteral("labDock"))},
                       {260, 300}, Qt::Horizontal);
    // ATTNSCOPE_FIXTURE_OUT keeps the three folders there (for the CLI's lens, dla and patch).
    const QString keep = qEnvironmentVariable("ATTNSCOPE_FIXTURE_OUT");
    const auto root = keep.isEmpty() ? freshDir("causal-shots") : std::filesystem::path(keep.toStdString());
    CausalController* causal = window.causal();
    CausalPanel* cp = causal->panel();
    for (const std::string family : {"gpt2", "llama", "gemma2"}) {
        open(qpath(writeFamily(family, root)));
        runText(QStringLiteral("The capital of France is the city of"));
        cp->idsCheck()->setChecked(true);
        window.tabs()->setCurrentWidget(cp);
        REQUIRE(QTest::qWaitFor([&] { return causal->dlaResult().trace != nullptr; }, 30000));
        // The corrupt input: the clean ids with "France" swapped for another token, as ids (a
        // tokenizer may split another word into more tokens).
        std::vector<std::int64_t> ids = session->trace()->ids();
        ids[ids.size() - 5] = session->model()->encodeText(" Italy").back();
        QStringList corrupt;
        for (auto id : ids) corrupt << QString::number(id);
        cp->corruptEdit()->setText(corrupt.join(QLatin1Char(' ')));
        emit cp->corruptEdit()->editingFinished();
        QSignalSpy patched(causal->service(), &CausalService::patchReady);
        QTest::mouseClick(cp->patchButton(), Qt::LeftButton);
        REQUIRE(patched.wait(60000));
        QTest::qWait(400);
        const QString tag = QString::fromStdString(family) + QLatin1Char('-') + size.join(QLatin1Char('x'));
        window.grab().save(out + QStringLiteral("/causal-") + tag + QStringLiteral(".png"));
        cp->whatCombo()->setCurrentIndex(int(attnscope::PatchWhat::Resid));
        QTest::mouseClick(cp->patchButton(), Qt::LeftButton);
        REQUIRE(patched.wait(60000));
        QTest::qWait(400);
        window.grab().save(out + QStringLiteral("/causal-resid-") + tag + QStringLiteral(".png"));
        cp->whatCombo()->setCurrentIndex(int(attnscope::PatchWhat::Heads));

        // The Lab's knockout: the last query loses the first two keys in every layer.
        window.showExplore();
        const int n = int(session->trace()->ids().size());
        panel->knockoutEdit()->setText(QStringLiteral("%1:0,1@0-1").arg(n - 1));
        QTest::mouseClick(panel->knockoutApplyButton(), Qt::LeftButton);
        waitForRerun();
        // The output change under the Output box: the Controls dock scrolled down to it.
        if (auto* scroll = window.findChild<QDockWidget*>(QStringLiteral("controlsDock"))->findChild<QScrollArea*>())
            scroll->verticalScrollBar()->setValue(scroll->verticalScrollBar()->maximum());
        QTest::qWait(600);
        window.grab().save(out + QStringLiteral("/knockout-") + tag + QStringLiteral(".png"));
        lab->changeView()->grab().save(out + QStringLiteral("/knockout-change-") + tag + QStringLiteral(".png"));
        lab->setKnockoutSpec({});
    }
}
