// The neuron view and the query–key space on the real window: the numbers shown are core's
// (analysis/neuron.h, analysis/qk_space.h) for the window's selection and temperature, the
// products sum to the logits behind the heat map, hovering and selecting link the heat map and
// the line view, refusals say why, on the stand-in, Llama and BERT folders and the built-ins,
// and each view exports PDF/SVG/PNG that parse.
#include "views_fixture.h"

#include "attnscope/analysis/neuron.h"
#include "attnscope/analysis/qk_space.h"
#include "family_fixtures.h"
#include "figure/qkfigure.h"

#include <QComboBox>
#include <QImage>
#include <QPainter>

namespace test_views_neuron_qk {

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

// The view's row is core's, its weights the heat map's row, its products sum to its logits.
void requireNeuronMatches(const NeuronView& view, const attnscope::Trace& trace, const MapKey& key, int query, double T,
                          const HeatmapView& heat) {
    REQUIRE(view.hasRow());
    const attnscope::NeuronRow& got = view.figure().row;
    const attnscope::NeuronRow want = attnscope::neuronRow(trace, key.block, key.layer, key.head, query, T);
    CHECK(got.query == query);
    CHECK(got.head == key.head);
    CHECK(got.products == want.products);
    CHECK(got.logits == want.logits);
    CHECK(got.weights == want.weights);
    const attnscope::HeadMap& shown = heat.map();
    REQUIRE(shown.cols == got.keys);
    double worst = 0;
    for (int j = 0; j < got.keys; ++j) {
        double sum = 0;
        for (int d = 0; d < got.dim; ++d) sum += got.product(j, d);
        worst = std::max(worst, std::abs(got.scale * sum + got.extra[j] - got.logits[j]));
        CHECK(got.weights[j] == Approx(shown.at(query, j)).margin(2e-6));
    }
    CHECK(worst < 1e-5);
}

}  // namespace

TEST_CASE_METHOD(ViewsFixture, "Neuron view: core's numbers for the selection and temperature, linked, exported",
                 "[ui][views][neuron]") {
    openStandIn();
    show(views->neuron(), &ViewsController::neuronShown);
    NeuronView* neuron = views->neuron();
    const auto trace = session->trace();
    const int n = heatmap->map().rows;
    CHECK(neuron->queryCombo()->count() == n);
    CHECK(neuron->query() == n - 1);  // starts on the last query
    requireNeuronMatches(*neuron, *trace, window.currentKey(), n - 1, 1.0, *heatmap);

    // Head and temperature follow the window; the heat map shows the same rows.
    after(&ViewsController::neuronShown, [&] { head->setValue(2); });
    waitForMap(trace->map(0, 0, 2));
    requireNeuronMatches(*neuron, *trace, window.currentKey(), n - 1, 1.0, *heatmap);
    after(&ViewsController::neuronShown, [&] { slider->setValue(slider->maximum()); });
    const double T = controls->temperature()->temperature();
    REQUIRE(T > 5);
    attnscope::MapOptions hot;
    hot.temperature = T;
    waitForMap(trace->map(0, 0, 2, hot));
    requireNeuronMatches(*neuron, *trace, window.currentKey(), n - 1, T, *heatmap);

    // Choosing a query: its row framed in the heat map, the line view locked on it.
    after(&ViewsController::neuronShown, [&] { neuron->queryCombo()->setCurrentIndex(3); });
    requireNeuronMatches(*neuron, *trace, window.currentKey(), 3, T, *heatmap);
    CHECK(views->heatmapHighlight() == std::make_pair(0, 3));
    CHECK(views->lines()->focusQuery() == 3);
    CHECK(views->lines()->locked());
    // Hovering a key row frames its column while hovered.
    QTest::mouseMove(neuron->canvas(), neuron->keyRowCenter(2).toPoint());
    REQUIRE(QTest::qWaitFor([&] { return neuron->figure().focusKey == 2; }, 2000));
    CHECK(views->heatmapHighlight() == std::make_pair(1, 2));

    const fs::path dir = freshDir("ui-neuron-export");
    const QString pdf = qpath(dir / "n.pdf"), svg = qpath(dir / "n.svg"), png = qpath(dir / "n.png");
    neuron->exportFigure(pdf);
    neuron->exportFigure(svg);
    neuron->exportFigure(png);
    requireFigureFiles(pdf, svg, png, 6.75 * 72, QStringLiteral("weight"));
}

TEST_CASE_METHOD(ViewsFixture, "Query-key space: core's projection, scope, hover, selection linking, export",
                 "[ui][views][qk]") {
    openStandIn();
    show(views->qkSpace(), &ViewsController::qkShown);
    QkSpaceView* qk = views->qkSpace();
    const auto trace = session->trace();
    const int n = heatmap->map().rows;
    attnscope::QkSpaceOptions one;
    one.head = 0;
    const attnscope::QkSpace want = attnscope::qkSpace(*trace, 0, 0, one);
    REQUIRE(qk->hasSpace());
    CHECK(qk->figure().space.x == want.x);
    CHECK(qk->figure().space.y == want.y);
    CHECK(qk->figure().space.points() == 2 * n);

    after(&ViewsController::qkShown, [&] { qk->scopeCombo()->setCurrentIndex(1); });
    const attnscope::QkSpace all = attnscope::qkSpace(*trace, 0, 0);
    CHECK(qk->figure().space.x == all.x);
    CHECK(qk->figure().space.points() == 2 * n * 4);
    // Coloured by token kind, the legend is wider than a narrow figure: it is drawn smaller, so
    // its first marker (the queries' green dot) is still inside the picture.
    {
        QkFigure narrow = qk->figure();
        narrow.coloring = QkColoring::TokenKind;
        narrow.title = QStringLiteral("layer 0 · all 4 heads");
        QImage img(240, 240, QImage::Format_ARGB32);
        img.fill(Qt::white);
        QPainter painter(&img);
        painter.setRenderHint(QPainter::Antialiasing, false);
        paintQkFigure(painter, narrow, QRectF(0, 0, 240, 240));
        painter.end();
        bool marker = false;
        for (int yy = 0; yy < 40 && !marker; ++yy)
            for (int xx = 0; xx < img.width() && !marker; ++xx)
                marker = img.pixelColor(xx, yy) == QColor(0x1b, 0x9e, 0x77);
        CHECK(marker);
    }
    qk->coloringCombo()->setCurrentIndex(2);
    CHECK(qk->figure().coloring == QkColoring::Head);
    after(&ViewsController::qkShown, [&] { qk->scopeCombo()->setCurrentIndex(0); });

    // Hover a key: its token below the plot, its column framed.
    const int key5 = qk->pointOf(true, 5, 0);
    REQUIRE(key5 >= 0);
    QTest::mouseMove(qk->canvas(), qk->pointCenter(key5).toPoint());
    REQUIRE(QTest::qWaitFor([&] { return qk->figure().hovered >= 0; }, 2000));
    const int hovered = qk->figure().hovered;  // the nearest point (another may lie on top)
    CHECK(qk->hoverText().contains(heatmap->keyLabels().value(qk->figure().space.position[hovered])));
    CHECK(views->heatmapHighlight().second == qk->figure().space.position[hovered]);

    // Select a query: the heat map's row, the line view and the neuron view follow, and the keys
    // are sized by the query's attention at the slider's temperature.
    const int query4 = qk->pointOf(false, 4, 0);
    views->select(0, 4);
    CHECK(qk->selected() == query4);
    CHECK(views->heatmapHighlight() == std::make_pair(0, 4));
    CHECK(views->lines()->focusQuery() == 4);
    CHECK(views->neuron()->query() == 4);
    const attnscope::HeadMap map = trace->map(0, 0, 0);
    CHECK(qk->figure().selectedRow ==
          std::vector<float>(map.values.begin() + 4 * map.cols, map.values.begin() + 5 * map.cols));
    // A click on a key point selects its column.
    const QPointF k2 = qk->pointCenter(qk->pointOf(true, 2, 0));
    QTest::mouseClick(qk->canvas(), Qt::LeftButton, {}, k2.toPoint());
    REQUIRE(qk->selected() >= 0);
    CHECK(qk->figure().space.isKey[qk->selected()]);
    CHECK(views->heatmapHighlight().first == 1);
    CHECK(views->lines()->focusKey() == qk->figure().space.position[qk->selected()]);

    const fs::path dir = freshDir("ui-qk-export");
    const QString pdf = qpath(dir / "q.pdf"), svg = qpath(dir / "q.svg"), png = qpath(dir / "q.png");
    qk->exportFigure(pdf);
    qk->exportFigure(svg);
    qk->exportFigure(png);
    requireFigureFiles(pdf, svg, png, 3.25 * 72, QStringLiteral("queries"));
}

TEST_CASE_METHOD(ViewsFixture,
                 "The views on Llama (grouped-query) and BERT folders and the built-ins; refusals say why",
                 "[ui][views][families]") {
    LlamaSpec spec;  // 4 query heads, 2 key/value groups
    const auto dir = freshDir("ui-views-llama");
    writeCheckpoint(dir, makeLlama(spec, 22));
    open(qpath(dir));
    show(views->neuron(), &ViewsController::neuronShown);
    after(&ViewsController::neuronShown, [&] { head->setValue(3); });
    waitForMap(session->trace()->map(0, 0, 3));
    requireNeuronMatches(*views->neuron(), *session->trace(), window.currentKey(), views->neuron()->query(), 1.0,
                         *heatmap);
    CHECK(views->neuron()->figure().row.kvGroup == 1);
    show(views->qkSpace(), &ViewsController::qkShown);
    CHECK(views->qkSpace()->figure().space.x ==
          attnscope::qkSpace(*session->trace(), 0, 0, attnscope::QkSpaceOptions{3, true}).x);

    const auto bert = freshDir("ui-views-bert");
    writeCheckpoint(bert, makeBert(BertSpec{}, 23));
    open(qpath(bert));
    show(views->lines(), &ViewsController::linesShown);
    CHECK(views->lines()->figure().heads.size() == 3);
    show(views->neuron(), &ViewsController::neuronShown);
    requireNeuronMatches(*views->neuron(), *session->trace(), window.currentKey(), views->neuron()->query(), 1.0,
                         *heatmap);

    // Additive attention has no q·k: the neuron and query-key views say so.
    open(QStringLiteral("builtin:reverse-additive"));
    show(views->neuron(), &ViewsController::neuronShown);
    CHECK(views->neuron()->message().contains(QStringLiteral("additive attention")));
    show(views->qkSpace(), &ViewsController::qkShown);
    CHECK(views->qkSpace()->message().contains(QStringLiteral("additive")));
    show(views->lines(), &ViewsController::linesShown);
    CHECK(views->lines()->message().isEmpty());  // its maps are drawn all the same
    // Linear attention: the query-key space works, the neuron view says why not.
    open(QStringLiteral("builtin:reverse-linear"));
    show(views->qkSpace(), &ViewsController::qkShown);
    CHECK(views->qkSpace()->hasSpace());
    show(views->neuron(), &ViewsController::neuronShown);
    CHECK(views->neuron()->message().contains(QStringLiteral("linear attention")));
}

}  // namespace test_views_neuron_qk
