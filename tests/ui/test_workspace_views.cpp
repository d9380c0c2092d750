// Workspace files, version 2: the Model tab, the Image tab's overlay, the Views dock and the
// generation are saved and opened again through the real window (save -> open in a fresh window
// -> the same settings, maps, Output box and figure bytes), version 1 files still open (their
// missing sections are what a fresh window shows), and bad values are refused naming the field.
#include "views_fixture.h"

#include "../cli/cli_run.h"

#include "family_fixtures.h"
#include "png_write.h"

#include "figure/headfigure.h"
#include "figure/workspace.h"
#include "panels/generatepanel.h"
#include "panels/imageoverlaypanel.h"
#include "panels/modelviewpanel.h"
#include "panels/outputpanel.h"
#include "views/imageoverlay.h"
#include "controllers/generatecontroller.h"
#include "controllers/imagecontroller.h"
#include "controllers/modelviewcontroller.h"
#include "controllers/labcontroller.h"

#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <QDoubleSpinBox>
#include <QFile>

namespace test_workspace_views {

using namespace uitest;
using attnscope::testing::freshDir;
namespace fs = std::filesystem;

namespace {

std::string parseError(const QByteArray& fields) {
    try {
        parseWorkspace("{\"format\": \"attnscope-workspace\", \"version\": 2, \"model\": \"builtin:reverse-dot\", " +
                               fields + "}",
                       QStringLiteral("ws.attnscope"));
    } catch (const attnscope::Error& e) {
        return e.what();
    }
    return "(accepted)";
}

// Only the version 2 sections of a workspace, as JSON (the rest at its defaults).
QString sectionsJson(const Workspace& w) {
    Workspace only;
    only.modelView = w.modelView;
    only.image = w.image;
    only.views = w.views;
    only.generation = w.generation;
    return QString::fromUtf8(workspaceJson(only));
}

// Saved by the window, then opened in a second one that showed another model.
void reopen(WindowFixture& b, const fs::path& file) {
    b.open(QStringLiteral("builtin:sentiment-dot"));
    QSignalSpy restored(&b.window, &MainWindow::workspaceRestored);
    REQUIRE(b.window.openWorkspaceFile(qpath(file)));
    REQUIRE(restored.wait(60000));
}

// Every setting of both windows' workspaces, the window's Qt bytes aside.
void checkSameWorkspace(const MainWindow& a, const MainWindow& b) {
    Workspace wa = a.currentWorkspace(), wb = b.currentWorkspace();
    wa.window = wb.window = {};
    CHECK(workspaceJson(wb).toStdString() == workspaceJson(wa).toStdString());  // a difference is printed
}

}  // namespace

TEST_CASE("Workspace version 2 sections keep every field; version 1 files still open", "[ui][workspace]") {
    Workspace w;
    w.model = QStringLiteral("builtin:reverse-dot");
    w.view.tab = QStringLiteral("image");
    w.modelView = {QStringLiteral("det_induction"), false, false, QStringLiteral("mean_distance")};
    w.image = {attnscope::OverlaySource::Rollout,
               attnscope::HeadFusion::Min,
               0.75,
               35,
               Colormap::Viridis,
               true,
               true,
               true,
               7};
    w.views.tab = QStringLiteral("qk");
    w.views.selectedSide = QStringLiteral("key");
    w.views.selectedIndex = 4;
    w.views.lines = {{1, 3}, 0.125, 40};
    w.views.neuronQuery = 5;
    w.views.qk = {true, QStringLiteral("token_kind")};
    w.generation.tokens = 9;
    w.generation.sampling = {true, 0.7, 40, 0.95, 123456789012ULL};
    w.generation.queryRowOnly = false;
    w.generation.prompt = {5, 6, 7};
    w.generation.generated = {1, 2, 3, 4};
    w.generation.step = 3;
    const QByteArray json = workspaceJson(w);
    CHECK(json.contains("\"version\": 2"));
    const Workspace r = parseWorkspace(json, QStringLiteral("ws.attnscope"));
    CHECK(workspaceJson(r) == json);  // nothing lost, nothing added
    CHECK(r.image.discardRatio == 0.75);
    CHECK(r.image.fusion == attnscope::HeadFusion::Min);
    CHECK(r.image.patchesOnly);
    CHECK(r.image.query == 7);
    CHECK(r.views.lines.hiddenHeads == std::vector<int>{1, 3});
    CHECK(r.generation.sampling.seed == 123456789012ULL);
    CHECK(r.generation.generated == std::vector<std::int64_t>{1, 2, 3, 4});
    CHECK(r.view.tab == QStringLiteral("image"));

    SECTION("a version 1 file (as the previous AttnScope wrote it) opens with the new sections at their defaults") {
        const QByteArray v1 =
                "{\"colors\": {\"colormap\": \"magma\", \"scale\": \"log\"}, \"device\": \"cpu\", \"figure\": {\"dpi\": 300, "
                "\"width_in\": 3.25}, \"format\": \"attnscope-workspace\", \"input\": {\"ids\": false, \"text\": \"abc\"}, "
                "\"inside_model\": {\"enabled\": false, \"layers\": []}, \"lab\": {\"feature_map\": \"elu\", \"features\": 256, "
                "\"fit_steps\": 300, \"fit_width\": 32, \"gate\": 0.5, \"variant\": \"dot\"}, \"masked_heads\": [], \"model\": "
                "\"builtin:reverse-dot\", \"selection\": {\"head\": 1, \"layer\": 0}, \"temperature\": 0.5, \"version\": 1, "
                "\"view\": {\"metrics_view\": \"rollout\", \"pooling\": \"max\", \"raw_tokens\": false, \"tab\": \"metrics\"}}";
        const Workspace old = parseWorkspace(v1, QStringLiteral("old.attnscope"));
        CHECK(old.lab.variant == attnscope::LabVariant::Dot);
        CHECK(old.selection.head == 1);
        CHECK(old.view.tab == QStringLiteral("metrics"));
        CHECK(sectionsJson(old) == sectionsJson(Workspace{}));
        CHECK(workspaceJson(old).contains("\"version\": 2"));  // saved again, it is a version 2 file
    }
    SECTION("bad values name the field") {
        CHECK_THAT(parseError("\"model_view\": {\"order\": \"speed\"}"),
                   Catch::Contains("ws.attnscope: model_view.order: unknown 'speed'"));
        CHECK_THAT(parseError("\"model_view\": {\"metric\": \"speed\"}"),
                   Catch::Contains("model_view.metric: unknown 'speed' (use entropy"));
        CHECK_THAT(parseError("\"image\": {\"discard_ratio\": 1}"),
                   Catch::Contains("image.discard_ratio: 1 is out of range (0 to 0.99)"));
        CHECK_THAT(parseError("\"image\": {\"source\": \"cls\"}"),
                   Catch::Contains("image.source: unknown 'cls' (use head, layer_mean, rollout, similarity)"));
        CHECK_THAT(parseError("\"image\": {\"opacity\": 101}"), Catch::Contains("image.opacity: 101 is out of range"));
        CHECK_THAT(parseError("\"views\": {\"tab\": \"grid\"}"),
                   Catch::Contains("views.tab: unknown 'grid' (use lines, neuron, qk)"));
        CHECK_THAT(parseError("\"views\": {\"lines\": {\"hidden_heads\": [0, -2]}}"),
                   Catch::Contains("views.lines.hidden_heads: -2 is out of range"));
        CHECK_THAT(parseError("\"views\": {\"qk\": {\"coloring\": \"rainbow\"}}"),
                   Catch::Contains("views.qk.coloring: unknown 'rainbow'"));
        CHECK_THAT(parseError("\"views\": {\"selected_side\": \"query\"}"),
                   Catch::Contains("views.selected_index: a token (>= 0) exactly when"));
        CHECK_THAT(parseError("\"views\": {\"neuron\": {\"query\": \"last\"}}"),
                   Catch::Contains("views.neuron.query: expected a whole number"));
        CHECK_THAT(parseError("\"generation\": {\"generated\": [1, 2]}"),
                   Catch::Contains("generation.prompt: missing"));
        CHECK_THAT(parseError("\"generation\": {\"prompt\": [1], \"generated\": [1, 2], \"step\": 2}"),
                   Catch::Contains("generation.step: 2 is past the 2 generated ids"));
        CHECK_THAT(parseError("\"generation\": {\"top_p\": 0}"),
                   Catch::Contains("generation.top_p: 0 is out of range (0.01 to 1)"));
        CHECK_THAT(parseError("\"generation\": {\"seed\": 1.5}"),
                   Catch::Contains("generation.seed: expected a whole number"));
        CHECK_THAT(parseError("\"generation\": {\"speed\": 1}"), Catch::Contains("generation.speed: unknown field"));
        CHECK_THAT(parseError("\"view\": {\"tab\": \"corpus\"}"),
                   Catch::Contains(
                           "view.tab: unknown 'corpus' (use explore, compare, metrics, model, image, causal, long)"));
    }
}

TEST_CASE("A fresh window's Model, Image, Views and Generate state is the workspace default",
          "[ui][workspace][window]") {
    WindowFixture w;
    w.open(QStringLiteral("builtin:reverse-dot"));
    // What a version 1 file opens to is what a new window shows.
    CHECK(sectionsJson(w.window.currentWorkspace()) == sectionsJson(Workspace{}));
}

TEST_CASE("A workspace with a generation step and the Model tab opens to the same step, output and figure",
          "[ui][workspace][window][generation]") {
    const fs::path dir = freshDir("ws-generation");
    const fs::path file = dir / "gen.attnscope";
    WindowFixture a;
    a.openStandIn();
    GenerateController* gen = a.window.generation();
    GeneratePanel* panel = gen->panel();
    panel->tokensSpin()->setValue(5);
    panel->sampleCheck()->setChecked(true);
    panel->samplingTemperatureSpin()->setValue(1.4);
    panel->topKSpin()->setValue(12);
    panel->seedSpin()->setValue(77);
    QSignalSpy done(gen, &GenerateController::finished);
    QTest::mouseClick(panel->generateButton(), Qt::LeftButton);
    REQUIRE(done.wait(30000));
    panel->queryRowCheck()->setChecked(false);
    panel->stepSlider()->setValue(3);
    const attnscope::Generation& g = *gen->generation();
    const auto step3 = attnscope::prefixTrace(*g.trace, int(g.prompt.size()) + 3, false);
    a.waitForMap(step3->map(0, a.layer->value(), a.head->value()));
    // The Output box shows the step's own output (the prefix trace has no logits of its own).
    const QString output = a.controls->outputs()->text();
    INFO(output.toStdString());
    CHECK(output.contains(QStringLiteral("Step 4 of 5 chose")));
    CHECK(output.contains(QStringLiteral("under the sampling distribution")));
    CHECK_FALSE(output.contains(QStringLiteral("no outputs")));
    // The Model tab: ordered by distance, smallest first, no frames, the sink detector's map.
    ModelViewPanel* model = a.window.modelView()->panel();
    model->orderCombo()->setCurrentIndex(model->orderCombo()->findData(QStringLiteral("mean_distance")));
    model->descendingCheck()->setChecked(false);
    model->framesCheck()->setChecked(false);
    model->metricCombo()->setCurrentIndex(model->metricCombo()->findData(QStringLiteral("first_token")));
    // The Image tab's settings are kept even for a text model (they apply to the next image model).
    ImageOverlayPanel* image = a.window.imageView()->panel();
    image->opacitySlider()->setValue(35);
    image->colormapCombo()->setCurrentText(QStringLiteral("viridis"));
    image->smoothCheck()->setChecked(true);
    a.window.tabs()->setCurrentWidget(model);
    a.controls->temperature()->setTemperature(0.7);
    REQUIRE(QTest::qWaitFor([&] { return a.heatmap->title().contains(QStringLiteral("0.7")); }, 20000));
    REQUIRE(a.window.saveWorkspaceFile(qpath(file)));
    const Workspace saved = readWorkspace(qpath(file));
    CHECK(saved.generation.generated == g.generated);
    CHECK(saved.generation.prompt == g.prompt);
    CHECK(saved.generation.step == 3);
    CHECK(saved.generation.sampling.seed == 77);
    CHECK(saved.view.tab == QStringLiteral("model"));
    CHECK(saved.modelView.order == QStringLiteral("mean_distance"));
    writeFigure(a.window.currentFigure(), qpath(dir / "a.svg"));
    writeFigure(a.window.currentFigure(), qpath(dir / "a.png"), 150);

    WindowFixture b;
    reopen(b, file);
    GenerateController* genB = b.window.generation();
    REQUIRE(genB->generation());
    CHECK(genB->generation()->generated == g.generated);
    CHECK(genB->shownStep() == 3);
    CHECK(genB->panel()->step() == 3);
    CHECK(genB->panel()->seedSpin()->value() == 77);
    CHECK(genB->panel()->topKSpin()->value() == 12);
    CHECK_FALSE(genB->panel()->queryRowCheck()->isChecked());
    CHECK(b.heatmap->map().values == a.heatmap->map().values);
    CHECK(b.heatmap->title() == a.heatmap->title());
    CHECK(b.controls->outputs()->text() == output);
    CHECK(b.window.tabs()->currentWidget() == b.window.modelView()->panel());
    ModelViewPanel* modelB = b.window.modelView()->panel();
    CHECK(modelB->orderCombo()->currentData().toString() == QStringLiteral("mean_distance"));
    CHECK_FALSE(modelB->descendingCheck()->isChecked());
    CHECK(modelB->metricCombo()->currentData().toString() == QStringLiteral("first_token"));
    CHECK(b.window.imageView()->panel()->opacitySlider()->value() == 35);
    CHECK(b.window.imageView()->panel()->smoothCheck()->isChecked());
    checkSameWorkspace(a.window, b.window);
    writeFigure(b.window.currentFigure(), qpath(dir / "b.svg"));
    writeFigure(b.window.currentFigure(), qpath(dir / "b.png"), 150);
    CHECK(fileBytes(dir / "b.svg") == fileBytes(dir / "a.svg"));
    CHECK(fileBytes(dir / "b.png") == fileBytes(dir / "a.png"));
    // Headless (what `attnscope-cli export --workspace` draws): the same step's figure.
    const auto loaded = attnscope::Model::load(attnscope::testing::standInModel());
    Figure headless = workspaceFigure(*loaded, saved);
    headless.widthIn = a.window.currentFigure().widthIn;
    writeFigure(headless, qpath(dir / "c.svg"));
    CHECK(fileBytes(dir / "c.svg") == fileBytes(dir / "a.svg"));
    const auto cli =
            attnscope::testing::runCli({"export", "--workspace", file.string(), "--out", (dir / "d.svg").string(),
                                        "--width-in", std::to_string(headless.widthIn)});
    INFO(cli.err);
    REQUIRE(cli.code == 0);
    CHECK(fileBytes(dir / "d.svg") == fileBytes(dir / "a.svg"));
    genB->waitForWorkers();
    gen->waitForWorkers();
    b.window.lab()->shutdown();
    a.window.lab()->shutdown();
    fs::remove_all(dir);
}

TEST_CASE("A workspace on a ViT opens to the same overlay: source, discard, look and the clicked patch",
          "[ui][workspace][window][image]") {
    using namespace attnscope::testing;
    const fs::path dir = freshDir("ws-image");
    const fs::path file = dir / "vit.attnscope";
    VitSpec spec;
    spec.layers = 3;
    spec.imageSize = 32;
    spec.patch = 8;
    writeCheckpoint(dir / "vit", makeVit(spec, 61));
    writeNoisePng(dir / "picture.png", 48, 32, 5);

    WindowFixture a;
    a.openWithImage(qpath(dir / "vit"), qpath(dir / "picture.png"));
    ImageController* image = a.window.imageView();
    ImageOverlayPanel* panel = image->panel();
    a.window.tabs()->setCurrentWidget(panel);
    a.layer->setValue(2);
    panel->sourceCombo()->setCurrentIndex(panel->sourceCombo()->findData(int(attnscope::OverlaySource::Rollout)));
    panel->discardSpin()->setValue(0.6);
    panel->fusionCombo()->setCurrentIndex(panel->fusionCombo()->findData(int(attnscope::HeadFusion::Max)));
    panel->opacitySlider()->setValue(80);
    panel->colormapCombo()->setCurrentText(QStringLiteral("cividis"));
    panel->gridCheck()->setChecked(true);
    // A click on patch 6 (r1c2 = token 7) shows its row.
    const auto shownWith = [](ImageController* c, int query, double discard) {
        return QTest::qWaitFor(
                [=] {
                    return c->shown().trace && c->shown().options.query == query &&
                           c->shown().options.rollout.discardRatio == discard && c->shown().options.layer == 2 &&
                           c->panel()->view()->hasPicture();
                },
                20000);
    };
    REQUIRE(shownWith(image, 0, 0.6));
    QTest::mouseClick(panel->view(), Qt::LeftButton, {}, panel->view()->patchRect(6).center().toPoint());
    REQUIRE(shownWith(image, 7, 0.6));
    REQUIRE(a.window.saveWorkspaceFile(qpath(file)));
    const Workspace saved = readWorkspace(qpath(file));
    CHECK(saved.image.query == 7);
    CHECK(saved.image.source == attnscope::OverlaySource::Rollout);
    CHECK(saved.view.tab == QStringLiteral("image"));
    REQUIRE(image->exportFigure(qpath(dir / "a.svg")));

    WindowFixture b;
    reopen(b, file);
    ImageController* imageB = b.window.imageView();
    REQUIRE(shownWith(imageB, 7, 0.6));
    CHECK(b.window.tabs()->currentWidget() == imageB->panel());
    CHECK(imageB->shown().options.source == attnscope::OverlaySource::Rollout);
    CHECK(imageB->shown().options.rollout.fusion == attnscope::HeadFusion::Max);
    CHECK(imageB->shown().overlay.patches == image->shown().overlay.patches);
    CHECK(imageB->panel()->view()->picture().markedPatch == 6);
    CHECK(imageB->panel()->opacitySlider()->value() == 80);
    CHECK(imageB->panel()->gridCheck()->isChecked());
    CHECK(imageB->panel()->colormapCombo()->currentText() == QStringLiteral("cividis"));
    checkSameWorkspace(a.window, b.window);
    REQUIRE(imageB->exportFigure(qpath(dir / "b.svg")));
    CHECK(fileBytes(dir / "b.svg") == fileBytes(dir / "a.svg"));
    b.window.lab()->shutdown();
    a.window.lab()->shutdown();
    fs::remove_all(dir);
}

TEST_CASE("A workspace keeps the Views dock: its tab, the selected token and each view's settings",
          "[ui][workspace][window][views]") {
    const fs::path dir = freshDir("ws-views");
    const fs::path file = dir / "views.attnscope";
    ViewsFixture a;
    a.open(QStringLiteral("builtin:reverse-dot"));
    ViewsController::State st = a.views->state();
    st.tab = 2;  // the query-key space
    st.qk.allHeads = true;
    st.qk.coloring = QkColoring::Head;
    st.lines.threshold = 0.05;
    st.lines.hiddenHeads = {1};
    st.neuron.query = 2;  // a selected query would set the neuron view's query too: select a key
    st.selectedSide = 1;
    st.selectedIndex = 1;
    QSignalSpy shownA(a.views, &ViewsController::qkShown);
    a.views->setState(st);
    REQUIRE(shownA.wait(20000));
    REQUIRE(a.window.saveWorkspaceFile(qpath(file)));
    const Workspace saved = readWorkspace(qpath(file));
    CHECK(saved.views.tab == QStringLiteral("qk"));
    CHECK(saved.views.qk.coloring == QStringLiteral("head"));
    CHECK(saved.views.selectedSide == QStringLiteral("key"));
    CHECK(saved.views.lines.hiddenHeads == std::vector<int>{1});
    writePainted(qpath(dir / "a.svg"), a.views->shownFigure(), 3.25);

    ViewsFixture b;
    QSignalSpy shownB(b.views, &ViewsController::qkShown);
    reopen(b, file);
    REQUIRE(QTest::qWaitFor([&] { return shownB.count() > 0 && bool(b.views->shownFigure()); }, 20000));
    b.views->waitForWorkers();
    QTest::qWait(50);  // the last result delivered
    const ViewsController::State sb = b.views->state();
    CHECK(sb.tab == 2);
    CHECK(sb.qk.allHeads);
    CHECK(sb.qk.coloring == QkColoring::Head);
    CHECK(sb.lines.threshold == 0.05);
    CHECK(sb.lines.hiddenHeads == std::vector<int>{1});
    CHECK(sb.neuron.query == 2);
    CHECK(sb.selectedSide == 1);
    CHECK(sb.selectedIndex == 1);
    checkSameWorkspace(a.window, b.window);
    writePainted(qpath(dir / "b.svg"), b.views->shownFigure(), 3.25);
    CHECK(fileBytes(dir / "b.svg") == fileBytes(dir / "a.svg"));
    b.window.lab()->shutdown();
    a.window.lab()->shutdown();
    fs::remove_all(dir);
}

}  // namespace test_workspace_views
