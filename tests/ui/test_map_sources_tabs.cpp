// The Show selector's source on the tabs beyond Explore (issue 31's GUI): the Metrics tab's table
// and the Model view's metrics are core's measures of the shown source's maps
// (attnscope::sourceHeadMetrics, gradient maps included), the Model view's thumbnails are the
// source's, and the Compare tab shows each kind's map of the source where core computes it, core's
// reason in its place where not (ALTI of cross-attention; the gradient sources, which do not cover
// the built-in models).
#include "source_fixture.h"

#include "controllers/labcontroller.h"
#include "controllers/modelviewcontroller.h"
#include "controllers/sourcecontroller.h"
#include "figure/figure.h"
#include "figure/sourceview.h"
#include "panels/metricspanel.h"
#include "panels/modelviewpanel.h"
#include "panels/sourcepicker.h"
#include "state/viewstate.h"
#include "views/headmetricmap.h"

#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/analysis/source_metrics.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/lab/lab_views.h"

#include <QLabel>
#include <QTableView>

#include <cmath>

namespace test_map_sources_tabs {

using namespace uitest;
using attnscope::MapSource;

namespace {

// core's metrics of a Trace-based source over the blocks it covers.
std::vector<attnscope::HeadMetrics> coreMetrics(const attnscope::Trace& trace, MapSource source) {
    return attnscope::sourceHeadMetrics(trace, source, attnscope::traceMapProvider(trace, source),
                                        attnscope::sourceCoveredBlocks(trace, source));
}

// The same number up to the order of core's sums.
bool same(double shown, double core) { return std::abs(shown - core) <= 1e-9 * std::max(1.0, std::abs(core)); }

// Whether the Metrics tab's table shows exactly these rows (block, layer, head, entropy, distance, sink).
bool tableShows(const MetricsPanel& panel, const std::vector<attnscope::HeadMetrics>& want) {
    const auto& shown = panel.model()->metrics();
    if (shown.size() != want.size()) return false;
    for (std::size_t i = 0; i < want.size(); ++i)
        if (shown[i].block != want[i].block || shown[i].layer != want[i].layer || shown[i].head != want[i].head ||
            !same(shown[i].entropy, want[i].entropy) || !same(shown[i].meanDistance, want[i].meanDistance) ||
            !same(shown[i].sink, want[i].sink) || shown[i].pattern != want[i].pattern)
            return false;
    return true;
}

// Whether the Model view shows these metrics on every (layer, head) of block 0: a per-head
// source's own, a per-layer source's layer value on each of its heads.
bool modelViewShows(const ModelViewPanel& panel, const std::vector<attnscope::HeadMetrics>& want, int layers, int heads,
                    bool perHead) {
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) {
            const attnscope::HeadMetrics* m = panel.metricsOf(l, h);
            const attnscope::HeadMetrics& w = want[std::size_t(perHead ? l * heads + h : l)];
            if (!m || !same(m->entropy, w.entropy) || !same(m->meanDistance, w.meanDistance)) return false;
        }
    return true;
}

// The tiles MapService draws for a source: core's maps pooled to 48 and coloured over the block.
std::vector<QImage> sourceTileImages(const std::function<attnscope::HeadMap(int, int)>& mapOf, int layers, int heads,
                                     MapSource source, const ControlPanel* controls) {
    attnscope::PoolRequest request;
    request.outRows = request.outCols = 48;
    std::vector<PooledMap> tiles;
    std::vector<float> all;
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) {
            const attnscope::HeadMap m = attnscope::poolHeadMap(mapOf(l, h), request);
            tiles.push_back({m.cols, m.rows, std::vector<double>(m.values.begin(), m.values.end())});
            all.insert(all.end(), m.values.begin(), m.values.end());
        }
    const SourceColors c = sourceColors(source, controls->colormap(), controls->colorScale().type, all);
    std::vector<QImage> images;
    for (const auto& t : tiles) images.push_back(pooledImage(t, c.colormap, c.scale));
    return images;
}

bool sameImages(const std::vector<QImage>& a, const std::vector<QImage>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!sameImage(a[i], b[i])) return false;
    return true;
}

// Whether Compare's kind i shows core's map of the source on the shown block (exactly), or, where
// core refuses it, core's reason in the map's place.
bool compareShows(const ComparePanel& compare, int i, MapSource source, const QString& block, int layer, int head) {
    if (!compare.lastRun().traces[std::size_t(i)] || !compare.lastRun().models[std::size_t(i)]) return false;
    const auto& t = *compare.lastRun().traces[std::size_t(i)];
    const int b = t.blockIndex(block.toStdString());
    try {
        if (attnscope::gradientSource(source))
            attnscope::gradientClassLabels(*compare.lastRun().models[std::size_t(i)]);
        const attnscope::HeadMap want = attnscope::sourceMap(t, source, b, layer, head);
        const attnscope::HeadMap& got = compare.view(i)->map();
        return got.rows == want.rows && got.cols == want.cols && got.values == want.values &&
               compare.view(i)->title().contains(QString::fromUtf8(attnscope::sourceLabel(source))) &&
               compare.view(i)->axisNames().values == sourceValueName(source);
    } catch (const std::exception& e) {
        return compare.view(i)->map().rows == 0 && compare.view(i)->title().contains(QString::fromStdString(e.what()));
    }
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "Show: the Metrics tab measures the shown source's maps", "[ui][sources][metrics]") {
    openStandIn();
    MetricsPanel* panel = window.lab()->metrics();
    window.tabs()->setCurrentWidget(panel);
    choose(*this, MapSource::ValueNorm);
    auto trace = waitForValues(*this);
    const auto& info = trace->blocks()[0];
    {  // one row per head, core's measures of the value-weighted maps
        const auto want = coreMetrics(*trace, MapSource::ValueNorm);
        REQUIRE(want.size() == std::size_t(info.layers * info.heads));
        CHECK(QTest::qWaitFor([&] { return tableShows(*panel, want); }, 30000));
        CHECK(panel->table()->isColumnHidden(HeadMetricsModel::KlLinear));  // compares variants of the weights
    }
    {  // a per-layer source: one row per layer, its head "all"; a click keeps the window's head
        choose(*this, MapSource::Alti);
        trace = waitForValues(*this);
        const auto want = coreMetrics(*trace, MapSource::Alti);
        REQUIRE(want.size() == std::size_t(info.layers));
        CHECK(QTest::qWaitFor([&] { return tableShows(*panel, want); }, 30000));
        CHECK(panel->model()->data(panel->model()->index(0, HeadMetricsModel::Head)).toString() ==
              QStringLiteral("all"));
        head->setValue(2);
        emit panel->headSelected(QString::fromStdString(info.name), 1, -1);
        CHECK(layer->value() == 1);
        CHECK(head->value() == 2);
        // The block view stays the weights' and says so.
        CHECK(QTest::qWaitFor([&] { return panel->blockView()->title().contains(QStringLiteral("of the weights")); },
                              20000));
    }
    {  // back to the weights: the table is the weights' metrics again, with KL
        choose(*this, MapSource::Weights);
        const auto weights = attnscope::headMetrics(*session->trace());
        CHECK(QTest::qWaitFor(
                [&] {
                    const auto& shown = panel->model()->metrics();
                    return shown.size() == weights.size() && same(shown.back().entropy, weights.back().entropy);
                },
                30000));
        CHECK_FALSE(panel->table()->isColumnHidden(HeadMetricsModel::KlLinear));
    }
}

TEST_CASE_METHOD(WindowFixture, "Show: the Model view shows the source's thumbnails and metrics",
                 "[ui][sources][modelview]") {
    window.resize(1500, 950);
    openStandIn();
    ModelViewController* mv = window.modelView();
    ModelViewPanel* panel = mv->panel();
    window.tabs()->setCurrentWidget(panel);
    choose(*this, MapSource::ValueNormLayer);
    const auto trace = waitForValues(*this);
    const auto& info = trace->blocks()[0];
    const auto want = coreMetrics(*trace, MapSource::ValueNormLayer);
    REQUIRE(want.size() == std::size_t(info.layers));
    CHECK(QTest::qWaitFor([&] { return modelViewShows(*panel, want, info.layers, info.heads, false); }, 30000));
    CHECK(panel->grid()->caption().contains(QStringLiteral("Value-weighted (layer)")));
    CHECK(panel->statusLabel()->text().contains(QStringLiteral("Value-weighted (layer)")));
    // The thumbnails: each layer's map on each of its heads, coloured over the block's range.
    const auto tiles = sourceTileImages(
            [&](int l, int) { return attnscope::sourceMap(*trace, MapSource::ValueNormLayer, 0, l, 0); }, info.layers,
            info.heads, MapSource::ValueNormLayer, controls);
    CHECK(QTest::qWaitFor([&] { return sameImages(panel->grid()->images(), tiles); }, 30000));
    // The layer × head map draws the chosen metric of those maps.
    CHECK(QTest::qWaitFor([&] { return same(panel->metricMap()->value(1, 2), want[1].entropy); }, 20000));

    SECTION("a gradient source: core's metrics of its maps once the gradients arrive") {
        choose(*this, MapSource::GradWeighted);
        const auto t = session->trace();
        attnscope::GradientInput input;
        input.text.ids = t->ids();
        const auto g = std::make_shared<const attnscope::GradientMaps>(
                attnscope::gradientSources(*session->model(), input, {}));
        const auto grad = attnscope::sourceHeadMetrics(*t, MapSource::GradWeighted,
                                                       attnscope::gradientMapProvider(g, MapSource::GradWeighted), {0});
        CHECK(QTest::qWaitFor([&] { return modelViewShows(*panel, grad, info.layers, info.heads, true); }, 60000));
        CHECK(panel->grid()->caption().contains(QString::fromUtf8(attnscope::sourceLabel(MapSource::GradWeighted))));
    }
}

TEST_CASE_METHOD(WindowFixture,
                 "Show: Compare shows each kind's map of the source, or core's reason where it does not apply",
                 "[ui][sources][compare]") {
    open(QStringLiteral("builtin:reverse-dot"));  // the window shows cross-attention, layer 1, head 0
    const int layer = this->layer->value(), head = this->head->value();
    choose(*this, MapSource::ValueNorm);
    waitForValues(*this);
    ComparePanel* compare = window.compare();
    window.tabs()->setCurrentWidget(compare);
    auto* note = window.findChild<QLabel*>(QStringLiteral("sourceTabNote"));
    REQUIRE(note);
    REQUIRE(QTest::qWaitFor([&] { return compare->lastRun().traces[2] != nullptr; }, 60000));
    CHECK(compare->source() == MapSource::ValueNorm);
    const QString cross = QStringLiteral("cross");
    for (int i = 0; i < 3; ++i) {  // dot, additive, linear: each kind's own value-norm of cross-attention
        INFO("kind " << i);
        CHECK(QTest::qWaitFor([&] { return compareShows(*compare, i, MapSource::ValueNorm, cross, layer, head); },
                              20000));
        CHECK(compare->view(i)->map().rows > 0);
    }
    CHECK_FALSE(note->isVisible());
    for (MapSource source : {MapSource::ValueNormLayer, MapSource::Alti}) {
        choose(*this, source);
        for (int i = 0; i < 3; ++i) {
            INFO("kind " << i << ", " << attnscope::sourceName(source));
            CHECK(QTest::qWaitFor([&] { return compareShows(*compare, i, source, cross, layer, head); }, 20000));
            // ALTI mixes two streams in cross-attention: core's one-line reason in each place
            CHECK((compare->view(i)->map().rows == 0) == (source == MapSource::Alti));
        }
    }
    CHECK(compare->view(0)->title().contains(QStringLiteral("mixes the decoder's and the encoder's streams")));
    {  // the export names the source in its title and colour bar
        choose(*this, MapSource::ValueNorm);
        REQUIRE(QTest::qWaitFor([&] { return compareShows(*compare, 2, MapSource::ValueNorm, cross, layer, head); },
                                20000));
        const Figure f = compare->figure();
        REQUIRE(f.panels.size() == 3u);
        CHECK(f.title.contains(QStringLiteral("Value-weighted")));
        CHECK(f.colorbarLabel == sourceValueName(MapSource::ValueNorm));
        CHECK(f.panels[1].map.values == compare->view(1)->map().values);
    }
    // On the encoder (one stream) ALTI and its rollout are each kind's own.
    controls->blockCombo()->setCurrentIndex(controls->blockCombo()->findText(QStringLiteral("encoder")));
    const QString encoder = QStringLiteral("encoder");
    for (MapSource source : {MapSource::Alti, MapSource::AltiRollout}) {
        choose(*this, source);
        for (int i = 0; i < 3; ++i) {
            INFO("kind " << i << ", " << attnscope::sourceName(source));
            CHECK(QTest::qWaitFor([&] { return compareShows(*compare, i, source, encoder, layer, head); }, 20000));
            CHECK(compare->view(i)->map().rows > 0);
        }
    }
    // The gradient sources do not cover the built-in models (the window offers them on a pretrained
    // model only): core's reason in each place, and the tab says so.
    window.showExplore();
    choose(*this, MapSource::Weights);  // open() waits for the weights' map
    openStandIn();
    choose(*this, MapSource::GradWeighted);
    REQUIRE(window.state()->mapSource() == MapSource::GradWeighted);
    window.tabs()->setCurrentWidget(compare);
    for (int i = 0; i < 3; ++i) {
        INFO("kind " << i);
        CHECK(QTest::qWaitFor([&] { return compareShows(*compare, i, MapSource::GradWeighted, cross, layer, head); },
                              20000));
        CHECK(compare->view(i)->title().contains(QStringLiteral("gradient sources: ")));
    }
    CHECK(note->isVisible());
    CHECK(note->toolTip().contains(QStringLiteral("gradient sources do not cover")));
    CHECK(compare->findChild<QLabel*>(QStringLiteral("compareSelection"))->text().contains(QStringLiteral("says why")));
    // Back to the weights: the three maps again.
    choose(*this, MapSource::Weights);
    CHECK(QTest::qWaitFor([&] { return compare->view(0)->map().rows > 0 && compare->view(2)->map().rows > 0; }, 20000));
    CHECK_FALSE(note->isVisible());
}

}  // namespace test_map_sources_tabs
