// The Model tab and the Explore overview follow the lab's variant, on a Llama-shaped folder with
// grouped-query attention, driven through the real widgets: switching the Lab dock to linear,
// additive (before and after a fit) and back, every thumbnail's pixels are core's pooled map of
// that kind (attnscope::labPooledMap) in the window's colouring, the layer × head map shows core's
// metrics of that kind (attnscope::labHeadMetrics), and both captions name the kind shown.
#include "panels/labpanel.h"
#include "panels/modelviewpanel.h"
#include "views/headmetricmap.h"
#include "controllers/labcontroller.h"
#include "controllers/modelviewcontroller.h"
#include "window_fixture.h"

#include "family_fixtures.h"
#include "gpt2_fixture.h"

#include "attnscope/lab/lab_views.h"

#include <QLabel>

#include <cmath>
#include <cstdlib>

namespace test_model_view_variants {

using namespace uitest;
using namespace attnscope::testing;

namespace {

constexpr int kLayers = 4, kHeads = 4;

std::filesystem::path writeSmallLlama() {
    LlamaSpec spec;
    spec.layers = kLayers;
    spec.heads = kHeads;
    spec.kvHeads = 2;
    const auto dir = freshDir("ui-model-view-variants");
    writeCheckpoint(dir, makeLlama(spec, 29));
    return dir;
}

// What the overview shows for the variant: core's pooled map of each head in the window's
// colouring, a null image where the head has no map under the variant (no additive fit).
std::vector<QImage> expectedThumbnails(const MainWindow& window, const attnscope::Trace& trace, const ShownVariant& v) {
    attnscope::PoolRequest request;
    request.outRows = request.outCols = 48;
    request.pooling = window.heatmap()->pooling();
    std::vector<QImage> images;
    for (int l = 0; l < kLayers; ++l)
        for (int h = 0; h < kHeads; ++h) {
            const attnscope::AdditiveFit* fit = attnscope::fitOf(v.fits, 0, l, h);
            if (!attnscope::labMapAvailable(trace.blocks()[0], v.spec.variant, fit)) {
                images.emplace_back();
                continue;
            }
            const attnscope::HeadMap m = attnscope::labPooledMap(trace, 0, l, h, request, v.spec, fit);
            images.push_back(pooledImage({m.cols, m.rows, std::vector<double>(m.values.begin(), m.values.end())},
                                         window.controls()->colormap(), window.controls()->colorScale()));
        }
    return images;
}

// The metric map's entropies equal core's for the variant; NaN (blank) for heads it leaves out.
bool showsEntropies(const HeadMetricMap& map, const std::vector<attnscope::HeadMetrics>& want) {
    std::vector<double> expected(kLayers * kHeads, std::nan(""));
    for (const auto& m : want) expected[std::size_t(m.layer * kHeads + m.head)] = m.entropy;
    for (int l = 0; l < kLayers; ++l)
        for (int h = 0; h < kHeads; ++h) {
            const double shown = map.value(l, h), core = expected[std::size_t(l * kHeads + h)];
            if (std::isnan(shown) != std::isnan(core)) return false;
            if (!std::isnan(core) && std::abs(shown - core) > 1e-12 * std::max(1.0, std::abs(core))) return false;
        }
    return true;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "The model view and the overview show the lab's variant", "[ui][modelview][lab]") {
    window.resize(1400, 900);
    open(qpath(writeSmallLlama()));
    const auto trace = session->trace();
    ModelViewController* mv = window.modelView();
    ModelViewPanel* panel = mv->panel();
    OverviewGrid* grid = panel->grid();
    HeadMetricMap* map = panel->metricMap();
    QComboBox* variant = window.lab()->panel()->variantCombo();
    window.tabs()->setCurrentWidget(panel);
    REQUIRE(panel->metricCombo()->currentData().toString() == QStringLiteral("entropy"));

    // Waits until the Model tab, the overview and the metric map show core's values for v.
    const auto waitForVariant = [&](const ShownVariant& v, const char* what) {
        INFO(what);
        const std::vector<QImage> thumbs = expectedThumbnails(window, *trace, v);
        const auto metrics = attnscope::labHeadMetrics(*trace, v.spec, v.fits);
        const bool shown = QTest::qWaitFor(
                [&] {
                    return grid->images() == thumbs && overview->images() == thumbs && showsEntropies(*map, metrics);
                },
                30000);
        INFO("thumbnails " << grid->images().size() << ", metrics of " << metrics.size() << " heads");
        REQUIRE(shown);
        CHECK(mv->metricsVariant() == v);
        return thumbs;
    };

    const ShownVariant own = window.lab()->shownVariant();
    REQUIRE(own.spec.variant == LabVariant::Native);
    REQUIRE(own.spec.map.temperature == 1.0);
    const std::vector<QImage> ownThumbs = waitForVariant(own, "the model's own maps");
    CHECK(grid->caption().contains(QStringLiteral("dot attention · T = 1")));
    CHECK(overview->caption().contains(QStringLiteral("dot attention · T = 1")));

    // Linear (elu+1): other pixels and other entropies, each core's.
    variant->setCurrentIndex(int(LabVariant::Linear));
    ShownVariant linear = window.lab()->shownVariant();
    REQUIRE(linear.spec.variant == LabVariant::Linear);
    REQUIRE(linear.spec.map.featureMap == attnscope::FeatureMap::Elu);
    const std::vector<QImage> linearThumbs = waitForVariant(linear, "linear elu+1");
    int changed = 0;
    for (std::size_t i = 0; i < ownThumbs.size(); ++i) changed += linearThumbs[i] != ownThumbs[i];
    CHECK(changed == kLayers * kHeads);
    CHECK(grid->caption().contains(QStringLiteral("linear elu+1 attention (lab)")));
    CHECK_FALSE(grid->caption().contains(QStringLiteral("T = ")));  // a linear map has no temperature
    CHECK(overview->caption().contains(QStringLiteral("linear elu+1 attention (lab)")));
    CHECK(panel->statusLabel()->text().contains(QStringLiteral("linear")));
    // The gate is the hybrid's: moving it keeps the linear maps (nothing is asked for again).
    QSlider* gate = window.lab()->panel()->gateSlider();
    gate->setValue(gate->value() - gate->minimum() > 10 ? gate->value() - 10
                                                        : gate->value() + 10);  // stays inside (0, 1)
    CHECK(window.lab()->shownVariant() == linear);

    // Relu: the feature map is part of the variant.
    window.lab()->panel()->featureMapCombo()->setCurrentIndex(1);
    ShownVariant relu = window.lab()->shownVariant();
    REQUIRE(relu.spec.map.featureMap == attnscope::FeatureMap::Relu);
    waitForVariant(relu, "linear relu");
    CHECK(grid->caption().contains(QStringLiteral("linear relu attention (lab)")));
    window.lab()->panel()->featureMapCombo()->setCurrentIndex(0);

    // Additive before any fit: no head has the map, every tile and cell is blank and the
    // captions say why.
    variant->setCurrentIndex(int(LabVariant::Additive));
    ShownVariant additive = window.lab()->shownVariant();
    REQUIRE(additive.fits.empty());
    waitForVariant(additive, "additive, no fit");
    CHECK(grid->caption().contains(QStringLiteral("additive attention (lab: 0 fitted heads)")));
    CHECK(panel->statusLabel()->text().contains(QStringLiteral("Fit additive")));

    // A fit of layer 2 head 3: that head's tile and cell are core's for the fit's map.
    layer->setValue(2);
    head->setValue(3);
    attnscope::AdditiveFitOptions fo;
    fo.width = 8;
    fo.steps = 25;
    window.lab()->fitAdditive({0, 2, 3}, fo);
    REQUIRE(QTest::qWaitFor([&] { return window.lab()->lastFit() != nullptr; }, 30000));
    ShownVariant fitted = window.lab()->shownVariant();
    REQUIRE(fitted.fits.size() == 1u);
    CHECK(fitted.fits[0].layer == 2);
    CHECK(fitted.fits[0].head == 3);
    const std::vector<QImage> fittedThumbs = waitForVariant(fitted, "additive, one fit");
    CHECK_FALSE(fittedThumbs[2 * kHeads + 3].isNull());
    CHECK(fittedThumbs[2 * kHeads + 3] != ownThumbs[2 * kHeads + 3]);
    CHECK(std::isfinite(map->value(2, 3)));
    CHECK(std::isnan(map->value(0, 0)));
    CHECK(grid->caption().contains(QStringLiteral("additive attention (lab: 1 fitted head)")));

    // Hybrid with the same fit: g·additive + (1 - g)·dot for that head.
    variant->setCurrentIndex(int(LabVariant::Hybrid));
    ShownVariant hybrid = window.lab()->shownVariant();
    REQUIRE(hybrid.fits.size() == 1u);
    waitForVariant(hybrid, "hybrid");
    CHECK(grid->caption().contains(QStringLiteral("hybrid g=")));

    // Back to the model's own maps: the first thumbnails and metrics again.
    variant->setCurrentIndex(int(LabVariant::Native));
    CHECK(waitForVariant(own, "the model's own maps again") == ownThumbs);
    CHECK_FALSE(grid->caption().contains(QStringLiteral("(lab")));
    mv->service()->waitForWorkers();
    window.lab()->shutdown();
}

}  // namespace test_model_view_variants
