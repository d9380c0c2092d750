// The Long context tab (issue 33) through the real widgets: a needle scan on the hand-weighted
// copying GPT-2 shows core's success and retrieval maps, a head's generated rows equal a forward's
// with the needle's keys marked, Cancel drops a scan, bad grids are refused with one line; the
// eviction what-if on a GQA Llama equals core's (tokens, KL per step, kept keys over the map) and
// its figures export; the tab's settings are the ViewState's and come back from a workspace file.
#include "window_fixture.h"

#include "layout_checks.h"

#include "controllers/longcontroller.h"
#include "figure/workspace.h"
#include "panels/exportdialog.h"
#include "panels/longpanel.h"
#include "state/viewstate.h"
#include "views/figurecanvas.h"
#include "views/headmetricmap.h"
#include "views/heatmapview.h"

#include "attnscope/analysis/kv_eviction.h"
#include "attnscope/analysis/needle.h"
#include "family_fixtures.h"
#include "needle_fixture.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTabWidget>

namespace test_long {

using namespace uitest;
using namespace attnscope::testing;

namespace {

struct LongFixture : WindowFixture {
    LongController* controller = window.longContext();
    LongPanel* panel = controller->panel();

    ~LongFixture() { controller->shutdown(); }

    void setText(QLineEdit* edit, const QString& text) {
        edit->setText(text);
        emit edit->textEdited(text);
    }

    // The hand-weighted copying GPT-2 (needle_fixture.h) in a new folder, an input run, this tab shown.
    void openCopying(const std::string& name) {
        const auto dir = freshDir(name);
        writeCopyingGpt2(dir);
        open(qpath(dir));
        runText(QStringLiteral("0 1 2 10 11 12 13 3 4 10"));
        window.tabs()->setCurrentWidget(panel);
    }

    // The copying model's grid (core's test_needle.cpp): 40 haystack ids 0-9, needle 10 11 12 13.
    void typeGrid(const QString& lengths) {
        QStringList hay;
        for (int i = 0; i < 40; ++i) hay << QString::number(i % 10);
        panel->haystackEdit()->setPlainText(hay.join(QLatin1Char(' ')));
        setText(panel->needleEdit(), QStringLiteral("10 11 12 13"));
        setText(panel->questionEdit(), QStringLiteral("10"));
        setText(panel->answerEdit(), QStringLiteral("11 12 13"));
        setText(panel->lengthsEdit(), lengths);
        setText(panel->depthsEdit(), QStringLiteral("0, 0.5, 1"));
        panel->scanTokensSpin()->setValue(3);
    }

    attnscope::NeedleOptions coreGrid() const {
        attnscope::NeedleOptions o;
        for (int i = 0; i < 40; ++i) o.haystack.push_back(i % 10);
        o.needle = {10, 11, 12, 13};
        o.question = {10};
        o.answer = {11, 12, 13};
        o.lengths = {12, 24};
        o.depths = {0.0, 0.5, 1.0};
        o.newTokens = 3;
        o.endToken = attnscope::endTokenOf(*session->model());
        return o;
    }

    // The rows the long map shows now must be those of a forward over the run's ids.
    void requireRows(const attnscope::NeedleOptions& o, const attnscope::NeedleRun& run, int layer, int headIndex) {
        REQUIRE(QTest::qWaitFor(
                [&] {
                    const auto& r = controller->rowsResult();
                    return r.trace && r.layer == layer && r.head == headIndex &&
                           !panel->longMap()->map().values.empty();
                },
                20000));
        std::int64_t start = 0;
        std::vector<std::int64_t> ids = attnscope::needleContext(o, run.length, run.depth, start);
        const auto p = static_cast<int>(ids.size());
        ids.insert(ids.end(), run.generated.begin(), run.generated.end());
        const attnscope::HeadMap full = session->model()->forward(ids)->map(0, layer, headIndex);
        const attnscope::HeadMap& shown = panel->longMap()->map();
        const auto T = static_cast<int>(run.generated.size());
        REQUIRE(shown.rows == T);
        REQUIRE(shown.cols == int(ids.size()));
        for (int t = 0; t < T; ++t)
            for (int j = 0; j < shown.cols; ++j) CHECK(shown.at(t, j) == Approx(full.at(p - 1 + t, j)).margin(1e-5));
        const std::vector<float>& marks = controller->keyMarks();
        REQUIRE(marks.size() == ids.size());
        for (int j = 0; j < shown.cols; ++j)
            CHECK(marks[std::size_t(j)] == (j >= run.needleStart && j < run.needleStart + 4 ? 1.0f : 0.0f));
    }
};

}  // namespace

TEST_CASE_METHOD(LongFixture, "Long context tab: a needle scan shows core's maps; a head click shows its rows",
                 "[ui][long]") {
    openCopying("ui-long-copying");
    REQUIRE(controller->applicable());
    REQUIRE(panel->idsCheck()->isChecked());  // no tokenizer: the pieces are ids

    // A bad grid: one line from the tab, nothing run; one the core refuses: its line.
    typeGrid(QStringLiteral("12, x"));
    QTest::mouseClick(panel->scanButton(), Qt::LeftButton);
    CHECK(panel->scanStatus()->text() == QStringLiteral("Lengths: 'x' is not a whole number"));
    typeGrid(QStringLiteral("12, 50"));
    QSignalSpy scanned(controller->service(), &LongService::scanReady);
    QTest::mouseClick(panel->scanButton(), Qt::LeftButton);
    REQUIRE(scanned.wait(20000));
    CHECK(panel->scanStatus()->text() ==
          QStringLiteral("The scan failed: --lengths: 50 needs 46 haystack ids, the haystack has 40"));
    CHECK(controller->scanResult().result.runs.empty());

    // Cancel: the scan's result is dropped, the buttons are back.
    typeGrid(QStringLiteral("12, 24"));
    QTest::mouseClick(panel->scanButton(), Qt::LeftButton);
    CHECK(panel->scanCancelButton()->isEnabled());
    QTest::mouseClick(panel->scanCancelButton(), Qt::LeftButton);
    QTest::qWait(300);
    controller->service()->waitForWorkers();
    QTest::qWait(50);
    CHECK(panel->scanStatus()->text() == QStringLiteral("Cancelled."));
    CHECK_FALSE(panel->scanCancelButton()->isEnabled());
    CHECK(controller->scanResult().result.runs.empty());

    // The scan: core's success per run and retrieval per head.
    scanned.clear();
    QTest::mouseClick(panel->scanButton(), Qt::LeftButton);
    REQUIRE(scanned.wait(20000));
    const attnscope::NeedleOptions o = coreGrid();
    const attnscope::NeedleResult expected = attnscope::needleScan(*session->model(), o);
    const attnscope::NeedleResult& shown = controller->scanResult().result;
    REQUIRE(shown.runs.size() == expected.runs.size());
    const attnscope::HeadMap& success = panel->successMap()->map();
    REQUIRE(success.rows == 3);  // depths
    REQUIRE(success.cols == 2);  // lengths
    for (std::size_t i = 0; i < expected.runs.size(); ++i) {
        CHECK(shown.runs[i].generated == expected.runs[i].generated);
        CHECK(success.at(int(i % 3), int(i / 3)) == (expected.runs[i].success ? 1.0f : 0.0f));
    }
    HeadMetricMap* heads = panel->retrievalMap();
    REQUIRE(heads->layers() == 1);
    REQUIRE(heads->heads() == 2);
    CHECK(heads->value(0, 0) == Approx(expected.retrieval[0]).margin(1e-12));
    CHECK(heads->value(0, 0) == Approx(0.75).margin(1e-12));
    CHECK(heads->value(0, 1) == 0.0);
    CHECK(panel->scanStatus()->text().startsWith(QStringLiteral("6 of 6 runs retrieved the needle; strongest "
                                                                "retrieval head L0 H0 (0.75)")));

    // The strongest head's rows on the first run that retrieved the needle, the needle marked.
    CHECK(panel->runCombo()->currentIndex() == 0);
    requireRows(o, expected.runs[0], 0, 0);
    CHECK(panel->longMap()->zoom().colBegin() == 0);
    // A click on head 1 shows its rows (the same run); another run shows that run's.
    QTest::mouseClick(heads, Qt::LeftButton, {}, heads->cellRect(0, 1).center());
    requireRows(o, expected.runs[0], 0, 1);
    panel->runCombo()->setCurrentIndex(4);  // L 24, depth 0.5: the needle at 10..13
    requireRows(o, expected.runs[4], 0, 1);
    CHECK(panel->longMap()->title().contains(QStringLiteral("the needle at 10–13")));

    // The figures export (the success and retrieval maps as the CLI's niah.pdf / retrieval.pdf).
    const auto out = freshDir("ui-long-export");
    for (int which : {int(LongPanel::Success), int(LongPanel::Retrieval), int(LongPanel::LongMap)}) {
        ExportDialog* dialog = controller->exportFigure(which);
        REQUIRE(dialog);
        const QString path = qpath(out / ("long" + std::to_string(which) + ".png"));
        dialog->setPath(path);
        clickSave(dialog);
        CHECK(QFileInfo(path).size() > 0);
    }
}

TEST_CASE_METHOD(LongFixture, "Long context tab: the eviction what-if equals core's, kept keys over the map",
                 "[ui][long]") {
    const auto dir = freshDir("ui-long-llama");
    writeCheckpoint(dir, makeLlama(LlamaSpec{}, 7));  // 2 layers, 4 heads over 2 kv heads
    open(qpath(dir));
    QStringList typed;
    std::vector<std::int64_t> ids;
    for (int i = 0; i < 30; ++i) {
        ids.push_back((i * 7 + 3) % 48);
        typed << QString::number(ids.back());
    }
    runText(typed.join(QLatin1Char(' ')));
    window.tabs()->setCurrentWidget(panel);
    REQUIRE(controller->applicable());

    // A budget that cannot hold the window: core's refusal, nothing run.
    panel->policyCombo()->setCurrentIndex(1);  // SnapKV
    panel->budgetSpin()->setValue(8);
    panel->windowSpin()->setValue(10);
    QTest::mouseClick(panel->evictButton(), Qt::LeftButton);
    CHECK(panel->evictStatus()->text() == QStringLiteral("--budget 8 cannot hold the 10 window keys (--window)"));
    CHECK(controller->evictResult().result.tokensFull.empty());

    panel->windowSpin()->setValue(4);
    panel->kernelSpin()->setValue(3);
    panel->budgetSpin()->setValue(12);
    panel->evictTokensSpin()->setValue(6);
    QSignalSpy done(controller->service(), &LongService::evictReady);
    QTest::mouseClick(panel->evictButton(), Qt::LeftButton);
    REQUIRE(done.wait(30000));
    attnscope::EvictionOptions o;
    o.policy = attnscope::EvictionPolicy::SnapKV;
    o.budget = 12;
    o.window = 4;
    o.kernel = 3;
    o.newTokens = 6;
    const attnscope::EvictionResult expected = attnscope::evictionWhatIf(*session->model(), ids, o);
    const attnscope::EvictionResult& shown = controller->evictResult().result;
    CHECK(shown.tokensFull == expected.tokensFull);
    CHECK(shown.tokensEvicted == expected.tokensEvicted);
    CHECK(shown.firstDifference == expected.firstDifference);
    CHECK(shown.agreement == expected.agreement);
    const EvictionFigure& figure = controller->evictionFigure();
    REQUIRE(figure.kl.size() == expected.klPerStep.size());
    for (std::size_t t = 0; t < figure.kl.size(); ++t) {
        CHECK(figure.kl[t] == Approx(expected.klPerStep[t]).margin(1e-9));
        CHECK(figure.same[t] == (expected.tokensFull[t] == expected.tokensEvicted[t]));
    }
    CHECK(panel->evictionCanvas()->isVisible());
    CHECK(panel->settingsTabs()->currentIndex() == 1);  // the figure is on the what-if's page

    // Layer 1 head 3 (kv head 1): the prompt's map with that kv head's kept keys.
    panel->layerSpin()->setValue(1);
    panel->headSpin()->setValue(3);
    CHECK(panel->mapWhatCombo()->currentIndex() == 1);
    const attnscope::HeadMap prompt = session->model()->forward(ids)->map(0, 1, 3);
    REQUIRE(QTest::qWaitFor([&] { return !panel->longMap()->map().values.empty(); }, 20000));
    const attnscope::HeadMap& map = panel->longMap()->map();
    REQUIRE(map.rows == 30);
    REQUIRE(map.cols == 30);
    for (std::size_t i = 0; i < map.values.size(); ++i) CHECK(map.values[i] == Approx(prompt.values[i]).margin(1e-5));
    const std::vector<float>& marks = controller->keyMarks();
    REQUIRE(marks.size() == 30);
    int kept = 0;
    for (int j = 0; j < 30; ++j) {
        const bool k = expected.selection.kept[std::size_t((1 * 2 + 1) * 30 + j)] != 0;
        CHECK(marks[std::size_t(j)] == (k ? 1.0f : 0.0f));
        kept += k ? 1 : 0;
    }
    CHECK(kept == 12);
    CHECK(panel->longMap()->title().contains(QStringLiteral("12 of 30 prompt keys kept")));

    // The figures export; a new main input makes the what-if out of date.
    const auto out = freshDir("ui-long-evict-export");
    for (int which : {int(LongPanel::Eviction), int(LongPanel::LongMap)}) {
        ExportDialog* dialog = controller->exportFigure(which);
        REQUIRE(dialog);
        const QString path = qpath(out / ("evict" + std::to_string(which) + ".pdf"));
        dialog->setPath(path);
        clickSave(dialog);
        CHECK(QFileInfo(path).size() > 0);
    }
    runText(QStringLiteral("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16"));
    CHECK(controller->evictResult().result.tokensFull.empty());
    CHECK_FALSE(panel->evictionCanvas()->isVisible());
}

TEST_CASE_METHOD(LongFixture, "Long context tab: its settings are the state's and survive a workspace round trip",
                 "[ui][long][workspace]") {
    const auto dir = freshDir("ui-long-ws");
    writeCopyingGpt2(dir);
    open(qpath(dir));
    window.tabs()->setCurrentWidget(panel);
    ViewState* state = window.state();
    // The user's changes in the panel are the state's.
    typeGrid(QStringLiteral("12, 24"));
    panel->policyCombo()->setCurrentIndex(1);  // SnapKV
    panel->budgetSpin()->setValue(20);
    panel->windowSpin()->setValue(6);
    panel->kernelSpin()->setValue(3);
    panel->evictTokensSpin()->setValue(7);
    const Workspace::LongContext& s = state->tabSettings().longContext;
    CHECK(s.needle == QStringLiteral("10 11 12 13"));
    CHECK(s.lengths == QStringLiteral("12, 24"));
    CHECK(s.depths == QStringLiteral("0, 0.5, 1"));
    CHECK(s.scanTokens == 3);
    CHECK(s.ids);
    CHECK(s.policy == QStringLiteral("snapkv"));
    CHECK(s.budget == 20);
    CHECK(s.window == 6);
    CHECK(s.kernel == 3);
    CHECK(s.evictTokens == 7);

    const auto path = freshDir("ui-long-ws-file") / "long.attnscope";
    REQUIRE(window.saveWorkspaceFile(qpath(path)));
    const Workspace saved = readWorkspace(qpath(path));
    CHECK(saved.longContext.haystack == panel->haystackEdit()->toPlainText());
    CHECK(saved.longContext.answer == QStringLiteral("11 12 13"));
    CHECK(saved.longContext.policy == QStringLiteral("snapkv"));
    CHECK(saved.longContext.window == 6);
    CHECK(saved.view.tab == QStringLiteral("long"));

    // Another setting in the state reaches the panel; opening the file brings the saved ones back.
    Workspace::LongContext other;
    other.policy = QStringLiteral("streaming");
    other.sinks = 2;
    state->setTabSetting(&ViewState::TabSettings::longContext, other);
    CHECK(panel->needleEdit()->text().isEmpty());
    CHECK(panel->policy() == attnscope::EvictionPolicy::Streaming);
    CHECK(panel->sinksSpin()->value() == 2);
    window.tabs()->setCurrentIndex(0);
    QSignalSpy restored(&window, &MainWindow::workspaceRestored);
    REQUIRE(window.openWorkspaceFile(qpath(path)));
    REQUIRE(restored.wait(30000));
    CHECK(panel->haystackEdit()->toPlainText() == saved.longContext.haystack);
    CHECK(panel->needleEdit()->text() == QStringLiteral("10 11 12 13"));
    CHECK(panel->questionEdit()->text() == QStringLiteral("10"));
    CHECK(panel->lengthsEdit()->text() == QStringLiteral("12, 24"));
    CHECK(panel->scanTokensSpin()->value() == 3);
    CHECK(panel->policy() == attnscope::EvictionPolicy::SnapKV);
    CHECK(panel->budgetSpin()->value() == 20);
    CHECK(panel->windowSpin()->value() == 6);
    CHECK(panel->kernelSpin()->value() == 3);
    CHECK(panel->sinksSpin()->value() == 4);
    CHECK(panel->evictTokensSpin()->value() == 7);
    CHECK(window.tabs()->currentWidget() == panel);

    // The defaults are not written (a file of a window that never used the tab reads as before);
    // a bad value is refused naming its field.
    Workspace plain;
    plain.model = QStringLiteral("builtin:reverse-dot");
    QJsonObject o = QJsonDocument::fromJson(workspaceJson(plain)).object();
    CHECK_FALSE(o.contains(QStringLiteral("long")));
    o.insert(QStringLiteral("long"), QJsonObject{{QStringLiteral("policy"), QStringLiteral("lru")}});
    CHECK_THROWS_WITH(parseWorkspace(QJsonDocument(o).toJson(), QStringLiteral("bad.attnscope")),
                      Catch::Contains("long.policy: unknown 'lru' (use h2o, snapkv, streaming)"));
    o.insert(QStringLiteral("long"), QJsonObject{{QStringLiteral("kernel"), 0}});
    CHECK_THROWS_WITH(parseWorkspace(QJsonDocument(o).toJson(), QStringLiteral("bad.attnscope")),
                      Catch::Contains("long.kernel: 0 is out of range (1 to 101)"));
}

// At 1366 x 768 with every dock open the tab's stacked settings took 360 of its ~680 px: the
// figures' titles and the map bar were cut and the long map got ~300 px. The settings are now
// two pages of a narrow column; nothing in the tab is cut, and the long map is its largest view.
TEST_CASE_METHOD(LongFixture, "Long context tab fits a laptop with every dock open: nothing cut, the long map largest",
                 "[ui][long][layout]") {
    openCopying("ui-long-layout");
    typeGrid(QStringLiteral("12, 24"));
    QSignalSpy scanned(controller->service(), &LongService::scanReady);
    QTest::mouseClick(panel->scanButton(), Qt::LeftButton);
    REQUIRE(scanned.wait(20000));
    REQUIRE(controller->scanResult().result.runs.size() == 6);
    showEveryDock(window);
    window.tabs()->setCurrentWidget(panel);
    for (const QSize size : {QSize(1280, 720), QSize(1366, 768)}) {
        window.resize(size);
        for (int page : {0, 1}) {
            panel->showPage(page);
            QTest::qWait(60);
            INFO(size.width() << " x " << size.height() << ", settings page " << page);
            // The page's fields fit its column (the column never scrolls sideways).
            auto* scroll = qobject_cast<QScrollArea*>(panel->settingsTabs()->currentWidget());
            REQUIRE(scroll);
            INFO("page needs " << scroll->widget()->minimumSizeHint().width() << " px, has "
                               << scroll->viewport()->width());
            CHECK(scroll->widget()->minimumSizeHint().width() <= scroll->viewport()->width());
            // Each shown figure's Export button lies within the tab, and its title is not cut.
            for (int which = 0; which < 4; ++which) {
                QPushButton* button = panel->exportButton(which);
                if (!button->isVisible()) continue;
                const QRect r(button->mapTo(panel, QPoint(0, 0)), button->size());
                INFO("export button " << which << " at " << r.left() << ".." << r.right() << " of " << panel->width());
                CHECK(r.left() >= 0);
                CHECK(r.right() < panel->width());
                for (QLabel* title : button->parentWidget()->findChildren<QLabel*>(Qt::FindDirectChildrenOnly)) {
                    if (!title->text().startsWith(QStringLiteral("<b>"))) continue;
                    INFO("title " << title->text().toStdString() << ": " << title->width() << " x " << title->height());
                    CHECK(title->height() >= title->heightForWidth(title->width()));
                }
            }
        }
        // The long map: most of the tab's width, and larger than either of the scan's maps.
        const auto area = [](const QWidget* w) { return w->width() * w->height(); };
        INFO("long map " << panel->longMap()->width() << " x " << panel->longMap()->height() << " in a tab "
                         << panel->width() << " px wide; success " << panel->successMap()->width() << " x "
                         << panel->successMap()->height() << ", retrieval " << panel->retrievalMap()->width() << " x "
                         << panel->retrievalMap()->height());
        CHECK(panel->longMap()->width() * 100 >= panel->width() * 60);
        CHECK(area(panel->longMap()) > area(panel->successMap()));
        CHECK(area(panel->longMap()) > area(panel->retrievalMap()));
    }
    // Picking the what-if's map below shows the what-if's page (its settings and figure).
    panel->showPage(0);
    emit panel->mapWhatCombo()->activated(1);
    CHECK(panel->settingsTabs()->currentIndex() == 1);
}

}  // namespace test_long
