// The router strip of the mixture-of-experts decoders (issue 34): under the map for a MoE model,
// its cells the Trace's top expert per layer and token in the figure's colours, the hover the
// router's probabilities, the shown layer framed, and the strip in the exported figure; hidden
// for a model without routers.
#include "window_fixture.h"

#include "figure/figure.h"
#include "fixtures_moe.h"
#include "views/routerstripview.h"

namespace test_router_strip {

using namespace uitest;
using namespace attnscope::testing;

namespace {

// The widget point at the centre of (layer, token).
QPoint cellCentre(const RouterStripView& view, int layer, int token) {
    for (int y = 0; y < view.height(); ++y)
        for (int x = 0; x < view.width(); ++x) {
            const auto cell = view.cellAt(QPointF(x, y));
            if (cell && cell->first == layer && cell->second == token) {
                int x1 = x, y1 = y;
                while (view.cellAt(QPointF(x1 + 1, y)) == cell) ++x1;
                while (view.cellAt(QPointF(x, y1 + 1)) == cell) ++y1;
                return {(x + x1) / 2, (y + y1) / 2};
            }
        }
    FAIL("no cell " << layer << ", " << token);
    return {};
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "A MoE decoder shows its routers under the map, on hover and in the exported figure",
                 "[ui][window][moe]") {
    MoeFamilySpec spec;
    spec.type = "qwen2_moe";
    spec.mlpOnly = {1};
    const auto dir = freshDir("ui-qwen2moe");
    writeCheckpoint(dir, makeMoeFamily(spec, 71));
    open(qpath(dir));
    auto* strip = window.findChild<RouterStripView*>(QStringLiteral("routerStrip"));
    REQUIRE(strip);
    REQUIRE(QTest::qWaitFor([&] { return strip->isVisible() && strip->height() > 40; }, 5000));
    const attnscope::RouterTrace& r = traceRouter(*session->trace());
    REQUIRE(strip->strip());
    CHECK(strip->strip()->router.probabilities.size() == r.probabilities.size());
    CHECK(strip->strip()->router.chosen == r.chosen);

    // A routed cell's colour is its top expert's at that probability; the dense layer is grey.
    const QImage shot = strip->grab().toImage();
    const int token = r.tokens - 1, top = r.choice(2, token, 0);
    const QPoint routed = cellCentre(*strip, 2, token), dense = cellCentre(*strip, 1, 0);
    CHECK(shot.pixel(routed) == routerExpertColor(top, r.experts, r.probability(2, token, top)).rgb());
    CHECK(shot.pixel(dense) == kRouterDenseColor.rgb());

    // Hover: the router's probabilities of that token, the chosen experts first.
    QTest::mouseMove(strip, routed);
    REQUIRE(QTest::qWaitFor([&] { return !strip->hoverText().isEmpty(); }, 2000));
    CHECK(strip->hoverText().contains(QStringLiteral("layer 2 · token %1").arg(token)));
    CHECK(strip->hoverText().contains(QStringLiteral("e%1  %2").arg(top).arg(r.probability(2, token, top), 0, 'f', 4)));
    QTest::mouseMove(strip, dense);
    REQUIRE(QTest::qWaitFor([&] { return strip->hoverText().contains(QStringLiteral("dense MLP")); }, 2000));

    // The shown layer is framed; the figure carries the strip over the map's keys.
    layer->setValue(2);
    REQUIRE(QTest::qWaitFor([&] { return strip->strip()->layer == 2; }, 2000));
    const Figure f = window.currentFigure();
    REQUIRE(f.routerStrip);
    CHECK(f.routerStrip->tokenCount == r.tokens);
    Figure bare = f;
    bare.routerStrip.reset();
    CHECK(figureSizePoints(f).height() > figureSizePoints(bare).height());
    const auto png = freshDir("ui-router-figure") / "router.png";
    writeFigure(f, qpath(png), 150);
    CHECK(QImage(qpath(png)).height() > renderFigure(bare, 150).height());
}

TEST_CASE_METHOD(WindowFixture, "A model without routers hides the strip and exports no strip", "[ui][window][moe]") {
    openStandIn();
    auto* strip = window.findChild<RouterStripView*>(QStringLiteral("routerStrip"));
    REQUIRE(strip);
    CHECK(!strip->isVisible());
    CHECK(!window.currentFigure().routerStrip);
}

}  // namespace test_router_strip
