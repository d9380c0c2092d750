// Widgets on their own, without a window: the overview grid's masking gestures and crossed-out
// heads, and the control panel's slots for other parts' rows.
#include "panels/controlpanel.h"
#include "panels/outputpanel.h"
#include "views/overviewgrid.h"
#include "views/temperatureslider.h"

#include <catch2/catch.hpp>

#include <QApplication>
#include <QContextMenuEvent>
#include <QFormLayout>
#include <QLabel>
#include <QSignalSpy>
#include <QTest>

#include <utility>
#include <vector>

namespace test_widgets {

namespace {

QImage white() {
    QImage image(4, 4, QImage::Format_RGB32);
    image.fill(Qt::white);
    return image;
}

}  // namespace

// A narrow grid draws its caption elided; the tooltip over the caption line gives all of it.
TEST_CASE("OverviewGrid: the caption's tooltip is the whole caption, tiles say their head", "[ui][overview]") {
    OverviewGrid grid;
    grid.setShape(2, 2);
    grid.setImages(std::vector<QImage>(4, white()));
    const QString caption = QStringLiteral("cross block · 2 layers × 2 heads · linear elu+1 attention (lab) · T = 1");
    grid.setCaption(caption);
    grid.resize(120, grid.heightForWidth(120));
    CHECK(grid.fontMetrics().horizontalAdvance(caption) > grid.width());  // it is drawn elided
    CHECK(grid.toolTipAt(QPoint(10, 4)) == caption);
    CHECK(grid.toolTipAt(grid.tileRect(1, 0).center()) == QStringLiteral("layer 1 · head 0"));
    CHECK(grid.toolTipAt(QPoint(grid.width() - 1, grid.height() - 1)).isEmpty());
}

TEST_CASE("OverviewGrid: ctrl+click and the context menu only ask; crossed-out heads are drawn", "[ui][overview]") {
    OverviewGrid grid;
    grid.setShape(2, 3);
    grid.setImages(std::vector<QImage>(6, white()));
    grid.resize(400, grid.heightForWidth(400));
    grid.show();
    REQUIRE(QTest::qWaitForWindowExposed(&grid));
    QSignalSpy chosen(&grid, &OverviewGrid::headChosen);
    QSignalSpy toggled(&grid, &OverviewGrid::headToggleRequested);
    QSignalSpy menu(&grid, &OverviewGrid::headContextMenuRequested);

    int layer = -1, head = -1;
    REQUIRE(grid.tileAt(grid.tileRect(1, 2).center(), layer, head));
    CHECK((layer == 1 && head == 2));
    CHECK_FALSE(grid.tileAt(QPoint(1, 1), layer, head));  // the caption row

    // Ctrl+click asks to toggle the head and does not select it.
    QTest::mouseClick(&grid, Qt::LeftButton, Qt::ControlModifier, grid.tileRect(1, 2).center());
    REQUIRE(toggled.count() == 1);
    CHECK(toggled[0][0].toInt() == 1);
    CHECK(toggled[0][1].toInt() == 2);
    CHECK(chosen.count() == 0);
    CHECK((grid.selectedLayer() == 0 && grid.selectedHead() == 0));

    // A plain click selects.
    QTest::mouseClick(&grid, Qt::LeftButton, Qt::NoModifier, grid.tileRect(1, 2).center());
    REQUIRE(chosen.count() == 1);
    CHECK((grid.selectedLayer() == 1 && grid.selectedHead() == 2));
    CHECK(toggled.count() == 1);

    // The context menu on a thumbnail asks with the screen position; elsewhere it passes on.
    const QPoint at = grid.tileRect(0, 1).center();
    QContextMenuEvent onTile(QContextMenuEvent::Mouse, at, grid.mapToGlobal(at));
    QApplication::sendEvent(&grid, &onTile);
    REQUIRE(menu.count() == 1);
    CHECK(menu[0][0].toInt() == 0);
    CHECK(menu[0][1].toInt() == 1);
    CHECK(menu[0][2].toPoint() == grid.mapToGlobal(at));
    CHECK(onTile.isAccepted());
    QContextMenuEvent offTile(QContextMenuEvent::Mouse, QPoint(1, 1), grid.mapToGlobal(QPoint(1, 1)));
    QApplication::sendEvent(&grid, &offTile);
    CHECK(menu.count() == 1);
    CHECK_FALSE(offTile.isAccepted());

    // Crossed out: the tile's centre turns red; other tiles stay; pairs outside the shape are ignored.
    const QImage before = grid.grab().toImage();
    grid.setCrossedOut({{0, 1}, {5, 5}, {-1, 0}});
    CHECK(grid.crossedOut().size() == 3u);
    const QImage after = grid.grab().toImage();
    const QColor centre = after.pixelColor(grid.tileRect(0, 1).center());
    CHECK(before.pixelColor(grid.tileRect(0, 1).center()) == QColor(Qt::white));
    CHECK(centre.red() > centre.green() + 60);
    CHECK(after.pixelColor(grid.tileRect(1, 0).center()) == before.pixelColor(grid.tileRect(1, 0).center()));
    grid.setCrossedOut({});
    CHECK(grid.grab().toImage() == before);
}

TEST_CASE("OverviewGrid: sliding-window layers are marked apart from global ones", "[ui][overview]") {
    OverviewGrid grid;
    grid.setShape(3, 2);
    grid.setImages(std::vector<QImage>(6, white()));
    grid.resize(300, grid.heightForWidth(300));
    grid.show();
    REQUIRE(QTest::qWaitForWindowExposed(&grid));
    const QImage global = grid.grab().toImage();
    grid.setLayerWindows({4096, 0, 4096});  // Gemma-2's order: local, global, local
    CHECK(grid.layerWindow(0) == 4096);
    CHECK(grid.layerWindow(1) == 0);
    CHECK(grid.layerWindow(7) == 0);
    const QImage marked = grid.grab().toImage();
    // The bar sits at the left edge of the label column, on local rows only.
    auto barColor = [&](const QImage& img, int layer) {
        return img.pixelColor(1, grid.tileRect(layer, 0).center().y());
    };
    const QColor teal(0, 150, 136);
    CHECK(barColor(marked, 0) == teal);
    CHECK(barColor(marked, 2) == teal);
    CHECK(barColor(marked, 1) != teal);
    CHECK(barColor(global, 0) != teal);
    // Local rows' labels differ from the same layer's plain label (the "w" mark).
    const QRect label0 = grid.layerLabelRect(0);
    CHECK(marked.copy(label0) != global.copy(label0));
    grid.setLayerWindows({});
    CHECK(grid.grab().toImage() == global);
}

TEST_CASE("ControlPanel: rows go under the temperature slider in order; the caption says which temperature",
          "[ui][controls]") {
    ControlPanel panel;
    auto* form = qobject_cast<QFormLayout*>(panel.temperature()->parentWidget()->layout());
    REQUIRE(form);
    int slider = -1;
    QFormLayout::ItemRole role;
    form->getWidgetPosition(panel.temperature(), &slider, &role);
    REQUIRE(slider > 0);
    auto* caption = qobject_cast<QLabel*>(form->itemAt(slider - 1, QFormLayout::SpanningRole)->widget());
    REQUIRE(caption);
    CHECK(caption->text() == QStringLiteral("Display temperature (log scale):"));
    panel.setTemperatureInside(true);
    CHECK(caption->text() == QStringLiteral("Temperature inside the model (log scale):"));
    panel.setTemperatureInside(false);
    CHECK(caption->text() == QStringLiteral("Display temperature (log scale):"));

    auto* first = new QLabel(QStringLiteral("first"));
    auto* second = new QLabel(QStringLiteral("second"));
    panel.addTemperatureRow(first);
    panel.addTemperatureRow(second);
    int a = -1, b = -1;
    form->getWidgetPosition(first, &a, &role);
    form->getWidgetPosition(second, &b, &role);
    CHECK(a == slider + 1);
    CHECK(b == slider + 2);

    auto* under = new QLabel(QStringLiteral("under the output"));
    panel.addOutputWidget(under);
    CHECK(under->parentWidget() == panel.outputs()->parentWidget());
    QLayout* outputLayout = panel.outputs()->parentWidget()->layout();
    CHECK(outputLayout->indexOf(under) == outputLayout->indexOf(panel.outputs()) + 1);
}

}  // namespace test_widgets
