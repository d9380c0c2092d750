// The views dock beyond the basics, on the real window: every view follows the lab's variant
// (the line view and the query-key rows draw core's variant maps, the neuron view says in one
// line why it has nothing for a variant without q·k logits), the line view of an input past 512
// tokens shows a token window whose maps are core's and whose scroll bar moves it, the query-key
// space colours by core's token kinds, the State structs round-trip, and File > Export View…
// writes the shown view through the export dialog at a venue width.
#include "views_fixture.h"

#include "gpt2_fixture.h"

#include "panels/exportdialog.h"
#include "panels/labpanel.h"
#include "controllers/labcontroller.h"

#include "attnscope/analysis/token_kind.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QScrollBar>
#include <QToolButton>

#include <set>

namespace test_views_variants {

using namespace uitest;
using namespace attnscope::testing;

namespace {

attnscope::MapOptions linearAt(const MainWindow& window, int block, int layer, int head) {
    attnscope::MapOptions o = window.lab()->variantSpec({block, layer, head}).map;
    o.variant = attnscope::MapVariant::Linear;
    return o;
}

}  // namespace

TEST_CASE_METHOD(ViewsFixture, "The views follow the lab's variant", "[ui][views][lab]") {
    openStandIn();
    const auto trace = session->trace();
    LineView* lines = views->lines();
    show(lines, &ViewsController::linesShown);
    QComboBox* variant = window.lab()->panel()->variantCombo();
    after(&ViewsController::linesShown, [&] { variant->setCurrentIndex(int(LabVariant::Linear)); });
    const int heads = trace->blocks()[0].heads;
    REQUIRE(int(lines->figure().heads.size()) == heads);
    for (int h = 0; h < heads; ++h) {
        INFO("head " << h);
        CHECK(lines->figure().heads[std::size_t(h)].map.values ==
              trace->map(0, 0, h, linearAt(window, 0, 0, h)).values);
        CHECK(lines->figure().heads[std::size_t(h)].map.values != trace->map(0, 0, h).values);
    }
    CHECK(lines->figure().title.contains(QStringLiteral("lab: linear")));

    // The neuron view: one line saying why, no figure.
    show(views->neuron(), &ViewsController::neuronShown);
    CHECK_FALSE(views->neuron()->hasRow());
    CHECK(views->neuron()->message().contains(QStringLiteral("linear")));
    CHECK(views->neuron()->message().contains(QStringLiteral("q\u2299k")));
    // Dot: the dot map is the model's own on this dot-product model, so q⊙k applies again.
    after(&ViewsController::neuronShown, [&] { variant->setCurrentIndex(int(LabVariant::Dot)); });
    CHECK(views->neuron()->hasRow());
    CHECK(views->neuron()->message().isEmpty());

    // The query-key space: the selected query's row sizes the keys by the variant's map.
    show(views->qkSpace(), &ViewsController::qkShown);
    after(&ViewsController::qkShown, [&] { variant->setCurrentIndex(int(LabVariant::Linear)); });
    views->select(0, 5);
    const attnscope::HeadMap lin = trace->map(0, 0, 0, linearAt(window, 0, 0, 0));
    CHECK(views->qkSpace()->figure().selectedRow ==
          std::vector<float>(lin.values.begin() + 5 * lin.cols, lin.values.begin() + 6 * lin.cols));
    CHECK(views->qkSpace()->figure().title.contains(QStringLiteral("lab: linear")));

    // Additive without a fit: the line view says what it needs instead of drawing the dot maps.
    show(lines, &ViewsController::linesShown);
    after(&ViewsController::linesShown, [&] { variant->setCurrentIndex(int(LabVariant::Additive)); });
    CHECK(lines->figure().heads.empty());
    CHECK(lines->message().contains(QStringLiteral("additive fit")));
    after(&ViewsController::linesShown, [&] { variant->setCurrentIndex(int(LabVariant::Native)); });
    CHECK(int(lines->figure().heads.size()) == heads);
}

TEST_CASE_METHOD(ViewsFixture, "The line view of an input past 512 tokens shows a token window that scrolls",
                 "[ui][views][lines]") {
    const auto folder = freshDir("ui-views-long");
    Gpt2Spec spec;
    spec.layers = 1;
    spec.heads = 2;
    spec.embd = 16;
    spec.positions = 700;
    spec.vocab = 50;
    writeGpt2Folder(folder, makeGpt2(spec, 9));
    open(qpath(folder));
    QStringList ids;
    for (int i = 0; i < 600; ++i) ids << QString::number((i * 7) % 50);
    input->setText(ids.join(QLatin1Char(' ')));
    {
        QSignalSpy traced(session, &Session::traceReady);
        QTest::mouseClick(run, Qt::LeftButton);
        REQUIRE(traced.wait(60000));
    }
    const auto trace = session->trace();
    REQUIRE(trace->tokens().size() == 600);
    LineView* lines = views->lines();
    show(lines, &ViewsController::linesShown);
    const int W = ViewsController::kLineWindow;
    // Tokens [start, start + W) on both sides, with core's exact values of those cells.
    auto showsWindow = [&](int start) {
        const LineFigure f = lines->figure();
        REQUIRE(f.heads.size() == 2);
        CHECK(lines->windowStart() == start);
        CHECK(f.queryLabels == heatmap->queryLabels().mid(start, W));
        for (int h = 0; h < 2; ++h) {
            const attnscope::HeadMap full = trace->map(0, 0, h);
            const attnscope::HeadMap& m = f.heads[std::size_t(h)].map;
            REQUIRE(m.rows == W);
            REQUIRE(m.cols == W);
            int wrong = 0;
            for (int i = 0; i < W; ++i)
                for (int j = 0; j < W; ++j) wrong += m.at(i, j) != full.at(start + i, start + j);
            CHECK(wrong == 0);
        }
    };
    CHECK(lines->message().isEmpty());
    REQUIRE(lines->windowBar()->isVisible());
    CHECK(lines->windowBar()->maximum() == 600 - W);
    showsWindow(0);
    after(&ViewsController::linesShown, [&] { lines->windowBar()->setValue(300); });
    showsWindow(300);
    // Positions stay the input's: a token of the window hovers as itself, and a selection
    // outside the window brings it into view.
    QTest::mouseMove(lines->canvas(), lines->tokenCenter(0, 310).toPoint());
    REQUIRE(QTest::qWaitFor([&] { return lines->focusQuery() == 310; }, 2000));
    CHECK(views->heatmapHighlight() == std::make_pair(0, 310));
    after(&ViewsController::linesShown, [&] { views->select(0, 40); });
    CHECK(lines->windowStart() == 0);
    CHECK(lines->focusQuery() == 40);
    CHECK(lines->locked());
}

TEST_CASE_METHOD(ViewsFixture, "The query-key space colours by core's token kinds", "[ui][views][qk]") {
    const auto dir = freshDir("ui-views-kinds");
    writeGpt2TokenizerFolder(dir, std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / "gpt2.json", 3);
    open(qpath(dir));
    runText(QStringLiteral("The cats, sleeping!"));
    const auto trace = session->trace();
    QkSpaceView* qk = views->qkSpace();
    show(qk, &ViewsController::qkShown);
    const int kind = qk->coloringCombo()->findData(int(QkColoring::TokenKind));
    REQUIRE(kind >= 0);
    qk->coloringCombo()->setCurrentIndex(kind);
    CHECK(qk->figure().coloring == QkColoring::TokenKind);
    const auto want = attnscope::blockTokenKinds(*trace, 0, false);
    CHECK(qk->figure().queryKinds == want);
    CHECK(qk->figure().keyKinds == attnscope::blockTokenKinds(*trace, 0, true));
    std::set<attnscope::TokenKind> seen;
    for (int p = 0; p < qk->figure().space.points(); ++p) {
        const auto k = want[std::size_t(qk->figure().space.position[p])];
        CHECK(qkPointColor(qk->figure(), p) == tokenKindColor(k));
        seen.insert(k);
    }
    CHECK(seen.count(attnscope::TokenKind::Punctuation) == 1);
    CHECK(seen.count(attnscope::TokenKind::WordStart) == 1);
    // Hover names the kind.
    const int comma = int(std::find(trace->tokens().begin(), trace->tokens().end(), ",") - trace->tokens().begin());
    REQUIRE(comma < int(trace->tokens().size()));
    qk->setHovered(qk->pointOf(false, comma, -1));
    CHECK(qk->hoverText().contains(QStringLiteral("punctuation")));
}

TEST_CASE_METHOD(ViewsFixture, "The views' State structs round-trip", "[ui][views][state]") {
    openStandIn();
    show(views->lines(), &ViewsController::linesShown);
    ViewsController::State st;
    st.tab = 2;
    st.selectedSide = 0;
    st.selectedIndex = 3;
    st.lines.hiddenHeads = {1, 3};
    st.lines.threshold = 0.2;
    st.neuron.query = 6;
    st.qk.allHeads = true;
    st.qk.coloring = QkColoring::TokenKind;
    after(&ViewsController::qkShown, [&] { views->setState(st); });
    const ViewsController::State got = views->state();
    CHECK(got.tab == 2);
    CHECK(got.selectedSide == 0);
    CHECK(got.selectedIndex == 3);
    CHECK(got.lines.hiddenHeads == std::vector<int>{1, 3});
    CHECK(got.lines.threshold == Approx(0.2));
    CHECK(got.neuron.query == 3);  // the selection is a query: the neuron view follows it
    CHECK(got.qk.allHeads);
    CHECK(got.qk.coloring == QkColoring::TokenKind);
    CHECK(views->tabs()->currentWidget() == views->qkSpace());
    CHECK(views->lines()->shownHeads() == std::vector<int>{0, 2});
    CHECK(views->qkSpace()->figure().space.points() == 2 * 4 * int(session->trace()->tokens().size()));
    CHECK(views->heatmapHighlight() == std::make_pair(0, 3));
    // A key selection leaves the neuron view on its own query.
    st.selectedSide = 1;
    st.tab = 1;
    after(&ViewsController::neuronShown, [&] { views->setState(st); });
    CHECK(views->state().neuron.query == 6);
    CHECK(views->neuron()->figure().row.query == 6);
}

TEST_CASE_METHOD(ViewsFixture, "File > Export View writes the shown view at a venue width", "[ui][views][export]") {
    openStandIn();
    show(views->qkSpace(), &ViewsController::qkShown);
    QAction* action = window.findChild<QAction*>(QStringLiteral("exportViewAction"));
    REQUIRE(action);
    action->trigger();
    auto* dialog = window.findChild<ExportDialog*>(QStringLiteral("exportViewDialog"));
    REQUIRE(dialog);
    const auto dir = freshDir("ui-views-export");
    for (const char* ext : {"pdf", "svg", "png"}) {
        dialog->setPath(qpath(dir / (std::string("qk.") + ext)));
        dialog->setWidthInches(ExportDialog::kTwoColumnIn);
        dialog->setDpi(300);
        REQUIRE(dialog->exportNow());
    }
    requireFigureFiles(qpath(dir / "qk.pdf"), qpath(dir / "qk.svg"), qpath(dir / "qk.png"), 6.75 * 72,
                       QStringLiteral("queries"));
    dialog->close();

    // The line view at one column: the dialog offers the same widths.
    show(views->lines(), &ViewsController::linesShown);
    action->trigger();
    REQUIRE(QTest::qWaitFor([&] {
        dialog = window.findChild<ExportDialog*>(QStringLiteral("exportViewDialog"));
        return dialog && dialog->isVisible();
    }));
    dialog->setPath(qpath(dir / "lines.pdf"));
    dialog->setWidthInches(ExportDialog::kOneColumnIn);
    dialog->setDpi(300);
    REQUIRE(dialog->exportNow());
    dialog->setPath(qpath(dir / "lines.svg"));
    REQUIRE(dialog->exportNow());
    dialog->setPath(qpath(dir / "lines.png"));
    REQUIRE(dialog->exportNow());
    requireFigureFiles(qpath(dir / "lines.pdf"), qpath(dir / "lines.svg"), qpath(dir / "lines.png"), 3.25 * 72,
                       QStringLiteral("keys"));
    dialog->close();
}

}  // namespace test_views_variants
