// File > Open Attention File through the real window: maps written by `attention` (here by the
// project's npy writer from a built-in model's run) replace the model; the heat map, the
// overview, the display temperature, the metrics and the export work from them; what needs Q/K
// is off with a reason; a bad file shows one line naming it; opening a model brings it all back.
#include "window_fixture.h"

#include "figure/figure.h"
#include "panels/labpanel.h"
#include "panels/metricspanel.h"
#include "controllers/labcontroller.h"

#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/attention/attention_file.h"
#include "attnscope/io/npy.h"
#include "gpt2_fixture.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>

#include <nlohmann/json.hpp>

#include <fstream>

namespace test_attention_file {

using namespace uitest;

namespace {

// The model's maps of block 0 as attention.npy + tokens.json, the layout `attention` writes.
void writeAttentionFiles(const attnscope::Trace& trace, const std::filesystem::path& dir) {
    const auto& info = trace.blocks()[0];
    const auto first = trace.map(0, 0, 0);
    attnscope::NpyWriter w(dir / "attention.npy", {info.layers, info.heads, first.rows, first.cols});
    for (int l = 0; l < info.layers; ++l)
        for (int h = 0; h < info.heads; ++h) {
            const auto m = trace.map(0, l, h);
            w.append(m.values.data(), m.values.size());
        }
    w.finish();
    nlohmann::json tokens = {{"ids", trace.ids()}, {"tokens", trace.tokens()}};
    tokens["blocks"]["self"] = {{"queries", info.queryTokens}, {"keys", info.keyTokens}};
    std::ofstream(dir / "tokens.json") << tokens.dump();
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "An attention file opens in the window's views; what needs Q/K says why it is off",
                 "[ui][window][attention-file]") {
    open(QStringLiteral("builtin:sentiment-dot"));
    const auto model = session->trace();
    const auto dir = attnscope::testing::freshDir("ui-attention-file");
    writeAttentionFiles(*model, dir);

    // File > Open Attention File… is in the menu, with its dialog.
    auto* action = window.findChild<QAction*>(QStringLiteral("openAttentionFileAction"));
    REQUIRE(action);
    CHECK(window.findChild<QMenu*>(QStringLiteral("fileMenu"))->actions().contains(action));
    action->trigger();
    auto* dialog = window.findChild<QFileDialog*>(QStringLiteral("openAttentionDialog"));
    REQUIRE(dialog);
    CHECK(dialog->fileMode() == QFileDialog::ExistingFiles);
    dialog->close();

    QSignalSpy loaded(session, &Session::attentionFileLoaded);
    QSignalSpy traced(session, &Session::traceReady);
    window.openAttentionFile(qpath(dir / "attention.npy"));  // tokens.json beside it is found
    REQUIRE(loaded.wait(20000));
    REQUIRE(QTest::qWaitFor([&] { return traced.count() > 0; }, 20000));
    const auto trace = session->trace();
    REQUIRE(trace);
    CHECK(attnscope::mapsOnly(*trace));
    CHECK_FALSE(session->model());
    CHECK(window.windowTitle().contains(QStringLiteral("attention.npy")));
    CHECK(controls->modelLabel()->text().contains(QStringLiteral("Attention file")));

    // Heat map and overview: the file's maps, labelled with its tokens.
    layer->setValue(1);
    head->setValue(1);
    waitForMap(model->map(0, 1, 1));
    CHECK(heatmap->queryLabels() == toQt(model->blocks()[0].queryTokens));
    const int heads = model->blocks()[0].layers * model->blocks()[0].heads;
    REQUIRE(QTest::qWaitFor([&] { return int(overview->images().size()) == heads; }, 20000));

    // The display temperature works on the stored maps.
    controls->temperature()->setTemperature(2.0);
    attnscope::MapOptions warm;
    warm.temperature = controls->temperature()->temperature();
    waitForMap(trace->map(0, 1, 1, warm));
    const auto fromModel = model->map(0, 1, 1, warm);
    for (std::size_t i = 0; i < fromModel.values.size(); ++i)
        CHECK(heatmap->map().values[i] == Approx(fromModel.values[i]).margin(2e-5));
    controls->temperature()->setTemperature(1.0);

    // What needs Q/K is off, with the reason.
    LabController* lab = window.lab();
    CHECK_FALSE(lab->panel()->isEnabled());
    CHECK(lab->panel()->toolTip().contains(QStringLiteral("no queries and keys")));
    CHECK_FALSE(lab->propagateCheck()->isEnabled());
    CHECK(window.findChild<QDockWidget*>(QStringLiteral("labDock"))->windowTitle().contains(QStringLiteral("no Q/K")));
    CHECK_FALSE(run->isEnabled());
    CHECK(controls->temperature()->toolTip().contains(QStringLiteral("softmax(log A / T)")));

    // Metrics from the maps, as core computes them for the model's own trace (no KL to linear).
    window.tabs()->setCurrentWidget(lab->metrics());
    const auto expected = attnscope::headMetrics(*model, attnscope::MetricsOptions{});
    REQUIRE(QTest::qWaitFor([&] { return lab->metrics()->model()->rowCount() == int(expected.size()); }, 20000));
    for (int r = 0; r < int(expected.size()); ++r) {
        CHECK(lab->metrics()->model()->index(r, HeadMetricsModel::Entropy).data(Qt::UserRole).toDouble() ==
              Approx(expected[std::size_t(r)].entropy).margin(1e-6));
        CHECK(lab->metrics()->model()->index(r, HeadMetricsModel::KlLinear).data(Qt::UserRole).toDouble() == 0.0);
    }
    window.tabs()->setCurrentIndex(0);

    // Export: the figure and the map data of the shown head.
    waitForMap(model->map(0, 1, 1));
    const Figure figure = window.currentFigure();
    REQUIRE(figure.panels.size() == 1);
    CHECK(figure.panels[0].map.values == model->map(0, 1, 1).values);
    CHECK(figure.panels[0].queryLabels == toQt(model->blocks()[0].queryTokens));
    REQUIRE(window.writeCurrentMapData(qpath(dir / "head.csv")));
    CHECK(std::filesystem::file_size(dir / "head.csv") > 0);

    // A bad file: one line naming it; the shown maps stay.
    std::ofstream(dir / "bad.npy") << "\x93NUMPY\x01";
    window.openAttentionFile(qpath(dir / "bad.npy"));
    const QString error = takeErrorDialog();
    CHECK(error.contains(QStringLiteral("Could not open the attention file")));
    CHECK(error.contains(QStringLiteral("bad.npy")));
    CHECK(session->trace() == trace);

    // Opening a model again switches the lab and the input back on.
    open(QStringLiteral("builtin:sentiment-dot"));
    CHECK(lab->panel()->isEnabled());
    CHECK(lab->propagateCheck()->isEnabled());
    CHECK(run->isEnabled());
    CHECK(window.findChild<QDockWidget*>(QStringLiteral("labDock"))->windowTitle() == QStringLiteral("Lab"));
}

}  // namespace test_attention_file
