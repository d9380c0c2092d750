// The Causal tab (issue 32) through the real widgets: the logit-lens grid, DLA and patching maps
// equal core's own calls on the same inputs, a head click opens it in Explore, a model change
// clears the results, the tab refuses encoders and built-in models with the reason, its settings
// and the Lab's knockout survive a workspace round trip, and the Lab's knockout changes the maps
// as core's run does.
#include "lab_fixture.h"

#include "controllers/causalcontroller.h"
#include "figure/workspace.h"
#include "panels/causalpanel.h"
#include "panels/exportdialog.h"
#include "state/viewstate.h"
#include "views/figurecanvas.h"

#include "attnscope/analysis/logit_lens.h"
#include "attnscope/analysis/patching.h"
#include "attnscope/attention/knockout_spec.h"
#include "family_fixtures.h"
#include "fixtures_alibi.h"
#include "fixtures_gemma.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProgressBar>

#include <cmath>

namespace test_causal {

using namespace uitest;
using namespace attnscope::testing;

namespace {

const QString kClean = QStringLiteral("3 17 0 39 22");
const std::vector<std::int64_t> kCleanIds = {3, 17, 0, 39, 22};

struct CausalFixture : LabFixture {
    CausalController* causal = window.causal();
    CausalPanel* panel = causal->panel();

    ~CausalFixture() { causal->shutdown(); }

    void openLlama(const char* name, unsigned seed) {
        const auto dir = freshDir(name);
        writeCheckpoint(dir, makeLlama(LlamaSpec{}, seed));
        open(qpath(dir));
        runText(kClean);
    }

    // Shows the Causal tab (which runs the lens) and waits for the lens and the DLA of the default answer.
    void showCausal() {
        window.tabs()->setCurrentWidget(panel);
        REQUIRE(QTest::qWaitFor([&] { return causal->dlaResult().trace != nullptr; }, 20000));
        REQUIRE(causal->lensResult().trace == causal->dlaResult().trace);
    }

    // Types the corrupt ids, picks what and the method, clicks Patch, waits for the job's end
    // (a result or its one-line refusal).
    void runPatch(const QString& corrupt, attnscope::PatchWhat what, bool attribution) {
        panel->corruptEdit()->setText(corrupt);
        emit panel->corruptEdit()->editingFinished();
        panel->whatCombo()->setCurrentIndex(int(what));
        panel->methodCombo()->setCurrentIndex(attribution ? 1 : 0);
        QSignalSpy done(causal->service(), &CausalService::patchReady);
        QTest::mouseClick(panel->patchButton(), Qt::LeftButton);
        REQUIRE(done.wait(30000));
    }
};

attnscope::RunOptions recorded(std::int64_t position) {
    attnscope::RunOptions run;
    run.recordResiduals = true;
    run.attributionPosition = position;
    return run;
}

}  // namespace

TEST_CASE_METHOD(CausalFixture, "Causal tab on Llama: lens, DLA and patching equal core's; a head click opens Explore",
                 "[ui][causal]") {
    openLlama("ui-causal-llama", 5);
    showCausal();
    const auto model = session->model();
    const auto trace = model->forward(kCleanIds, recorded(4));
    attnscope::LensOptions lensOptions;
    lensOptions.topK = kLensTopK;
    const attnscope::LogitLens lens = attnscope::logitLens(*trace, lensOptions);

    // The grid: every cell's top token (no tokenizer: "#id") and its probability, as core's lens.
    LensView* lensView = panel->lensView();
    REQUIRE(lensView->hasFigure());
    const LensFigure& grid = lensView->figure();
    REQUIRE(grid.rows == lens.rows);
    REQUIRE(grid.cols == 5);
    REQUIRE(grid.k == lens.k);
    for (int r = 0; r < lens.rows; ++r)
        for (int c = 0; c < lens.tokens; ++c)
            for (int k = 0; k < lens.k; ++k) {
                const std::size_t i = std::size_t((r * lens.tokens + c) * lens.k + k);
                CHECK(grid.text(r, c, k) == QStringLiteral("#%1").arg(lens.topIds[i]));
                CHECK(grid.prob(r, c, k) == Approx(std::exp(lens.topLogProbs[i])).epsilon(1e-6));
            }
    CHECK(lensView->cellTip(1, 2).contains(QStringLiteral("#%1").arg(lens.topIds[std::size_t((1 * 5 + 2) * lens.k)])));

    // The answer boxes offer the last row's predictions at P; T and T2 default to the top two.
    const std::size_t last = std::size_t(((lens.rows - 1) * 5 + 4) * lens.k);
    REQUIRE(panel->answer() == lens.topIds[last]);
    REQUIRE(panel->wrong() == lens.topIds[last + 1]);
    const attnscope::LogitAttribution dla =
            attnscope::directLogitAttribution(*trace, lens.topIds[last], lens.topIds[last + 1]);
    const SignedMapFigure& dlaMap = panel->dlaView()->figure();
    REQUIRE(dlaMap.rows == dla.layers);
    REQUIRE(dlaMap.cols == dla.heads);
    for (std::size_t i = 0; i < dla.perHead.size(); ++i) CHECK(dlaMap.values[i] == Approx(dla.perHead[i]).margin(1e-6));
    CHECK(causal->dlaResult().dla.sum == Approx(dla.logitDiff).margin(1e-4));
    CHECK(dlaMap.notes.join(QLatin1Char(' ')).contains(causalNumber(dla.sum)));
    CHECK(dlaMap.bars.front().second == Approx(dla.embed).margin(1e-6));

    // Patching heads, then the residual stream: core's scores on the same pair.
    const QString corrupt = QStringLiteral("3 17 5 39 22");
    attnscope::PatchRequest q;
    q.token = lens.topIds[last];
    q.minus = lens.topIds[last + 1];
    for (auto what : {attnscope::PatchWhat::Heads, attnscope::PatchWhat::Resid}) {
        runPatch(corrupt, what, false);
        INFO(causal->patchResult().error.toStdString());
        REQUIRE(causal->patchResult().error.isEmpty());
        q.what = what;
        const attnscope::PatchResult want = attnscope::activationPatching(*model, kCleanIds, {3, 17, 5, 39, 22}, q);
        const SignedMapFigure& shown = panel->patchView()->figure();
        REQUIRE(shown.rows == want.rows);
        REQUIRE(shown.cols == want.cols);
        for (std::size_t i = 0; i < want.scores.size(); ++i)
            CHECK(shown.values[i] == Approx(want.scores[i]).margin(1e-5));
        CHECK(shown.notes.join(QLatin1Char(' ')).contains(causalNumber(want.ldClean)));
        if (what == attnscope::PatchWhat::Resid) CHECK(shown.colLabels.size() == 5);
    }

    // The undefined case: the same pair gives one line instead of a map.
    runPatch(kClean, attnscope::PatchWhat::Heads, false);
    CHECK_FALSE(panel->patchView()->hasFigure());
    CHECK(panel->patchView()->message().contains(QStringLiteral("same logit difference")));

    // Attribution patching: core's approximation, shown the same way.
    runPatch(corrupt, attnscope::PatchWhat::AttnOut, true);
    q.what = attnscope::PatchWhat::AttnOut;
    q.attribution = true;
    const attnscope::PatchResult approx = attnscope::activationPatching(*model, kCleanIds, {3, 17, 5, 39, 22}, q);
    REQUIRE(panel->patchView()->figure().values.size() == approx.scores.size());
    for (std::size_t i = 0; i < approx.scores.size(); ++i)
        CHECK(panel->patchView()->figure().values[i] == Approx(approx.scores[i]).margin(1e-5));

    // Cancel: a patching job cancelled at once delivers nothing, and the view says so.
    QTest::mouseClick(panel->patchButton(), Qt::LeftButton);
    CHECK(panel->cancelButton()->isEnabled());
    QTest::mouseClick(panel->cancelButton(), Qt::LeftButton);
    causal->service()->waitForWorkers();
    QTest::qWait(50);
    CHECK(panel->statusLabel()->text() == QStringLiteral("Cancelled."));
    CHECK_FALSE(panel->patchView()->hasFigure());
    CHECK(panel->patchView()->message().contains(QStringLiteral("cancelled")));
    CHECK_FALSE(panel->cancelButton()->isEnabled());

    // A head of the DLA map opens in Explore.
    QTest::mouseClick(panel->dlaView()->canvas(), Qt::LeftButton, {}, panel->dlaView()->cellCenter(1, 2).toPoint());
    CHECK(window.state()->layer() == 1);
    CHECK(window.state()->head() == 2);
    CHECK(window.tabs()->currentIndex() == 0);
    waitForMap(session->trace()->map(0, 1, 2));
}

TEST_CASE_METHOD(CausalFixture, "Causal results clear on a model change; encoders and built-ins disable the tab",
                 "[ui][causal]") {
    openLlama("ui-causal-clear", 7);
    showCausal();
    CHECK(panel->runButton()->isEnabled());

    // A BERT folder: an encoder, refused with the reason (shown, and as the actions' tooltip).
    const auto bert = freshDir("ui-causal-bert");
    writeCheckpoint(bert, makeBert(BertSpec{}, 8));
    open(qpath(bert));
    CHECK_FALSE(panel->lensView()->hasFigure());
    CHECK_FALSE(panel->dlaView()->hasFigure());
    CHECK(causal->lensResult().trace == nullptr);
    CHECK_FALSE(causal->applicable());
    CHECK_FALSE(panel->runButton()->isEnabled());
    CHECK_FALSE(panel->patchButton()->isEnabled());
    CHECK(panel->runButton()->toolTip().contains(QStringLiteral("is an encoder")));
    CHECK(panel->reasonLabel()->isVisible());
    CHECK(panel->reasonLabel()->text().contains(QStringLiteral("decoder-only language model")));

    // Post-norm OPT: the lens applies, DLA is refused with core's one line.
    OptSpec post;
    post.preNorm = false;
    const auto opt = freshDir("ui-causal-opt-post");
    writeCheckpoint(opt, makeOpt(post, 10));
    open(qpath(opt));
    runText(kClean);
    REQUIRE(QTest::qWaitFor([&] { return causal->lensResult().trace != nullptr; }, 20000));
    CHECK(panel->lensView()->hasFigure());
    REQUIRE(QTest::qWaitFor([&] { return panel->dlaView()->message().contains(QStringLiteral("post-norm")); }, 20000));
    CHECK_FALSE(panel->dlaView()->hasFigure());

    // A built-in model: refused from its info.
    open(QStringLiteral("builtin:reverse-dot"));
    CHECK_FALSE(panel->runButton()->isEnabled());
    CHECK(panel->runButton()->toolTip().contains(QStringLiteral("built-in")));

    // Back to a decoder: enabled again, and the tab (shown) runs the new model's lens.
    openLlama("ui-causal-back", 9);
    CHECK(panel->runButton()->isEnabled());
    REQUIRE(QTest::qWaitFor(
            [&] { return causal->lensResult().trace && causal->lensResult().trace->ids() == kCleanIds; }, 20000));
    CHECK(panel->lensView()->hasFigure());
}

TEST_CASE_METHOD(CausalFixture, "The Lab's knockout re-runs the model as core's run does", "[ui][causal][knockout]") {
    openLlama("ui-knockout-llama", 11);
    const auto base = session->trace();
    LabPanel* lp = lab->panel();
    lp->knockoutEdit()->setText(QStringLiteral("2:0"));
    QTest::mouseClick(lp->knockoutApplyButton(), Qt::LeftButton);
    CHECK(lp->knockoutLabel()->text().contains(QStringLiteral("is not QUERIES:KEYS@LAYERS")));
    CHECK(lab->shownTrace() == base);

    lp->knockoutEdit()->setText(QStringLiteral("4,3:0,1@0-1"));
    QTest::mouseClick(lp->knockoutApplyButton(), Qt::LeftButton);
    waitForRerun();
    attnscope::RunOptions run;
    run.knockouts = attnscope::parseKnockouts("4,3:0,1@0-1");
    const auto expected = session->model()->forward(kCleanIds, run);
    const auto shown = lab->shownTrace();
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h) {
            const auto a = shown->map(0, l, h), b = expected->map(0, l, h);
            CHECK(a.values == b.values);
            CHECK(a.at(4, 0) == 0.0f);
            CHECK(a.at(3, 1) == 0.0f);
        }
    requireSameChange(attnscope::rerun(*session->model(), *base, run, 5).change);
    CHECK(lab->changeView()->text().contains(QStringLiteral("knockout 4,3:0,1@0-1")));
    head->setValue(1);
    waitForMap(expected->map(0, 0, 1));

    // An out-of-range knockout: core's refusal in the dock.
    lp->knockoutEdit()->setText(QStringLiteral("1:0,1@0"));
    QTest::mouseClick(lp->knockoutApplyButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return lp->knockoutLabel()->text().contains(QStringLiteral("no key")); }, 20000));
}

TEST_CASE_METHOD(CausalFixture, "Causal settings and the Lab's knockout survive a workspace round trip",
                 "[ui][causal][workspace]") {
    openLlama("ui-causal-ws", 13);
    showCausal();
    panel->corruptEdit()->setText(QStringLiteral("3 17 5 39 22"));
    panel->positionSpin()->setValue(3);
    REQUIRE(QTest::qWaitFor([&] { return causal->dlaResult().trace && causal->lensResult().position == 3; }, 20000));
    panel->setAnswer(7);
    emit panel->answerCombo()->lineEdit()->editingFinished();
    panel->setWrong(std::nullopt);
    panel->whatCombo()->setCurrentIndex(int(attnscope::PatchWhat::MlpOut));
    panel->methodCombo()->setCurrentIndex(1);
    lab->panel()->knockoutEdit()->setText(QStringLiteral("4:0@1"));
    QTest::mouseClick(lab->panel()->knockoutApplyButton(), Qt::LeftButton);
    waitForRerun();

    const auto path = freshDir("ui-causal-ws-file") / "causal.attnscope";
    REQUIRE(window.saveWorkspaceFile(qpath(path)));
    const Workspace saved = readWorkspace(qpath(path));
    CHECK(saved.causal.corrupt == QStringLiteral("3 17 5 39 22"));
    CHECK(saved.causal.position == 3);
    CHECK(saved.causal.answer == std::optional<std::int64_t>(7));
    CHECK_FALSE(saved.causal.wrong);
    CHECK(saved.causal.what == QStringLiteral("mlp_out"));
    CHECK(saved.causal.attribution);
    CHECK(saved.lab.knockout == QStringLiteral("4:0@1"));
    CHECK(saved.view.tab == QStringLiteral("causal"));
    // The ViewState holds them too (its workspace is the same serialisation).
    CHECK(window.state()->tabSettings().causal.what == QStringLiteral("mlp_out"));
    CHECK(window.state()->tabSettings().causal.answer == std::optional<std::int64_t>(7));
    CHECK(window.state()->tabSettings().lab.knockout == QStringLiteral("4:0@1"));

    // Change everything, then open the file: the settings come back and the lens runs again at P = 3.
    window.state()->setTabSetting(&ViewState::TabSettings::causal, Workspace::Causal{});
    CHECK(panel->corruptEdit()->text().isEmpty());  // the panel follows the state
    lab->setKnockoutSpec({});
    QSignalSpy restored(&window, &MainWindow::workspaceRestored);
    REQUIRE(window.openWorkspaceFile(qpath(path)));
    REQUIRE(restored.wait(30000));
    CHECK(panel->corruptEdit()->text() == QStringLiteral("3 17 5 39 22"));
    CHECK(panel->positionSpin()->value() == 3);
    CHECK(panel->answer() == std::optional<std::int64_t>(7));
    CHECK(panel->what() == attnscope::PatchWhat::MlpOut);
    CHECK(panel->attribution());
    CHECK(lab->knockoutSpec() == QStringLiteral("4:0@1"));
    REQUIRE(QTest::qWaitFor([&] { return causal->lensResult().trace && causal->lensResult().position == 3; }, 20000));

    // Files: one without the causal section (as written before it) loads with the defaults; a bad
    // knockout is refused naming its field.
    Workspace plain;
    plain.model = QStringLiteral("builtin:reverse-dot");
    QJsonObject o = QJsonDocument::fromJson(workspaceJson(plain)).object();
    o.remove(QStringLiteral("causal"));
    const Workspace v2 = parseWorkspace(QJsonDocument(o).toJson(), QStringLiteral("v2.attnscope"));
    CHECK(v2.causal.position == -1);
    CHECK(v2.causal.what == QStringLiteral("heads"));
    CHECK(v2.lab.knockout.isEmpty());
    QJsonObject labSection = o.value(QStringLiteral("lab")).toObject();
    labSection.insert(QStringLiteral("knockout"), QStringLiteral("2:0"));
    o.insert(QStringLiteral("lab"), labSection);
    CHECK_THROWS_WITH(parseWorkspace(QJsonDocument(o).toJson(), QStringLiteral("bad.attnscope")),
                      Catch::Contains("lab.knockout") && Catch::Contains("is not QUERIES:KEYS@LAYERS"));
}

TEST_CASE_METHOD(CausalFixture, "The Causal tab's settings are the state's: the panel writes them and follows them",
                 "[ui][causal][workspace]") {
    openLlama("ui-causal-follow", 9);
    showCausal();
    ViewState* state = window.state();
    // The user's changes in the panel are requested of the state.
    panel->corruptEdit()->setFocus();
    QTest::keyClicks(panel->corruptEdit(), QStringLiteral("3 17 5 39 22"));
    QTest::keyClick(panel->corruptEdit(), Qt::Key_Return);
    CHECK(state->tabSettings().causal.corrupt == QStringLiteral("3 17 5 39 22"));
    panel->whatCombo()->setCurrentIndex(int(attnscope::PatchWhat::Resid));
    CHECK(state->tabSettings().causal.what == QStringLiteral("resid"));
    panel->positionSpin()->setValue(2);
    CHECK(state->tabSettings().causal.position == 2);

    // A change made in the state reaches the panel, clears the old results and runs the lens again
    // (the tab is shown) at the new position.
    Workspace::Causal c = state->tabSettings().causal;
    c.corrupt = QStringLiteral("1 2 3 4 5");
    c.position = 4;
    c.what = QStringLiteral("attn_out");
    c.attribution = true;
    state->setTabSetting(&ViewState::TabSettings::causal, c);
    CHECK(panel->corruptEdit()->text() == QStringLiteral("1 2 3 4 5"));
    CHECK(panel->positionSpin()->value() == 4);
    CHECK(panel->what() == attnscope::PatchWhat::AttnOut);
    CHECK(panel->attribution());
    CHECK(state->tabSettings().causal.position == 4);  // the state keeps what the panel took
    REQUIRE(QTest::qWaitFor([&] { return causal->lensResult().trace && causal->lensResult().position == 4; }, 20000));
    // Another section's change leaves the panel alone.
    panel->corruptEdit()->setText(QStringLiteral("9 9 9 9 9"));  // not yet requested (no editing finished)
    Workspace::ModelView m = state->tabSettings().modelView;
    m.descending = !m.descending;
    state->setTabSetting(&ViewState::TabSettings::modelView, m);
    CHECK(panel->corruptEdit()->text() == QStringLiteral("9 9 9 9 9"));
}

TEST_CASE_METHOD(CausalFixture, "Causal figures export as PDF, SVG and PNG; Gemma-2's lens and DLA run",
                 "[ui][causal][export]") {
    RmsFamilySpec spec;
    spec.type = "gemma2";
    spec.attnSoftcap = 50;
    spec.window = 4;
    spec.finalSoftcap = 30;
    const auto dir = freshDir("ui-causal-gemma2");
    writeCheckpoint(dir, makeRmsFamily(spec, 17));
    open(qpath(dir));
    runText(kClean);
    showCausal();
    CHECK(causal->dlaResult().dla.sum == Approx(causal->dlaResult().dla.logitDiff).margin(1e-4));
    const auto out = freshDir("ui-causal-export");
    for (const char* name : {"lens.pdf", "lens.svg", "lens.png"}) {
        const QString path = qpath(out / name);
        writePainted(path, panel->lensView()->exportable(), 6.75, 100);
        CHECK(QFileInfo(path).size() > 500);
    }
    writePainted(qpath(out / "dla.png"), panel->dlaView()->exportable(), 6.75, 100);
    // The Export… buttons open the export dialog on the same painted figure.
    QTest::mouseClick(panel->lensView()->findChild<QPushButton*>(QStringLiteral("causalLensExport")), Qt::LeftButton);
    auto* dialog = window.findChild<ExportDialog*>(QStringLiteral("exportCausalDialog"));
    REQUIRE(dialog);
    dialog->setPath(qpath(out / "dialog.svg"));
    REQUIRE(dialog->exportNow());
    CHECK(QFileInfo(qpath(out / "dialog.svg")).size() > 500);
    dialog->close();
    const QImage png(qpath(out / "dla.png"));
    CHECK(png.width() == 675);
}

}  // namespace test_causal
