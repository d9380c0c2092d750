// The Model tab on a 12-layer × 12-head Llama-shaped folder, driven through the real widgets: the
// thumbnails grow to fill the space (larger than the Explore column's, the whole grid visible),
// each layer's heads order by a metric of core's list, frames carry the pattern class, the
// layer × head map shows core's values of the chosen metric, and clicks on either select the
// head in the window (and back: the window's selection and temperature move the views).
#include "panels/modelviewpanel.h"
#include "views/headmetricmap.h"
#include "controllers/modelviewcontroller.h"
#include "window_fixture.h"
#include "panels/labpanel.h"
#include "controllers/labcontroller.h"

#include "family_fixtures.h"

#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/analysis/trace_metrics.h"

#include <QCheckBox>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace test_model_view {

using namespace uitest;
using namespace attnscope::testing;

namespace {

std::filesystem::path writeWideLlama() {
    LlamaSpec spec;
    spec.layers = 12;
    spec.heads = 12;
    spec.kvHeads = 4;
    spec.hidden = 48;
    spec.inner = 64;
    const auto dir = freshDir("ui-model-view-llama");
    writeCheckpoint(dir, makeLlama(spec, 71));
    return dir;
}

// The same number up to the order of core's sums (its workers split rows by the cores).
// Both NaN (a detector before it runs) counts as the same.
bool same(double shown, double core) {
    if (std::isnan(shown) || std::isnan(core)) return std::isnan(shown) && std::isnan(core);
    return std::abs(shown - core) <= 1e-12 * std::max(1.0, std::abs(core));
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "The model view fills the space, orders and frames heads and maps core's metrics",
                 "[ui][modelview]") {
    window.resize(1500, 950);
    open(qpath(writeWideLlama()));
    const auto trace = session->trace();
    ModelViewController* mv = window.modelView();
    ModelViewPanel* panel = mv->panel();
    OverviewGrid* grid = panel->grid();
    HeadMetricMap* map = panel->metricMap();
    window.tabs()->setCurrentWidget(panel);

    // Metrics at T = 1 from core, all 144 heads.
    attnscope::MetricsOptions mo;
    const std::vector<attnscope::HeadMetrics> want = attnscope::headMetrics(*trace, mo);
    REQUIRE(want.size() == 144u);
    auto of = [&](const std::vector<attnscope::HeadMetrics>& all, int l, int h) {
        return all[std::size_t(l * 12 + h)];
    };
    REQUIRE(QTest::qWaitFor(
            [&] {
                return mv->metricsTrace() == trace && std::isfinite(map->value(11, 11)) && panel->metricsOf(11, 11);
            },
            30000));
    QTest::qWait(20);

    // The thumbnails: the Explore overview's images, larger, and the whole 12 × 12 grid visible.
    REQUIRE(QTest::qWaitFor(
            [&] { return grid->images().size() == 144u && grid->images() == window.overview()->images(); }, 20000));
    INFO("model view tile " << grid->tileSize() << " px, explore tile " << window.overview()->tileSize() << " px");
    CHECK(grid->tileSize() > window.overview()->tileSize());
    CHECK(grid->tileSize() >= 1.5 * window.overview()->tileSize());
    CHECK(grid->tileRect(11, 11).bottom() < grid->height());
    CHECK(grid->tileRect(11, 11).right() < grid->width());
    // The Explore column: its 12 heads are all drawn, at a legible size (issue 29: no longer
    // shrunk to a few pixels; a grid too wide for its column asks for the width and scrolls).
    CHECK(window.overview()->tileRect(11, 11).right() < window.overview()->width());
    {
        OverviewGrid narrow;
        narrow.setShape(12, 12);
        narrow.resize(200, 400);
        CHECK(narrow.tileSize() >= OverviewGrid::kMinTile);
        CHECK(narrow.minimumSizeHint().width() > 200);
        narrow.resize(narrow.minimumSizeHint().width(), 400);
        CHECK(narrow.tileRect(11, 11).right() < narrow.width());
        CHECK(narrow.tileRect(0, 1).left() > narrow.tileRect(0, 0).right());  // tiles do not overlap
    }

    // Every metric of core's list, as the map shows it.
    const auto& list = attnscope::headMetricList();
    REQUIRE(panel->metricCombo()->count() == int(list.size()));
    for (int i = 0; i < int(list.size()); ++i) {
        panel->metricCombo()->setCurrentIndex(i);
        INFO("metric " << list[std::size_t(i)].key);
        int bad = 0;
        for (int l = 0; l < 12; ++l)
            for (int h = 0; h < 12; ++h) bad += !same(map->value(l, h), list[std::size_t(i)].value(of(want, l, h)));
        CHECK(bad == 0);
        CHECK(map->metricName() == QString::fromUtf8(list[std::size_t(i)].title));
    }

    // Order by entropy, largest first: each layer's heads by core's entropy.
    panel->orderCombo()->setCurrentIndex(panel->orderCombo()->findData(QStringLiteral("entropy")));
    REQUIRE(grid->headOrder().size() == 12u);
    for (int l = 0; l < 12; ++l) {
        std::vector<int> heads(12);
        std::iota(heads.begin(), heads.end(), 0);
        std::stable_sort(heads.begin(), heads.end(),
                         [&](int a, int b) { return of(want, l, a).entropy > of(want, l, b).entropy; });
        CHECK(grid->headOrder()[std::size_t(l)] == heads);
    }
    panel->descendingCheck()->setChecked(false);
    CHECK(of(want, 4, grid->headOrder()[4].front()).entropy <= of(want, 4, grid->headOrder()[4].back()).entropy);

    // Frames: the pattern class of each head.
    REQUIRE(grid->frameColors().size() == 144u);
    for (int i = 0; i < 144; ++i)
        CHECK(grid->frameColors()[std::size_t(i)] == patternColor(want[std::size_t(i)].pattern));
    panel->framesCheck()->setChecked(false);
    CHECK(grid->frameColors().empty());
    panel->framesCheck()->setChecked(true);

    // A click on an ordered thumbnail selects that head in the window (and the heat map shows it).
    const int firstOfLayer3 = grid->headOrder()[3].front();
    QTest::mouseClick(grid, Qt::LeftButton, {}, grid->tileRect(3, firstOfLayer3).center());
    CHECK(layer->value() == 3);
    CHECK(head->value() == firstOfLayer3);
    CHECK(map->cellRect(3, firstOfLayer3).isValid());
    waitForMap(trace->map(0, 3, firstOfLayer3));
    // A click on the metric map does the same; both views mark it.
    QTest::mouseClick(map, Qt::LeftButton, {}, map->cellRect(7, 5).center());
    CHECK(layer->value() == 7);
    CHECK(head->value() == 5);
    CHECK(grid->selectedLayer() == 7);
    CHECK(grid->selectedHead() == 5);
    waitForMap(trace->map(0, 7, 5));
    // The window's spin boxes move both views.
    head->setValue(9);
    CHECK(grid->selectedHead() == 9);
    CHECK(window.overview()->selectedHead() == 9);

    // The temperature: metrics again at T.
    slider->setValue(slider->maximum());
    const double t = controls->temperature()->temperature();
    REQUIRE(t > 1.0);
    mo.map.temperature = t;
    const auto atT = attnscope::headMetrics(*trace, mo);
    panel->metricCombo()->setCurrentIndex(panel->metricCombo()->findData(QStringLiteral("entropy")));
    const bool followed = QTest::qWaitFor(
            [&] {
                for (int l = 0; l < 12; ++l)
                    for (int h = 0; h < 12; ++h)
                        if (!same(map->value(l, h), of(atT, l, h).entropy)) return false;
                return true;
            },
            30000);
    CHECK(followed);

    // The tab's State round-trips through its widgets; unknown keys leave a choice as it is.
    ModelViewController::State st;
    st.orderKey = "previous";
    st.descending = false;
    st.frames = false;
    st.metricKey = "mean_distance";
    mv->setState(st);
    ModelViewController::State back = mv->state();
    CHECK(back.orderKey == "previous");
    CHECK_FALSE(back.descending);
    CHECK_FALSE(back.frames);
    CHECK(back.metricKey == "mean_distance");
    CHECK(panel->mapMetric().key == std::string("mean_distance"));
    st.orderKey = "no such metric";
    st.metricKey = "";
    mv->setState(st);
    back = mv->state();
    CHECK(back.orderKey == "previous");
    CHECK(back.metricKey == "mean_distance");
    st.orderKey.clear();  // the natural order
    st.metricKey = "entropy";
    mv->setState(st);
    CHECK(mv->state().orderKey.empty());
    CHECK(panel->orderMetric() == nullptr);

    // The caption names the kind of attention shown: the model's own, or the lab's variant
    // (test_model_view_variants.cpp checks the maps themselves).
    CHECK(grid->caption().contains(QStringLiteral("dot attention")));
    window.lab()->panel()->variantCombo()->setCurrentIndex(int(LabVariant::Linear));
    CHECK(grid->caption().contains(QStringLiteral("linear elu+1 attention (lab)")));
    window.lab()->panel()->variantCombo()->setCurrentIndex(int(LabVariant::Native));
    CHECK(grid->caption().contains(QStringLiteral("dot attention")));
    CHECK_FALSE(grid->caption().contains(QStringLiteral("(lab")));
    mv->service()->waitForWorkers();
}

TEST_CASE_METHOD(WindowFixture, "The model view on a built-in encoder-decoder follows the block", "[ui][modelview]") {
    open(QStringLiteral("builtin:reverse-dot"));
    ModelViewPanel* panel = window.modelView()->panel();
    window.tabs()->setCurrentWidget(panel);
    const auto trace = session->trace();
    const auto want = attnscope::headMetrics(*trace);
    for (int b = 0; b < int(trace->blocks().size()); ++b) {
        controls->blockCombo()->setCurrentIndex(b);
        const auto& info = trace->blocks()[std::size_t(b)];
        REQUIRE(QTest::qWaitFor([&] { return panel->metricsOf(info.layers - 1, info.heads - 1); }, 20000));
        CHECK(panel->grid()->layers() == info.layers);
        CHECK(panel->grid()->heads() == info.heads);
        for (const auto& m : want)
            if (m.block == info.name) CHECK(same(panel->metricMap()->value(m.layer, m.head), m.entropy));
    }
    window.modelView()->service()->waitForWorkers();
}

}  // namespace test_model_view
