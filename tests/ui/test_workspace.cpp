// Workspace files: the format (every field back as written, bad files refused naming the field),
// the round trip through the real window (save -> open in a fresh window -> the same map,
// settings and figure bytes), the headless figure and `attnscope-cli export --workspace` equal to
// the window's, and the window's layout kept between starts.
#include "window_fixture.h"

#include "../cli/cli_run.h"

#include "figure/headfigure.h"
#include "figure/workspace.h"
#include "panels/labpanel.h"
#include "services/labservice.h"
#include "controllers/labcontroller.h"

#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <QDockWidget>
#include <QFile>
#include <QSettings>
#include <QSvgRenderer>

namespace test_workspace {

using namespace uitest;
using attnscope::testing::freshDir;
using attnscope::testing::runCli;
using attnscope::testing::slurpFile;
namespace fs = std::filesystem;

namespace {

Workspace everyField() {
    Workspace w;
    w.model = QStringLiteral("builtin:reverse-dot");
    w.device = QStringLiteral("cpu");
    w.input = {QStringLiteral("héllo \"world\""), true, QStringLiteral("1 2 3"), QStringLiteral("/tmp/x.png")};
    w.selection = {QStringLiteral("cross"), 1, 3};
    w.temperature = 0.37;
    w.inside = {true, {0, 2}};
    w.lab.variant = attnscope::LabVariant::Hybrid;
    w.lab.featureMap = attnscope::FeatureMap::Favor;
    w.lab.features = 77;
    w.lab.gate = 0.25;
    w.lab.fitWidth = 9;
    w.lab.fitSteps = 11;
    w.lab.fit = Workspace::Lab::Fit{QStringLiteral("cross"), 1, 0, 0.5};
    w.masked = {{"encoder", 0, 1}, {"cross", 1, 0}};
    w.colormap = Colormap::Magma;
    w.scale = ColorScaleType::Log;
    w.view.tab = QStringLiteral("metrics");
    w.view.rawTokens = true;
    w.view.zoom = Workspace::View::Zoom{0.5, 4.5, -0.5, 3.25};
    w.view.compareTask = QStringLiteral("sentiment");
    w.view.metricsView = QStringLiteral("flow");
    w.view.pooling = QStringLiteral("mean");
    w.figure = {6.75, 600};
    w.window = {QByteArray("\x01\x02geometry", 10), QByteArray("state\xff", 6)};
    return w;
}

std::string parseError(const QByteArray& json) {
    try {
        parseWorkspace(json, QStringLiteral("ws.attnscope"));
    } catch (const attnscope::Error& e) {
        return e.what();
    }
    return "(accepted)";
}

QByteArray withField(const char* field) {
    return QByteArray("{\"format\": \"attnscope-workspace\", \"version\": 1, \"model\": \"builtin:reverse-dot\", ") +
           field + "}";
}

// Waits for the lab's re-run of the current base trace.
void waitForShownTrace(WindowFixture& w, const std::function<void()>& action) {
    QSignalSpy changed(w.window.lab(), &LabController::shownTraceChanged);
    action();
    REQUIRE(changed.wait(30000));
}

}  // namespace

TEST_CASE("A workspace file keeps every field as written", "[ui][workspace]") {
    const Workspace w = everyField();
    const QByteArray json = workspaceJson(w);
    const Workspace r = parseWorkspace(json, QStringLiteral("ws.attnscope"));
    CHECK(workspaceJson(r) == json);  // the same bytes again: nothing lost, nothing added
    CHECK(r.input.text == w.input.text);
    CHECK(r.temperature == w.temperature);  // doubles survive exactly
    CHECK(r.view.zoom->queryUpper == 3.25);
    CHECK(r.masked.size() == 2);
    CHECK(r.masked[1].block == "cross");
    CHECK(r.lab.fit->temperature == 0.5);
    CHECK(r.window.state == w.window.state);
    CHECK(json.contains("\"version\": 2"));

    SECTION("relative paths are read relative to the file's folder") {
        const QByteArray rel =
                withField("\"input\": {\"image\": \"pics/cat.png\"}").replace("builtin:reverse-dot", "models/gpt2");
        const Workspace p = parseWorkspace(rel, QStringLiteral("ws.attnscope"), QStringLiteral("/data/study"));
        CHECK(p.model == QStringLiteral("/data/study/models/gpt2"));
        CHECK(p.input.image == QStringLiteral("/data/study/pics/cat.png"));
        CHECK(parseWorkspace(withField("\"device\": \"cpu\""), QStringLiteral("w"), QStringLiteral("/x")).model ==
              QStringLiteral("builtin:reverse-dot"));
    }
    SECTION("written whole or not at all") {
        const fs::path dir = freshDir("ws-atomic");
        const fs::path file = dir / "a.attnscope";
        writeWorkspace(w, qpath(file));
        CHECK(readWorkspace(qpath(file)).lab.features == 77);
        Workspace other = w;
        other.model = QStringLiteral("builtin:sentiment-dot");
        CHECK_THROWS_WITH(writeWorkspace(other, qpath(dir / "missing" / "b.attnscope")),
                          Catch::Contains("missing/b.attnscope"));
        CHECK(readWorkspace(qpath(file)).model == QStringLiteral("builtin:reverse-dot"));
        fs::remove_all(dir);
    }
}

TEST_CASE("Bad workspace files are refused naming the field", "[ui][workspace]") {
    CHECK_THAT(parseError("{not json"), Catch::StartsWith("ws.attnscope: not a workspace file"));
    CHECK_THAT(parseError("[1, 2]"), Catch::Contains("expected a JSON object"));
    CHECK_THAT(parseError("{\"format\": \"other\", \"version\": 1}"),
               Catch::Contains("format: expected \"attnscope-workspace\""));
    CHECK_THAT(parseError("{\"format\": \"attnscope-workspace\", \"model\": \"m\"}"),
               Catch::Contains("version: missing"));
    CHECK_THAT(parseError("{\"format\": \"attnscope-workspace\", \"version\": 3, \"model\": \"m\"}"),
               Catch::Contains("version: 3 was written by a newer AttnScope; this one reads version 2"));
    CHECK_THAT(parseError("{\"format\": \"attnscope-workspace\", \"version\": 1}"), Catch::Contains("model: missing"));
    CHECK_THAT(parseError(withField("\"colour\": 1")), Catch::Contains("ws.attnscope: colour: unknown field"));
    CHECK_THAT(parseError(withField("\"lab\": {\"variant\": \"dots\"}")),
               Catch::Contains("lab.variant: unknown 'dots' (use native, dot, linear, additive, hybrid)"));
    CHECK_THAT(parseError(withField("\"lab\": {\"gate\": 1.5}")),
               Catch::Contains("lab.gate: 1.5 is out of range (0 to 1)"));
    CHECK_THAT(parseError(withField("\"selection\": {\"layer\": 1.5}")),
               Catch::Contains("selection.layer: expected a whole number"));
    CHECK_THAT(parseError(withField("\"selection\": {\"head\": -1}")),
               Catch::Contains("selection.head: -1 is out of range"));
    CHECK_THAT(parseError(withField("\"temperature\": \"hot\"")), Catch::Contains("temperature: expected a number"));
    CHECK_THAT(parseError(withField("\"masked_heads\": [{\"layer\": 0, \"head\": 1}]")),
               Catch::Contains("masked_heads[0].block: missing"));
    CHECK_THAT(parseError(withField("\"masked_heads\": [3]")), Catch::Contains("masked_heads[0]: expected"));
    CHECK_THAT(parseError(withField("\"view\": {\"zoom\": {\"keys\": [2, 1], \"queries\": [0, 1]}}")),
               Catch::Contains("view.zoom.keys: lower must be below upper"));
    CHECK_THAT(parseError(withField("\"colors\": {\"colormap\": \"jet\"}")),
               Catch::Contains("colors.colormap: unknown 'jet'"));
    CHECK_THAT(parseError(withField("\"window\": {\"state\": \"@@@\"}")),
               Catch::Contains("window.state: expected base64 text"));
    CHECK_THAT(parseError(withField("\"inside_model\": {\"layers\": [0, \"x\"]}")),
               Catch::Contains("inside_model.layers: expected a whole number"));
    CHECK_THAT(parseError(withField("\"figure\": {\"width_in\": 40}")),
               Catch::Contains("figure.width_in: 40 is out of range (1 to 20)"));
    CHECK_THROWS_WITH(readWorkspace(QStringLiteral("/nonexistent/w.attnscope")),
                      Catch::Contains("/nonexistent/w.attnscope: cannot open"));
}

TEST_CASE("A saved workspace opens to the same view, and the CLI draws the same figure", "[ui][workspace][window]") {
    const fs::path dir = freshDir("ws-roundtrip");
    const fs::path file = dir / "study.attnscope";
    WindowFixture a;
    a.open(QStringLiteral("builtin:reverse-dot"));
    LabController* lab = a.window.lab();
    // A view with something of everything: another block and head, a temperature inside the
    // model, a masked head, the dot variant, colours, raw tokens and a zoom.
    a.window.selectHead(QStringLiteral("cross"), a.layer->maximum(), a.head->maximum());
    a.controls->colormapCombo()->setCurrentText(QStringLiteral("magma"));
    a.controls->scaleCombo()->setCurrentIndex(1);
    a.window.rawTokensAction()->setChecked(true);
    a.controls->temperature()->setTemperature(0.5);
    waitForShownTrace(a, [&] { lab->toggleMask(QStringLiteral("encoder"), 0, 1); });
    waitForShownTrace(a, [&] { lab->propagateCheck()->setChecked(true); });
    lab->panel()->setVariant(attnscope::LabVariant::Dot);
    REQUIRE(QTest::qWaitFor(
            [&] {
                return a.heatmap->title().contains(QStringLiteral("dot")) &&
                       a.heatmap->title().contains(QStringLiteral("masked"));
            },
            20000));
    const int n = a.heatmap->map().cols;
    MapZoom zoom = a.heatmap->zoom();
    zoom.keyLower = 0.5;
    zoom.keyUpper = std::min(n - 0.5, 5.5);
    a.heatmap->setZoom(zoom);
    REQUIRE(!a.heatmap->zoom().isWhole());
    REQUIRE(a.window.saveWorkspaceFile(qpath(file)));
    const Figure figureA = a.window.currentFigure();
    REQUIRE(figureA.panels.size() == 1);
    CHECK(figureA.panels.front().map.cols == a.heatmap->zoom().colEnd() - a.heatmap->zoom().colBegin());
    writeFigure(figureA, qpath(dir / "a.svg"));
    writeFigure(figureA, qpath(dir / "a.png"), 150);

    WindowFixture b;
    b.open(QStringLiteral("builtin:sentiment-dot"));  // another model, another view
    QSignalSpy restored(&b.window, &MainWindow::workspaceRestored);
    REQUIRE(b.window.openWorkspaceFile(qpath(file)));
    REQUIRE(restored.wait(60000));
    CHECK(b.session->modelSpec() == QStringLiteral("builtin:reverse-dot"));
    CHECK(b.heatmap->title() == a.heatmap->title());
    CHECK(b.heatmap->map().values == a.heatmap->map().values);
    CHECK(b.heatmap->zoom() == a.heatmap->zoom());
    CHECK(b.controls->colormap() == Colormap::Magma);
    CHECK(b.window.lab()->intervention().masked.size() == 1);
    CHECK(b.window.lab()->temperatureInside());
    // Every setting as saved (the window's geometry and dock state aside: both are Qt's bytes).
    Workspace wa = readWorkspace(qpath(file)), wb = b.window.currentWorkspace();
    wa.window = wb.window = {};
    CHECK(QString::fromUtf8(workspaceJson(wb)) == QString::fromUtf8(workspaceJson(wa)));
    writeFigure(b.window.currentFigure(), qpath(dir / "b.svg"));
    writeFigure(b.window.currentFigure(), qpath(dir / "b.png"), 150);
    CHECK(fileBytes(dir / "b.svg") == fileBytes(dir / "a.svg"));
    CHECK(fileBytes(dir / "b.png") == fileBytes(dir / "a.png"));

    // Headless, in this process and through the real CLI: the same bytes.
    const auto model = attnscope::Model::load("builtin:reverse-dot");
    Figure headless = workspaceFigure(*model, readWorkspace(qpath(file)));
    headless.widthIn = figureA.widthIn;
    writeFigure(headless, qpath(dir / "c.svg"));
    CHECK(fileBytes(dir / "c.svg") == fileBytes(dir / "a.svg"));
    const auto cli = runCli({"export", "--workspace", file.string(), "--out", (dir / "d.svg").string(), "--width-in",
                             std::to_string(figureA.widthIn)});
    INFO(cli.err);
    REQUIRE(cli.code == 0);
    CHECK(fileBytes(dir / "d.svg") == fileBytes(dir / "a.svg"));
    QSvgRenderer svg(qpath(dir / "d.svg"));
    CHECK(svg.isValid());
    fs::remove_all(dir);
}

TEST_CASE("A workspace with an additive fit opens with the same fit", "[ui][workspace][window]") {
    const fs::path dir = freshDir("ws-fit");
    const fs::path file = dir / "fit.attnscope";
    WindowFixture a;
    a.open(QStringLiteral("builtin:reverse-dot"));
    LabController* lab = a.window.lab();
    lab->panel()->fitStepsSpin()->setValue(25);
    lab->panel()->fitWidthSpin()->setValue(8);
    QSignalSpy fitted(lab->service(), &LabService::fitReady);
    lab->fitAdditive();
    REQUIRE(fitted.wait(60000));
    REQUIRE(QTest::qWaitFor([&] { return a.heatmap->title().contains(QStringLiteral("additive fit")); }, 20000));
    REQUIRE(a.window.saveWorkspaceFile(qpath(file)));
    REQUIRE(readWorkspace(qpath(file)).lab.fit.has_value());

    WindowFixture b;
    b.open(QStringLiteral("builtin:reverse-dot"));  // the same model: only the view changes
    QSignalSpy restored(&b.window, &MainWindow::workspaceRestored);
    REQUIRE(b.window.openWorkspaceFile(qpath(file)));
    REQUIRE(restored.wait(60000));
    CHECK(b.heatmap->title() == a.heatmap->title());
    CHECK(b.heatmap->map().values == a.heatmap->map().values);
    const auto model = attnscope::Model::load("builtin:reverse-dot");
    const Figure headless = workspaceFigure(*model, readWorkspace(qpath(file)));
    CHECK(headless.panels.front().map.values == a.heatmap->map().values);
    fs::remove_all(dir);
}

TEST_CASE("A bad workspace file shows one message and leaves the window as it was", "[ui][workspace][window]") {
    const fs::path dir = freshDir("ws-bad");
    WindowFixture w;
    w.open(QStringLiteral("builtin:reverse-dot"));
    const auto values = w.heatmap->map().values;
    QFile bad(qpath(dir / "bad.attnscope"));
    REQUIRE(bad.open(QIODevice::WriteOnly));
    bad.write(withField("\"lab\": {\"variant\": 3}"));
    bad.close();
    CHECK_FALSE(w.window.openWorkspaceFile(qpath(dir / "bad.attnscope")));
    const QString text = w.takeErrorDialog();
    CHECK(text.contains(QStringLiteral("Could not open the workspace")));
    CHECK(text.contains(QStringLiteral("bad.attnscope: lab.variant: expected a string")));
    CHECK(w.session->modelSpec() == QStringLiteral("builtin:reverse-dot"));
    CHECK(w.heatmap->map().values == values);
    fs::remove_all(dir);
}

TEST_CASE("The window's size and docks are kept from one start to the next", "[ui][workspace][window]") {
    QSize saved;
    {
        WindowFixture a;
        a.window.resize(1111, 777);
        auto* lab = a.window.findChild<QDockWidget*>(QStringLiteral("labDock"));
        REQUIRE(lab);
        a.window.addDockWidget(Qt::LeftDockWidgetArea, lab);
        QTest::qWait(50);
        saved = a.window.size();
        a.window.close();  // saves the layout
    }
    WindowFixture b;
    CHECK(b.window.size() != saved);  // a fresh window has its own default
    b.window.restoreWindowLayout();
    QTest::qWait(50);
    INFO(saved.width() << "x" << saved.height() << " -> " << b.window.width() << "x" << b.window.height());
    CHECK(b.window.size() == saved);
    CHECK(b.window.dockWidgetArea(b.window.findChild<QDockWidget*>(QStringLiteral("labDock"))) ==
          Qt::LeftDockWidgetArea);
    QSettings().remove(QStringLiteral("window"));  // later tests start from the default layout
}

}  // namespace test_workspace
