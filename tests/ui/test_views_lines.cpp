// The line view (BertViz's head view) on the real window: it draws exactly core's maps of every
// head of the shown layer at the slider's temperature, heads switch on and off, the threshold
// hides faint lines, hovering and clicking a token link the heat map, the neuron view and the
// query–key space, cross blocks name source and target, and the figure exports as PDF/SVG/PNG.
#include "views_fixture.h"

#include "gpt2_fixture.h"

#include <QDoubleSpinBox>
#include <QToolButton>

namespace test_views_lines {

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

// Every head of the layer drawn, each with core's map.
bool showsCoreMaps(const LineView& view, const attnscope::Trace& trace, int block, int layer, double T) {
    const LineFigure f = view.figure();
    const int heads = trace.blocks()[block].heads;
    if (int(f.heads.size()) != heads) return false;
    for (int h = 0; h < heads; ++h)
        if (f.heads[h].head != h || f.heads[h].map.values != trace.map(block, layer, h, at(T)).values) return false;
    return true;
}

}  // namespace

TEST_CASE_METHOD(ViewsFixture, "Line view: core's maps of every head, temperature, heads, threshold, linking, export",
                 "[ui][views][lines]") {
    openStandIn();
    show(views->lines(), &ViewsController::linesShown);
    LineView* lines = views->lines();
    const auto trace = session->trace();
    CHECK(showsCoreMaps(*lines, *trace, 0, 0, 1.0));
    CHECK(lines->figure().queryLabels == heatmap->queryLabels());
    CHECK(lines->figure().keyLabels == heatmap->keyLabels());
    CHECK(lines->figure().leftTitle == QStringLiteral("queries"));
    for (int h = 0; h < 4; ++h) CHECK(lines->figure().heads[h].color == headColor(h));

    // The layer and the temperature follow the window.
    after(&ViewsController::linesShown, [&] { layer->setValue(1); });
    CHECK(showsCoreMaps(*lines, *trace, 0, 1, 1.0));
    after(&ViewsController::linesShown,
          [&] { slider->setValue(slider->minimum() + (slider->maximum() - slider->minimum()) / 4); });
    const double T = controls->temperature()->temperature();
    REQUIRE(T < 0.9);
    CHECK(showsCoreMaps(*lines, *trace, 0, 1, T));

    // Heads off and on; the threshold.
    QTest::mouseClick(lines->headButton(2), Qt::LeftButton);
    CHECK(lines->shownHeads() == std::vector<int>{0, 1, 3});
    REQUIRE(lines->figure().heads.size() == 3);
    CHECK(lines->figure().heads[2].head == 3);
    lines->thresholdSpin()->setValue(0.25);
    CHECK(lines->figure().threshold == Approx(0.25));

    // Hover a query: only its lines, its heat map row framed; leaving ends both.
    QTest::mouseMove(lines->canvas(), lines->tokenCenter(0, 3).toPoint());
    REQUIRE(QTest::qWaitFor([&] { return lines->focusQuery() == 3; }, 2000));
    CHECK_FALSE(lines->locked());
    CHECK(views->heatmapHighlight() == std::make_pair(0, 3));
    // Click a key: locked, column framed, the neuron view's key row and the Q-K space follow.
    QTest::mouseClick(lines->canvas(), Qt::LeftButton, {}, lines->tokenCenter(1, 2).toPoint());
    CHECK(lines->locked());
    CHECK(lines->focusKey() == 2);
    CHECK(views->heatmapHighlight() == std::make_pair(1, 2));
    CHECK(views->neuron()->figure().focusKey == 2);
    QTest::mouseMove(lines->canvas(), lines->tokenCenter(0, 5).toPoint());  // locked: hover changes nothing
    CHECK(lines->focusKey() == 2);
    // Click a query: the neuron view switches to it.
    QTest::mouseClick(lines->canvas(), Qt::LeftButton, {}, lines->tokenCenter(0, 4).toPoint());
    CHECK(lines->focusQuery() == 4);
    CHECK(views->neuron()->query() == 4);
    CHECK(views->heatmapHighlight() == std::make_pair(0, 4));
    show(views->qkSpace(), &ViewsController::qkShown);
    const int p = views->qkSpace()->selected();
    REQUIRE(p >= 0);
    CHECK_FALSE(views->qkSpace()->figure().space.isKey[p]);
    CHECK(views->qkSpace()->figure().space.position[p] == 4);
    // Clicking the locked token again unlocks.
    views->tabs()->setCurrentWidget(lines);
    QTest::qWait(20);
    QTest::mouseClick(lines->canvas(), Qt::LeftButton, {}, lines->tokenCenter(0, 4).toPoint());
    CHECK_FALSE(lines->locked());
    CHECK(views->heatmapHighlight() == std::make_pair(-1, -1));

    SECTION("export: PDF, SVG and PNG that parse, one column wide") {
        const fs::path dir = freshDir("ui-lines-export");
        const QString pdf = qpath(dir / "lines.pdf"), svg = qpath(dir / "lines.svg"), png = qpath(dir / "lines.png");
        lines->exportFigure(pdf);
        lines->exportFigure(svg);
        lines->exportFigure(png);
        requireFigureFiles(pdf, svg, png, 3.25 * 72, lines->figure().queryLabels[3]);
        CHECK_THROWS_WITH(lines->exportFigure(qpath(dir / "lines.bmp")), Catch::Contains("unknown figure format"));
    }
}

TEST_CASE_METHOD(ViewsFixture, "Line view on a cross block names target and source, and follows the block",
                 "[ui][views][lines]") {
    open(QStringLiteral("builtin:reverse-dot"));
    show(views->lines(), &ViewsController::linesShown);
    LineView* lines = views->lines();
    const auto trace = session->trace();
    const int cross = trace->blockIndex("cross");
    REQUIRE(controls->blockCombo()->currentIndex() == cross);  // encoder-decoders start there
    CHECK(lines->figure().leftTitle == QStringLiteral("target (queries)"));
    CHECK(lines->figure().rightTitle == QStringLiteral("source (keys)"));
    CHECK(showsCoreMaps(*lines, *trace, cross, layer->value(), 1.0));
    CHECK(lines->figure().queryLabels.size() != lines->figure().keyLabels.size());
    after(&ViewsController::linesShown, [&] { controls->blockCombo()->setCurrentIndex(trace->blockIndex("encoder")); });
    CHECK(lines->figure().leftTitle == QStringLiteral("queries"));
    CHECK(showsCoreMaps(*lines, *trace, trace->blockIndex("encoder"), layer->value(), 1.0));
    CHECK(lines->message().isEmpty());
}

}  // namespace test_views_lines
