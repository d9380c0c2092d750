#include "layout_checks.h"

#include "controllers/viewscontroller.h"
#include "views/cellgeometry.h"
#include "views/heatmapview.h"
#include "window/mainwindow.h"

#include "gpt2_fixture.h"

#include <catch2/catch.hpp>
#include <qcustomplot.h>

#include <QDockWidget>
#include <QLayout>
#include <QTabWidget>
#include <QTest>

#include <cmath>

namespace uitest {

std::filesystem::path gpt2TwelveByTwelve() {
    static const std::filesystem::path dir = [] {
        attnscope::testing::Gpt2Spec spec;
        spec.layers = 12;
        spec.heads = 12;
        spec.embd = 48;
        const auto d = attnscope::testing::freshDir("gpt2-12x12");
        attnscope::testing::writeGpt2Folder(d, attnscope::testing::makeGpt2(spec, 5));
        return d;
    }();
    return dir;
}

void showEveryDock(MainWindow& window) {
    for (QDockWidget* d : window.findChildren<QDockWidget*>()) {
        d->show();
        d->setFloating(false);
        d->raise();  // each dock's content in front once, so its size counts
        QTest::qWait(20);
    }
    window.views()->tabs()->setCurrentIndex(0);
    QTest::qWait(50);
}

QSize windowMinimum(MainWindow& window) {
    window.layout()->activate();
    return window.layout()->totalMinimumSize().expandedTo(window.minimumSize());
}

void requireSquareCells(const HeatmapView& view, const char* where) {
    const CellGeometry g = view.cellGeometry();
    INFO(where << ": cells " << g.cellSize().x() << " x " << g.cellSize().y() << " px, axis rect " << g.area.width()
               << " x " << g.area.height());
    REQUIRE(g.area.width() > 0);
    CHECK(std::abs(g.cellSize().x() - g.cellSize().y()) <= 1.0);
    // Letterboxed: the map lies within the view.
    const QRect onView(view.plot()->mapTo(&view, g.area.topLeft().toPoint()), g.area.size().toSize());
    CHECK(view.rect().contains(onView));
}

}  // namespace uitest
