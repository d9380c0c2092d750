// Zooming the heat map: MapZoom's maths without a GUI, then a HeatmapView on a long map whose
// zoom changes the visible range and brings every token's label onto the axes.
#include "views/heatmapview.h"
#include "views/mapzoom.h"

#include <catch2/catch.hpp>

#include <QApplication>
#include <QTest>

namespace test_zoom {

TEST_CASE("MapZoom zooms about a point, pans and fits rubber bands inside the map", "[ui][zoom]") {
    const MapZoom whole = MapZoom::whole(1000, 800);
    CHECK(whole.isWhole());
    CHECK(whole.rowBegin() == 0);
    CHECK(whole.rowEnd() == 1000);
    CHECK(whole.colEnd() == 800);

    // Zoom in 4x about key 200, query 300: that point keeps its place on screen.
    const MapZoom in = whole.zoomedAt(200, 300, 4.0);
    CHECK(in.keyUpper - in.keyLower == Approx(200.0));
    CHECK(in.queryUpper - in.queryLower == Approx(250.0));
    CHECK((200 - in.keyLower) / (in.keyUpper - in.keyLower) == Approx((200 + 0.5) / 800.0));
    CHECK((300 - in.queryLower) / (in.queryUpper - in.queryLower) == Approx((300 + 0.5) / 1000.0));
    CHECK_FALSE(in.isWhole());

    // Zooming out never goes past the whole map; zooming in stops at kMinZoomCells cells.
    CHECK(in.zoomedAt(10, 10, 0.001) == whole);
    const MapZoom deep = whole.zoomedAt(500, 500, 1e6);
    CHECK(deep.keyUpper - deep.keyLower == Approx(double(kMinZoomCells)));
    CHECK(deep.keyLower <= 500);
    CHECK(deep.keyUpper >= 500);

    // Panning stops at the edges and keeps the width.
    const MapZoom left = in.panned(-1e5, 0);
    CHECK(left.keyLower == -0.5);
    CHECK(left.keyUpper == Approx(199.5));
    const MapZoom bottom = in.panned(0, 1e5);
    CHECK(bottom.queryUpper == 999.5);
    CHECK(bottom.rowEnd() == 1000);

    // A rubber band from (key 10.2, query 40.9) to (key 3.7, query 30.1) covers cells 4..10 x 30..41.
    const MapZoom band = whole.toRect(10.2, 40.9, 3.7, 30.1);
    CHECK(band.colBegin() == 4);
    CHECK(band.colEnd() == 11);
    CHECK(band.rowBegin() == 30);
    CHECK(band.rowEnd() == 42);
    CHECK(band.keyLower == -0.5 + 4);
    // Pixels per cell over a 700 px axis.
    CHECK(band.cellWidth(700) == Approx(100.0));

    // A map smaller than the minimum zoom shows whole.
    CHECK(MapZoom::whole(2, 3).zoomedAt(1, 1, 10.0) == MapZoom::whole(2, 3));
}

TEST_CASE("the heat map zooms into a long map and shows every token's label there", "[ui][zoom]") {
    const int n = 600;
    attnscope::HeadMap map;
    map.rows = map.cols = n;
    map.values.assign(std::size_t(n) * n, 0.0f);
    for (int i = 0; i < n; ++i) map.values[std::size_t(i) * n] = 1.0f;  // an attention sink at key 0
    QStringList labels;
    for (int i = 0; i < n; ++i) labels << QStringLiteral("w%1").arg(i);

    HeatmapView view;
    view.resize(700, 600);
    view.show();
    REQUIRE(QTest::qWaitForWindowExposed(&view));
    view.setMap(map, labels, labels, QStringLiteral("sink"));
    QApplication::processEvents();
    CHECK(view.zoom().isWhole());
    // 600 tokens on ~500 px: labels are thinned.
    const int wholeTicks = int(view.queryTickLabels().size());
    CHECK(wholeTicks < n / 4);

    // Zoom with the keyboard (+ doubles), then a rubber band-like zoom to 20 cells.
    QTest::keyClick(&view, Qt::Key_Plus);
    CHECK(view.zoom().queryUpper - view.zoom().queryLower == Approx(n / 2.0));
    view.setZoom(view.zoom().toRect(100, 200, 119, 219));
    CHECK(view.zoom().rowBegin() == 200);
    CHECK(view.zoom().rowEnd() == 220);
    CHECK(view.zoom().colBegin() == 100);
    const QStringList rows = view.queryTickLabels();
    CHECK(rows.size() == 20);  // every visible token, none outside
    CHECK(rows.contains(QStringLiteral("w200")));
    CHECK(rows.contains(QStringLiteral("w219")));
    CHECK_FALSE(rows.contains(QStringLiteral("w199")));
    CHECK(view.keyTickLabels().contains(QStringLiteral("w119")));
    // Hover still reads the exact cell: cell (query 205, key 100) is 0 and key 0 would be 1.
    CHECK(view.describeCell({205, 100}).endsWith(QStringLiteral("0.0000")));
    // The same map at another temperature keeps the zoom; 0 resets it.
    view.setMap(map, labels, labels, QStringLiteral("sink"));
    CHECK(view.zoom().rowBegin() == 200);
    QTest::keyClick(&view, Qt::Key_0);
    CHECK(view.zoom().isWhole());
}

}  // namespace test_zoom
