// The window as a whole (issue 29): it fits a 1280×720 screen with every dock open on a
// 12-layer × 12-head model, the heat map gets most of the space, and after a model change every
// view shows the new model or is cleared. Help lists every shortcut; closing asks to save.
#include "layout_checks.h"
#include "views_fixture.h"

#include "controllers/generatecontroller.h"
#include "controllers/labcontroller.h"
#include "controllers/modelviewcontroller.h"
#include "gpt2_fixture.h"
#include "panels/devicecombo.h"
#include "panels/exportdialog.h"
#include "panels/generatepanel.h"
#include "panels/labpanel.h"
#include "panels/metricspanel.h"
#include "panels/modelviewpanel.h"
#include "state/viewstate.h"
#include "window/focusring.h"

#include <QDialog>
#include <QDir>
#include <QSettings>
#include <QLabel>
#include <QLayout>
#include <QMenu>
#include <QMenuBar>
#include <QScrollArea>
#include <QScrollBar>

#include <cstdlib>

namespace test_window_layout {

using namespace uitest;
namespace fs = std::filesystem;

namespace {

// The minimum with each central tab shown in turn: the widest page decides what fits.
int widestTabMinimum(MainWindow& window) {
    int widest = 0;
    for (int i = 0; i < window.tabs()->count(); ++i) {
        window.tabs()->setCurrentIndex(i);
        QTest::qWait(20);
        widest = std::max(widest, window.layout()->totalMinimumSize().width());
    }
    window.tabs()->setCurrentIndex(0);
    return widest;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "The window fits 1280x720 with every dock open, on a 12x12 model and after switching",
                 "[ui][window][layout]") {
    open(qpath(gpt2TwelveByTwelve()));
    REQUIRE(session->model()->info().heads == 12);
    showEveryDock(window);
    const QSize twelve = windowMinimum(window);
    std::string parts;  // what asks for the width, when it is too wide
    for (QDockWidget* d : window.findChildren<QDockWidget*>())
        parts += d->objectName().toStdString() + " " + std::to_string(d->minimumSizeHint().width()) + "; ";
    parts += "central " + std::to_string(window.centralWidget()->minimumSizeHint().width()) + ":";
    for (int i = 0; i < window.tabs()->count(); ++i)
        parts += " " + std::to_string(window.tabs()->widget(i)->minimumSizeHint().width());
    INFO("minimum on the 12x12 model: " << twelve.width() << "x" << twelve.height() << " (" << parts << ")");
    CHECK(twelve.width() <= 1280);
    CHECK(twelve.height() <= 720);
    // Showing another tab (Compare's three maps, the Model view) does not widen the window.
    const int widest = widestTabMinimum(window);
    INFO("widest minimum over the central tabs: " << widest);
    CHECK(widest == twelve.width());

    // Other models do not make it wider (it grew with every switch before).
    open(QStringLiteral("builtin:reverse-dot"));
    open(qpath(gpt2TwelveByTwelve()));
    showEveryDock(window);
    const QSize again = windowMinimum(window);
    INFO("after two switches: " << again.width() << "x" << again.height());
    CHECK(again.width() <= twelve.width());
    CHECK(again.height() <= 720);

    // At a 1366x768 laptop's size the heat map is the largest thing in the window.
    window.resize(1366, 768);
    QTest::qWait(50);
    INFO("heat map " << heatmap->width() << " of " << window.width() << " px");
    CHECK(heatmap->width() * 100 >= window.width() * 45);  // 687 of 1366 px measured
    for (QDockWidget* d : window.findChildren<QDockWidget*>())
        if (d->isVisible() && !d->isFloating()) CHECK(d->width() < heatmap->width());
}

TEST_CASE_METHOD(WindowFixture,
                 "The Views dock's content fits its width: no side scroll bar, every Export button shown",
                 "[ui][window][layout]") {
    window.resize(1366, 768);
    open(qpath(gpt2TwelveByTwelve()));
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("viewsDock"));
    REQUIRE(dock);
    dock->show();
    dock->raise();
    QTest::qWait(50);
    auto* area = qobject_cast<QScrollArea*>(dock->widget());
    REQUIRE(area);
    INFO("dock " << dock->width() << " px, content's minimum " << area->widget()->minimumSizeHint().width() << " px");
    for (const char* name : {"lineExport", "neuronExport", "qkExport"}) {
        auto* button = area->findChild<QPushButton*>(QString::fromLatin1(name));
        REQUIRE(button);
        QWidget* page = button->parentWidget();
        window.views()->tabs()->setCurrentWidget(page);
        QTest::qWait(50);
        INFO(name << ": page minimum " << page->minimumSizeHint().width() << " px");
        CHECK(area->horizontalScrollBar()->maximum() == 0);  // nothing to scroll sideways
        CHECK(button->isVisible());
        const QRect shown(button->mapTo(area->viewport(), QPoint(0, 0)), button->size());
        CHECK(area->viewport()->rect().contains(shown));  // the whole button, not cut off
    }
    // A wrapped tool bar's label is centred beside its box.
    auto* coloring = area->findChild<QComboBox*>(QStringLiteral("qkColoring"));
    QLabel* colour = nullptr;
    for (QLabel* l : coloring->parentWidget()->findChildren<QLabel*>())
        if (l->text() == QStringLiteral("Colour")) colour = l;
    REQUIRE(colour);
    CHECK(std::abs(colour->geometry().center().y() - coloring->geometry().center().y()) <= 1);
}

TEST_CASE_METHOD(ViewsFixture, "After a model change every view shows the new model or is cleared",
                 "[ui][window][stale]") {
    open(qpath(gpt2TwelveByTwelve()));
    show(views->qkSpace(), &ViewsController::qkShown);
    window.tabs()->setCurrentWidget(window.modelView()->panel());
    REQUIRE(QTest::qWaitFor([&] { return overview->caption().contains(QStringLiteral("12 heads")); }, 20000));
    REQUIRE(views->qkSpace()->message().isEmpty());
    window.state()->setTokenSelection({0, 1});
    REQUIRE(window.state()->masks().empty());
    window.lab()->toggleMask(QStringLiteral("self"), 3, 4);
    REQUIRE(window.state()->masks().size() == 1);

    // The moment the new model has loaded, nothing of the old one is left on screen.
    QSignalSpy loaded(session, &Session::modelLoaded);
    QSignalSpy traced(session, &Session::traceReady);
    window.openModel(QStringLiteral("builtin:sentiment-dot"));
    REQUIRE(loaded.wait(20000));
    CHECK_FALSE(views->qkSpace()->message().isEmpty());  // cleared, not the old model's points
    CHECK_FALSE(views->lines()->exportable());           // cleared too (its tab is not the shown one)
    CHECK_FALSE(window.modelView()->panel()->grid()->caption().contains(QStringLiteral("12 heads")));
    CHECK_FALSE(overview->caption().contains(QStringLiteral("12 heads")));
    CHECK(window.state()->model() == QStringLiteral("builtin:sentiment-dot"));
    CHECK(window.state()->masks().empty());
    CHECK(window.state()->tokenSelection().side == -1);
    CHECK(window.lab()->intervention().masked.empty());
    CHECK(heatmap->map().rows == 0);  // a message in place of the old model's map
    CHECK_FALSE(controls->modelLabel()->text().contains(QStringLiteral("12 layers")));
    CHECK(window.lab()->metrics()->model()->metrics().empty());
    CHECK(window.currentWorkspace().model == QStringLiteral("builtin:sentiment-dot"));  // what a save would write

    // Then every view shows the new model's trace.
    REQUIRE(QTest::qWaitFor([&] { return traced.count() > 0; }, 20000));
    const auto trace = session->trace();
    const auto& block = trace->blocks()[std::size_t(window.currentKey().block)];
    REQUIRE(QTest::qWaitFor(
            [&] {
                const auto& s = views->qkSpace()->figure().space;
                return views->qkSpace()->message().isEmpty() &&
                       s.points() == int(block.queryTokens.size() + block.keyTokens.size());
            },
            20000));
    const QString shape = QStringLiteral("%1 layers × %2 heads").arg(block.layers).arg(block.heads);
    REQUIRE(QTest::qWaitFor([&] { return window.modelView()->panel()->grid()->caption().contains(shape); }, 20000));
    CHECK(overview->layers() == block.layers);
    CHECK(overview->heads() == block.heads);
    CHECK(window.state()->blocks().front().heads == block.heads);
}

TEST_CASE_METHOD(WindowFixture, "The typed input is kept across a model switch when the new tokenizer takes it",
                 "[ui][window][stale]") {
    open(QStringLiteral("builtin:reverse-dot"));
    runText(QStringLiteral("abc123"));
    open(QStringLiteral("builtin:reverse-additive"));  // the same symbols
    CHECK(input->text() == QStringLiteral("abc123"));
    open(QStringLiteral("builtin:sentiment-dot"));  // a word vocabulary: "abc123" is no word
    CHECK(input->text() != QStringLiteral("abc123"));
    CHECK_FALSE(input->text().isEmpty());
}

TEST_CASE_METHOD(WindowFixture, "Help lists every shortcut, and the tooltips name them", "[ui][window][help]") {
    QMenu* help = nullptr;
    for (QAction* a : window.menuBar()->actions())
        if (a->text() == QStringLiteral("&Help")) help = a->menu();
    REQUIRE(help);
    QAction* keys = window.findChild<QAction*>(QStringLiteral("shortcutsAction"));
    REQUIRE(keys);
    keys->trigger();
    auto* dialog = window.findChild<QDialog*>(QStringLiteral("shortcutsDialog"));
    REQUIRE(dialog);
    CHECK(dialog->isVisible());
    const QString text = window.shortcutsText();
    for (const QString& k :
         {QStringLiteral("\u2190 / \u2192"), QStringLiteral("\u2191 / \u2193"), QStringLiteral("+ / \u2212"),
          QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText), QStringLiteral("Ctrl+E"),
          QStringLiteral("Ctrl+L"), QStringLiteral("F1")})
        CHECK(text.contains(k));
    // Every action with a shortcut lists it and names it in its tooltip.
    for (QAction* a : window.findChildren<QAction*>()) {
        if (a->shortcut().isEmpty() || a->text().isEmpty()) continue;
        const QString k = a->shortcut().toString(QKeySequence::NativeText);
        INFO(a->objectName().toStdString() << " " << k.toStdString());
        CHECK(text.contains(k));
        CHECK(a->toolTip().contains(k));
    }
    dialog->close();
}

TEST_CASE_METHOD(WindowFixture, "Generate is disabled for a classifier, with the reason in its tooltip",
                 "[ui][window][generation]") {
    open(QStringLiteral("builtin:sentiment-dot"));
    QPushButton* button = window.generation()->panel()->generateButton();
    CHECK_FALSE(button->isEnabled());
    CHECK(button->toolTip().contains(QStringLiteral("decoder-only")));
    openStandIn();  // a language model: Generate applies
    CHECK(button->isEnabled());
}

TEST_CASE_METHOD(WindowFixture, "Export and Save are disabled until there is a map, with the reason in their tooltip",
                 "[ui][window][help]") {
    auto* fig = window.findChild<QAction*>(QStringLiteral("exportFigureAction"));
    auto* data = window.findChild<QAction*>(QStringLiteral("exportDataAction"));
    auto* save = window.findChild<QAction*>(QStringLiteral("saveWorkspaceAction"));
    REQUIRE((fig && data && save));
    for (QAction* a : {fig, data, save}) {
        INFO(a->objectName().toStdString() << ": " << a->toolTip().toStdString());
        CHECK_FALSE(a->isEnabled());
        CHECK(a->toolTip().contains(QStringLiteral("first")));  // why
        CHECK(a->toolTip().contains(a->shortcut().toString(QKeySequence::NativeText)));
    }
    CHECK(fig->toolTip().contains(QStringLiteral("Run an input")));
    CHECK(save->toolTip().contains(QStringLiteral("Open a model")));
    QTest::keyClick(&window, Qt::Key_E, Qt::ControlModifier);  // the shortcut does nothing either
    QTest::qWait(50);
    CHECK_FALSE(window.findChild<ExportDialog*>(QStringLiteral("exportDialog")));
    CHECK_FALSE(window.findChild<QMessageBox*>(QStringLiteral("errorDialog")));

    openStandIn();
    for (QAction* a : {fig, data, save}) {
        CHECK(a->isEnabled());
        CHECK_FALSE(a->toolTip().contains(QStringLiteral("first")));
    }
    CHECK(save->toolTip().contains(QStringLiteral(".attnscope")));  // its own tooltip again
}

TEST_CASE_METHOD(WindowFixture, "Closing with an unsaved workspace asks first; Open Recent lists it once saved",
                 "[ui][window][workspace]") {
    openStandIn();
    CHECK_FALSE(window.workspaceModified());  // a model on its example: nothing to save yet
    head->setValue(2);
    CHECK(window.workspaceModified());
    window.close();
    QMessageBox* box = nullptr;
    REQUIRE(QTest::qWaitFor([&] {
        return (box = window.findChild<QMessageBox*>(QStringLiteral("unsavedWorkspaceDialog"))) != nullptr;
    }));
    CHECK(window.isVisible());  // not closed yet
    box->button(QMessageBox::Cancel)->click();
    QTest::qWait(20);
    CHECK(window.isVisible());

    const fs::path dir = attnscope::testing::freshDir("recent-ws");
    const QString file = qpath(dir / "a.attnscope");
    REQUIRE(window.saveWorkspaceFile(file));
    CHECK_FALSE(window.workspaceModified());
    emit window.recentMenu()->aboutToShow();
    QStringList entries;
    for (QAction* a : window.recentMenu()->actions()) entries << a->toolTip();
    CHECK(entries.contains(QDir::toNativeSeparators(file)));
    window.close();  // saved: no question
    CHECK_FALSE(window.findChild<QMessageBox*>(QStringLiteral("unsavedWorkspaceDialog")));
    CHECK_FALSE(window.isVisible());
    QSettings().remove(QStringLiteral("window"));  // later tests start from the default layout
}

TEST_CASE_METHOD(WindowFixture, "After masking, the Lab panel and the fitted head's map agree that the fit is gone",
                 "[ui][window][stale][lab]") {
    open(QStringLiteral("builtin:reverse-dot"));
    LabPanel* panel = window.lab()->panel();
    panel->variantCombo()->setCurrentIndex(int(LabVariant::Additive));
    panel->fitStepsSpin()->setValue(30);
    QTest::mouseClick(panel->fitButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return window.lab()->lastFit() != nullptr; }, 30000));
    REQUIRE(QTest::qWaitFor([&] { return heatmap->map().rows > 0; }, 20000));  // the fitted head's map
    CHECK(panel->fitLabel()->text().contains(QStringLiteral("mean KL")));

    QSignalSpy rerun(window.lab(), &LabController::shownTraceChanged);
    window.lab()->toggleMask(window.currentBlockName(), 1, 1);
    REQUIRE(rerun.wait(20000));
    CHECK(window.lab()->lastFit() == nullptr);
    CHECK(panel->fitLabel()->text().contains(QStringLiteral("No additive fit")));
    REQUIRE(QTest::qWaitFor([&] { return heatmap->map().rows == 0; }, 20000));  // the map says so too
    CHECK(window.state()->masks().size() == 1);
    CHECK_FALSE(window.state()->tabSettings().lab.fit);  // and the state, which a workspace saves
}

TEST_CASE_METHOD(WindowFixture, "The Lab's settings and fit are the state's: the panel writes them and follows them",
                 "[ui][window][lab][workspace]") {
    open(QStringLiteral("builtin:reverse-dot"));
    LabPanel* panel = window.lab()->panel();
    ViewState* state = window.state();
    panel->gateSlider()->setValue(30);
    panel->featuresSpin()->setValue(64);
    panel->featureMapCombo()->setCurrentIndex(int(attnscope::FeatureMap::Relu));
    panel->fitWidthSpin()->setValue(12);
    CHECK(state->tabSettings().lab.gate == Approx(0.3));
    CHECK(state->tabSettings().lab.features == 64);
    CHECK(state->tabSettings().lab.featureMap == attnscope::FeatureMap::Relu);
    CHECK(state->tabSettings().lab.fitWidth == 12);
    window.lab()->propagateCheck()->setChecked(true);
    CHECK(state->inside().enabled);

    // A change made in the state (as a workspace being opened makes it) reaches the panel.
    Workspace::Lab lab = state->tabSettings().lab;
    lab.gate = 0.8;
    lab.fitSteps = 20;
    state->setTabSetting(&ViewState::TabSettings::lab, lab);
    CHECK(panel->gateSlider()->value() == 80);
    CHECK(panel->fitStepsSpin()->value() == 20);
    state->setVariant(LabVariant::Hybrid);
    CHECK(panel->variant() == LabVariant::Hybrid);

    // The fit is the state's once made, with the settings it was made with.
    window.lab()->propagateCheck()->setChecked(false);
    panel->variantCombo()->setCurrentIndex(int(LabVariant::Additive));
    QTest::mouseClick(panel->fitButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return state->tabSettings().lab.fit.has_value(); }, 30000));
    CHECK(state->tabSettings().lab.fit->layer == state->layer());
    CHECK(state->tabSettings().lab.fitWidth == 12);
    // What a saved workspace holds is the state's, whatever a widget says since.
    const Workspace saved = window.currentWorkspace();
    CHECK(workspaceJson(saved) == [&] {
        Workspace w = state->workspace();
        w.window = saved.window;
        return workspaceJson(w);
    }());
    CHECK(saved.lab.gate == Approx(0.8));
    CHECK(saved.lab.variant == LabVariant::Additive);
}

TEST_CASE_METHOD(ViewsFixture, "The Model tab, the Views dock and the Generate dock follow their state sections",
                 "[ui][window][workspace]") {
    open(QStringLiteral("builtin:reverse-dot"));
    ViewState* state = window.state();
    ModelViewPanel* model = window.modelView()->panel();
    model->framesCheck()->setChecked(false);  // a widget asks the state
    CHECK_FALSE(state->tabSettings().modelView.frames);
    Workspace::ModelView m = state->tabSettings().modelView;
    m.descending = false;
    state->setTabSetting(&ViewState::TabSettings::modelView, m);  // the state tells the widget
    CHECK_FALSE(model->descendingCheck()->isChecked());

    Workspace::Views v = state->tabSettings().views;
    v.tab = QStringLiteral("neuron");
    v.lines.threshold = 0.25;
    state->setTabSetting(&ViewState::TabSettings::views, v);
    CHECK(window.views()->tabs()->currentIndex() == 1);
    CHECK(window.views()->state().lines.threshold == Approx(0.25));
    window.views()->tabs()->setCurrentIndex(2);
    CHECK(state->tabSettings().views.tab == QStringLiteral("qk"));

    GeneratePanel* gen = window.generation()->panel();
    gen->tokensSpin()->setValue(7);
    CHECK(state->tabSettings().generation.tokens == 7);
    Workspace::GenerationState g = state->tabSettings().generation;
    g.sampling.topK = 9;
    state->setTabSetting(&ViewState::TabSettings::generation, g);
    CHECK(gen->topKSpin()->value() == 9);
    CHECK(window.currentWorkspace().generation.sampling.topK == 9);
}

TEST_CASE_METHOD(WindowFixture, "A focus ring shows around what Tab moved the focus to, not after a click",
                 "[ui][window][help]") {
    window.activateWindow();
    REQUIRE(QTest::qWaitForWindowActive(&window));
    auto* ring = window.findChild<FocusRing*>(QStringLiteral("focusRing"));
    REQUIRE(ring);
    controls->device()->setFocus(Qt::MouseFocusReason);
    REQUIRE(QTest::qWaitFor([&] { return controls->device()->hasFocus(); }, 2000));
    CHECK_FALSE(ring->isVisible());
    input->setFocus(Qt::TabFocusReason);
    REQUIRE(QTest::qWaitFor([&] { return ring->isVisible(); }, 2000));
    CHECK(ring->target() == input);
    CHECK(ring->parentWidget() == input->parentWidget());
    CHECK(ring->geometry().contains(input->geometry()));
    CHECK(ring->geometry() != input->geometry());        // around it, not on it
    controls->device()->setFocus(Qt::MouseFocusReason);  // as a click gives it
    REQUIRE(QTest::qWaitFor([&] { return !ring->isVisible(); }, 2000));
}

}  // namespace test_window_layout
