// Issue 29, the widgets' half: square heat-map cells, one colour pipeline for screen and export
// (every map following the colour map), the Lines view's head buttons and exported legend, the
// overview's legible thumbnails and caption, equal Compare panels with shared axes and wrapped
// errors, frozen Metrics columns and the Corpus tab's output folder and bad lines. Each check
// goes through the real widgets on the offscreen platform.
#include "layout_checks.h"
#include "window_fixture.h"

#include "figure/figure.h"
#include "figure/linefigure.h"
#include "figure/paintedfigure.h"
#include "panels/corpuspanel.h"
#include "panels/metricspanel.h"
#include "views/frozencolumnsview.h"
#include "views/lineview.h"
#include "controllers/labcontroller.h"

#include "attnscope/corpus/corpus_run.h"
#include "attnscope/models/model.h"
#include "gpt2_fixture.h"

#include <qcustomplot.h>

#include <QDir>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QScrollArea>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QToolButton>

#include <cmath>
#include <fstream>

namespace test_views_layout {

using namespace uitest;
using namespace attnscope::testing;

namespace {

// Lets the layout and the queued replots run.
void settle() {
    QTest::qWait(60);
    QApplication::processEvents();
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "Heat map cells are square within 1 px whatever the window's size",
                 "[ui][views][layout]") {
    openStandIn();  // today 25 x 45 px cells on the default window
    for (const QSize size : {QSize(1280, 720), QSize(1920, 1080), QSize(1366, 768), QSize(1500, 1400)}) {
        window.resize(size);
        settle();
        requireSquareCells(*heatmap, "window");
    }
    // A 5-token map at 1920 wide (today 91 x 180 px).
    window.resize(1920, 1080);
    runText(QStringLiteral("1 2 3 4 5"));
    waitForMap(session->trace()->map(0, layer->value(), head->value()));
    settle();
    REQUIRE(heatmap->map().cols == 5);
    requireSquareCells(*heatmap, "5 tokens");
    // A zoom to a wide rectangle keeps the cells square too.
    heatmap->setZoom(heatmap->zoom().toRect(0, 1, 4, 2));
    settle();
    requireSquareCells(*heatmap, "zoomed");
}

TEST_CASE_METHOD(WindowFixture, "Screen pixels equal the exported PNG's for the same map and colour map",
                 "[ui][views][figure]") {
    openStandIn();
    window.resize(1600, 1000);
    const auto dir = freshDir("ui-views-pixels");
    for (const auto& [name, log] : {std::pair{"magma", false}, std::pair{"cividis", true}}) {
        controls->colormapCombo()->setCurrentIndex(controls->colormapCombo()->findText(QString::fromLatin1(name)));
        controls->scaleCombo()->setCurrentIndex(log ? 1 : 0);
        REQUIRE(controls->colormap() == *parseColormap(QString::fromLatin1(name)));
        REQUIRE((controls->colorScale().type == ColorScaleType::Log) == log);
        settle();
        heatmap->plot()->replot(QCustomPlot::rpImmediateRefresh);
        const QImage screen = heatmap->plot()->grab().toImage();
        const Figure figure = window.currentFigure();
        const std::filesystem::path png = dir / (std::string(name) + ".png");
        writeFigure(figure, qpath(png), 150);
        const QImage paper(qpath(png));
        REQUIRE_FALSE(paper.isNull());
        const QRectF mapPt = figureMapRect(figure, 0);
        const double scale = paper.width() / (figure.widthIn * 72.0);
        const attnscope::HeadMap& map = heatmap->map();
        const CellGeometry g = heatmap->cellGeometry();
        const ColorScale colors = controls->colorScale();
        int mismatched = 0;
        for (int q = 0; q < map.rows; ++q)
            for (int k = 0; k < map.cols; ++k) {
                const QPoint s = g.cellCenter({q, k}).toPoint();
                const QPoint p(int((mapPt.left() + (k + 0.5) * mapPt.width() / map.cols) * scale),
                               int((mapPt.top() + (q + 0.5) * mapPt.height() / map.rows) * scale));
                const QRgb want = colormapColor(controls->colormap(), colors.position(map.at(q, k))).rgb();
                if (qRgb(qRed(screen.pixel(s)), qGreen(screen.pixel(s)), qBlue(screen.pixel(s))) != want ||
                    qRgb(qRed(paper.pixel(p)), qGreen(paper.pixel(p)), qBlue(paper.pixel(p))) != want)
                    ++mismatched;
            }
        INFO(name << ": " << mismatched << " of " << map.rows * map.cols << " cells differ");
        CHECK(mismatched == 0);
    }
    // Every map follows the colour map: the Metrics tab's block view (rollout) and the Corpus tab's.
    CHECK(window.lab()->metrics()->blockView()->colormap() == Colormap::Cividis);
    CHECK(window.corpus()->importanceView()->colormap() == Colormap::Cividis);
    CHECK(window.compare()->view(0)->colormap() == Colormap::Cividis);
}

TEST_CASE("Lines view: twelve heads' buttons wrap, and the exported legend names every head", "[ui][views][lines]") {
    LineView view;
    attnscope::HeadMap map;
    map.rows = map.cols = 5;
    map.values.assign(25, 0.2f);
    const std::vector<attnscope::HeadMap> maps(12, map);
    const QStringList labels{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("d"),
                             QStringLiteral("e")};
    view.setMaps(maps, labels, labels, QStringLiteral("layer 0"), false);
    // Today one row of twelve buttons: 638 px, the window's minimum width.
    CHECK(view.minimumSizeHint().width() <= 260);
    view.resize(240, 420);
    view.show();
    REQUIRE(QTest::qWaitForWindowExposed(&view));
    settle();
    for (int h = 0; h < 12; ++h) {
        const QRect button(view.headButton(h)->mapTo(&view, QPoint(0, 0)), view.headButton(h)->size());
        INFO("head " << h);
        CHECK(view.rect().contains(button));
    }

    // The export (3.25 in): every head's swatch and name inside the figure (today heads 0, 1 and
    // 9-11 fell outside), each swatch in its head's colour.
    const PaintedFigure exported = view.exportable();
    REQUIRE(exported);
    const int dpi = 300;
    const QSizeF size = exported.size(3.25 * 72);
    const QImage image = renderPainted(size, exported.paint, dpi);
    LineFigure f = view.figure();
    f.fontSize = 7;  // as exported
    QImage device(1, 1, QImage::Format_RGB32);
    device.setDotsPerMeterX(int(std::lround(dpi / 0.0254)));
    device.setDotsPerMeterY(int(std::lround(dpi / 0.0254)));
    const QRectF area(QPointF(0, 0), size);
    const std::vector<LegendEntry> legend = lineLegend(&device, f, area);
    REQUIRE(legend.size() == 12u);
    CHECK(legend.back().box.top() > legend.front().box.top());  // more than one line
    const double px = image.width() / size.width();
    for (const LegendEntry& e : legend) {
        INFO("head " << e.head);
        CHECK(area.contains(e.box));
        const QPoint at = (e.swatch.center() * px).toPoint();
        CHECK(QColor(image.pixel(at)) == headColor(e.head));
    }
    // The lines start below the legend; the file the view writes is that figure.
    CHECK(lineLayout(&device, f, area).top >= legend.back().box.bottom());
    const auto png = freshDir("ui-views-lines") / "lines-12-heads.png";
    view.exportFigure(qpath(png));
    const QImage written(qpath(png));
    CHECK(written.size() == image.size());
}

TEST_CASE_METHOD(WindowFixture, "Overview thumbnails keep a legible size and scroll; the caption is never cut off",
                 "[ui][views][layout]") {
    open(qpath(gpt2TwelveByTwelve()));  // today 13 px thumbnails
    window.resize(1280, 720);
    settle();
    REQUIRE(overview->heads() == 12);
    CHECK(overview->tileSize() >= OverviewGrid::kMinTile);
    CHECK(overview->tileRect(11, 11).right() < overview->width());  // every column is drawn
    auto* scroll = qobject_cast<QScrollArea*>(overview->parentWidget()->parentWidget());
    REQUIRE(scroll);
    if (overview->width() > scroll->viewport()->width()) CHECK(scroll->horizontalScrollBar()->isVisible());

    // The caption wraps onto as many lines as it needs; the tiles start below it.
    const QString caption = QStringLiteral("self block · layer 3 · head 7 · display temperature T = 0.25 · additive "
                                           "fit · 3 heads masked · pooled by max");
    overview->setCaption(caption);
    scroll->setMinimumWidth(0);
    overview->resize(overview->minimumSizeHint().width(),
                     overview->heightForWidth(overview->minimumSizeHint().width()));
    const QRect rect = overview->captionRect();
    const QRect needed =
            QFontMetrics(overview->font())
                    .boundingRect(QRect(rect.topLeft(), QSize(rect.width(), 10000)), Qt::TextWordWrap, caption);
    CHECK(needed.height() > QFontMetrics(overview->font()).height());  // several lines at this width
    CHECK(rect.height() >= needed.height());
    CHECK(overview->tileRect(0, 0).top() > rect.bottom());
    CHECK(rect.right() < scroll->viewport()->width());  // all of it visible, even when the grid scrolls
    CHECK(overview->toolTipAt(rect.center()) == caption);
}

// The audit of issue 29: at 1366 x 768 each map was drawn ~104 px wide in a ~215 px column (the
// columns were equal, so the maps shrank to the one with the widest frame), dropping every other
// key label. Each map now takes the largest square cells its column allows, the three equal.
TEST_CASE_METHOD(WindowFixture, "Compare maps are as large as their panels allow: equal, square, growing with it",
                 "[ui][views][compare]") {
    open(QStringLiteral("builtin:reverse-dot"));
    window.tabs()->setCurrentWidget(window.compare());
    ComparePanel* compare = window.compare();
    REQUIRE(QTest::qWaitFor(
            [&] {
                for (int i = 0; i < 3; ++i)
                    if (compare->view(i)->map().rows <= 0) return false;
                return true;
            },
            30000));
    double previous = 0;
    for (const QSize size : {QSize(1366, 768), QSize(1920, 1080), QSize(2560, 1440)}) {
        window.resize(size);
        settle();
        const double cell = compare->view(0)->cellGeometry().cellSize().x();
        INFO(size.width() << " x " << size.height() << ": cells " << cell << " px, keys shown "
                          << compare->view(0)->keyTickLabels().size() << " of " << compare->view(0)->map().cols);
        for (int i = 0; i < 3; ++i) {
            const HeatmapView* v = compare->view(i);
            requireSquareCells(*v, "compare");
            const CellGeometry g = v->cellGeometry();
            CHECK(std::abs(g.cellSize().x() - cell) <= 0.5);
            // The largest that fits: on one axis the view's space holds its frame and cells with
            // less than a pixel per cell left (cells are whole pixels).
            const QSize space = v->plot()->parentWidget()->size() - v->frameSize();
            const double spareW = space.width() - g.area.width(), spareH = space.height() - g.area.height();
            INFO("view " << i << ": spare " << spareW << " x " << spareH << " px for " << g.cols << " x " << g.rows
                         << " cells");
            CHECK(std::min(spareW - g.cols, spareH - g.rows) < 1.0);
        }
        CHECK(cell > previous);  // larger with the panel
        previous = cell;
    }
}

TEST_CASE_METHOD(WindowFixture, "Compare panels are equal with shared axes; errors wrap instead of being cut off",
                 "[ui][views][compare]") {
    open(QStringLiteral("builtin:reverse-dot"));
    window.resize(1366, 768);
    window.tabs()->setCurrentWidget(window.compare());
    ComparePanel* compare = window.compare();
    REQUIRE(QTest::qWaitFor(
            [&] {
                for (int i = 0; i < 3; ++i)
                    if (compare->view(i)->map().rows <= 0) return false;
                return true;
            },
            30000));
    settle();
    const CellGeometry g0 = compare->view(0)->cellGeometry();
    for (int i = 1; i < 3; ++i) {
        const CellGeometry g = compare->view(i)->cellGeometry();
        INFO("view " << i << ": maps " << g.area.width() << " px, view 0's: " << g0.area.width());
        CHECK(std::abs(g.area.width() - g0.area.width()) <= 1);
        CHECK(std::abs(g.cellSize().x() - g0.cellSize().x()) <= 1.0);
        CHECK(compare->view(i)->keyTickLabels().size() == compare->view(0)->keyTickLabels().size());
    }
    // Shared axes: zooming one shows the same cells in the others.
    HeatmapView* first = compare->view(0);
    first->setZoom(first->zoom().zoomedAt(2, 2, 2.0));
    REQUIRE_FALSE(first->zoom().isWhole());
    CHECK(compare->view(1)->zoom() == first->zoom());
    CHECK(compare->view(2)->zoom() == first->zoom());

    // A layer the compared models lack: each panel says so in full (today "·dot: layer 6 is out of rang").
    compare->setSelection(QStringLiteral("cross"), 6, 0, 1.0);
    REQUIRE(QTest::qWaitFor([&] { return compare->view(2)->map().rows == 0; }, 20000));
    settle();
    for (int i = 0; i < 3; ++i) {
        HeatmapView* v = compare->view(i);
        auto* title = v->findChild<QLabel*>(QStringLiteral("heatmapTitle"));
        REQUIRE(title);
        INFO(title->text().toStdString());
        CHECK(title->text().contains(QStringLiteral("6")));
        CHECK(title->wordWrap());
        CHECK(title->height() >= title->heightForWidth(title->width()));
        CHECK(title->geometry().right() <= v->width());
    }
    CHECK(std::abs(compare->view(2)->width() - compare->view(0)->width()) <= 1);
}

TEST_CASE("Metrics table: Block, Layer and Head stay in view while detector columns scroll", "[ui][views][metrics]") {
    MetricsPanel panel;
    std::vector<attnscope::HeadMetrics> metrics;
    std::vector<attnscope::HeadDetectors> detectors;
    for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 4; ++h) {
            attnscope::HeadMetrics m;
            m.block = "self";
            m.layer = l;
            m.head = h;
            m.entropy = 0.1 * (l * 4 + h);
            metrics.push_back(m);
            attnscope::HeadDetectors d;
            d.block = "self";
            d.layer = l;
            d.head = h;
            d.scores.previousToken = d.scores.duplicateToken = d.scores.induction = d.scores.firstToken = 0.5;
            detectors.push_back(d);
        }
    MetricsResult result;
    result.metrics = metrics;
    panel.showMetrics(result);
    panel.setDetectors(detectors, QStringLiteral("probe"));
    panel.resize(520, 400);
    panel.show();
    REQUIRE(QTest::qWaitForWindowExposed(&panel));
    settle();
    auto* table = qobject_cast<FrozenColumnsView*>(panel.table());
    REQUIRE(table);
    QScrollBar* sideways = table->horizontalScrollBar();
    REQUIRE(sideways->maximum() > 0);  // the detector columns do not fit
    sideways->setValue(sideways->maximum());
    settle();
    // Scrolled away in the table itself…
    CHECK(table->columnViewportPosition(HeadMetricsModel::Layer) < 0);
    // …but drawn in place by the frozen columns, on the table's left edge, over the same rows.
    QTableView* frozen = table->frozenView();
    REQUIRE(frozen->isVisible());
    CHECK(frozen->geometry().left() == table->frameWidth());
    for (int column : {int(HeadMetricsModel::Layer), int(HeadMetricsModel::Head)}) {
        INFO("column " << column);
        CHECK_FALSE(frozen->isColumnHidden(column));
        const QRect cell = frozen->visualRect(frozen->model()->index(2, column));
        CHECK(frozen->viewport()->rect().contains(cell));
    }
    CHECK(frozen->isColumnHidden(HeadMetricsModel::Entropy));
    CHECK(frozen->isColumnHidden(HeadMetricsModel::Block));  // one block: hidden in both
    // A click there selects the head, as in the table.
    QSignalSpy selected(&panel, &MetricsPanel::headSelected);
    const QRect cell = frozen->visualRect(frozen->model()->index(5, HeadMetricsModel::Head));
    QTest::mouseClick(frozen->viewport(), Qt::LeftButton, {}, cell.center());
    REQUIRE(selected.count() == 1);
    const QModelIndex source = panel.proxy()->mapToSource(panel.proxy()->index(5, 0));
    CHECK(selected.at(0).at(1).toInt() == metrics[std::size_t(source.row())].layer);
    CHECK(selected.at(0).at(2).toInt() == metrics[std::size_t(source.row())].head);
}

TEST_CASE("Corpus tab: the user chooses the results folder, and skipped lines are listed with their reasons",
          "[ui][views][corpus]") {
    const auto dir = freshDir("ui-views-corpus");
    {
        std::ofstream f(dir / "c.jsonl");
        f << "{\"text\": \"good film\", \"label\": \"positive\"}\n"
          << "{\"text\": \"bad film\", \"label\": \"negative\"}\n"
          << "not json at all\n"
          << "{\"label\": \"positive\"}\n"
          << "{\"text\": \"great acting\", \"label\": \"positive\"}\n";
    }
    std::filesystem::create_directories(dir / "chosen");
    WindowFixture f;
    f.open(QStringLiteral("builtin:sentiment-dot"));
    CorpusPanel& panel = *f.window.corpus();
    f.window.tabs()->setCurrentWidget(&panel);
    QSignalSpy requested(&panel, &CorpusPanel::runRequested);
    QSignalSpy done(&panel, &CorpusPanel::finished);
    QTest::mouseClick(panel.findChild<QPushButton*>(QStringLiteral("corpusRunButton")), Qt::LeftButton);
    REQUIRE(panel.openDialog());
    CHECK(panel.openDialog()->objectName() == QStringLiteral("corpusFileDialog"));
    panel.openDialog()->selectFile(qpath(dir / "c.jsonl"));
    QMetaObject::invokeMethod(panel.openDialog(), "accept");  // the Open button (accept() is protected)
    // Then the folder: asked for, starting beside the file; nothing runs before it is chosen.
    REQUIRE(QTest::qWaitFor([&] {
        return panel.openDialog() && panel.openDialog()->objectName() == QStringLiteral("corpusOutputDialog");
    }));
    CHECK(requested.isEmpty());
    CHECK(QDir(panel.openDialog()->directory()).canonicalPath() == QDir(qpath(dir)).canonicalPath());
    panel.openDialog()->selectFile(qpath(dir / "chosen"));
    QMetaObject::invokeMethod(panel.openDialog(), "accept");  // the Open button (accept() is protected)
    REQUIRE(requested.count() == 1);
    CHECK(requested.at(0).at(0).toString() == qpath(dir / "c.jsonl"));
    CHECK(QDir(requested.at(0).at(1).toString()).canonicalPath() == QDir(qpath(dir / "chosen")).canonicalPath());

    // The window runs it there: the two bad lines are listed with core's line numbers and reasons.
    REQUIRE(done.wait(60000));
    REQUIRE(done.at(0).at(0).toBool());
    const auto& bad = panel.result().badLines;
    REQUIRE(bad.size() == 2u);
    QListWidget* list = panel.badLinesList();
    REQUIRE(list->isVisible());
    REQUIRE(list->count() == 2);
    for (int i = 0; i < 2; ++i) {
        const QString item = list->item(i)->text();
        INFO(item.toStdString());
        CHECK(item.startsWith(QStringLiteral("line %1: ").arg(bad[std::size_t(i)].line)));
        CHECK(item.contains(QString::fromStdString(bad[std::size_t(i)].reason)));
    }
    CHECK(bad[0].line == 3);
    CHECK(bad[1].line == 4);
    CHECK(panel.statusLabel()->text().contains(QStringLiteral("2 bad lines skipped")));
}

}  // namespace test_views_layout
