// A long input in the window: 2,048 ids on a small random Llama-shaped checkpoint whose first
// head is made sparse (its queries scaled up, so each row puts nearly all its weight on one key).
// Its max-pooled thumbnail is not blank where the mean would be; the heat map shows the map at
// screen resolution (Trace::pooledMap of the visible rectangle), recomputes it for a zoom that
// brings crisp cells and every token's label, hovers exact weights, exports what it shows, and
// follows the pooling combo (thumbnails too).
#include "window_fixture.h"

#include "family_fixtures.h"
#include "figure/colormaps.h"
#include "window/mappresenter.h"

#include <qcustomplot.h>

#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QStatusBar>
#include <QTimer>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>

namespace test_long_map {

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

double largest(const attnscope::HeadMap& m) { return *std::max_element(m.values.begin(), m.values.end()); }

}  // namespace

TEST_CASE_METHOD(WindowFixture, "A 2,048-token input: sparse thumbnails, a level-of-detail heat map, zoom and pooling",
                 "[ui][long]") {
    const int n = 2048;
    LlamaSpec spec;
    spec.positions = n;
    Checkpoint c = makeLlama(spec, 21);
    // Head 0 of layer 0: queries 40x larger, so its softmax is nearly one-hot (a sparse head).
    const int d = llamaHeadDim(spec);
    auto& q = c.tensors.at("model.layers.0.self_attn.q_proj.weight").values;
    for (int i = 0; i < d * spec.hidden; ++i) q[std::size_t(i)] *= 40.0f;
    const fs::path folder = freshDir("ui-long-llama");
    writeCheckpoint(folder, c);
    open(qpath(folder));

    QStringList ids;
    for (int i = 0; i < n; ++i) ids << QString::number((i * 7 + i / 5) % spec.vocab);
    input->setText(ids.join(QLatin1Char(' ')));
    QSignalSpy traced(session, &Session::traceReady);
    QTest::mouseClick(run, Qt::LeftButton);
    REQUIRE(traced.wait(60000));
    const auto trace = session->trace();
    REQUIRE(trace->ids().size() == std::size_t(n));
    layer->setValue(0);
    head->setValue(0);
    const attnscope::HeadMap exact = trace->map(0, 0, 0);

    // The overview: every thumbnail max-pooled to 48 px. The sparse head's mean over 43 x 43 cells
    // is nearly black; its max keeps the strong cells.
    attnscope::PoolRequest thumb;
    thumb.outRows = thumb.outCols = 48;
    const attnscope::HeadMap maxThumb = trace->pooledMap(0, 0, 0, thumb);
    thumb.pooling = attnscope::Pooling::Mean;
    const attnscope::HeadMap meanThumb = trace->pooledMap(0, 0, 0, thumb);
    CHECK(largest(meanThumb) < 0.1);
    const auto bright = std::count_if(maxThumb.values.begin(), maxThumb.values.end(), [](float v) { return v > 0.5f; });
    CHECK(bright > 48 * 48 / 4);  // the lower triangle's bins mostly hold a near-one cell
    // (The example run's thumbnails show until this trace's arrive.)
    REQUIRE(QTest::qWaitFor(
            [&] {
                return overview->images().size() == 8 &&
                       sameImage(overview->images()[0], thumbnailImage(maxThumb, controls));
            },
            60000));
    CHECK_FALSE(sameImage(overview->images()[0], thumbnailImage(meanThumb, controls)));

    // The heat map holds the exact map (hover) but draws the visible rectangle pooled to pixels.
    REQUIRE(QTest::qWaitFor([&] { return heatmap->map().values == exact.values; }, 20000));
    REQUIRE(heatmap->usesLevelOfDetail());
    REQUIRE(QTest::qWaitFor([&] { return !heatmap->levelOfDetail().values.empty(); }, 20000));
    // The image is the visible rectangle pooled to (about) the plot's pixels: the margins may move
    // the plot by a few pixels after the request, so its bin counts rebuild the request.
    attnscope::PoolRequest wanted = heatmap->levelOfDetailRequest();
    wanted.outRows = heatmap->levelOfDetail().rows;
    wanted.outCols = heatmap->levelOfDetail().cols;
    CHECK(heatmap->levelOfDetail().values == trace->pooledMap(0, 0, 0, wanted).values);
    CHECK(wanted.rowEnd - wanted.rowBegin == n);
    const QRect plotArea = heatmap->plot()->axisRect()->rect();
    CHECK(std::abs(heatmap->levelOfDetail().cols - plotArea.width()) <= 16);
    CHECK(std::abs(heatmap->levelOfDetail().rows - plotArea.height()) <= 16);
    CHECK(heatmap->levelOfDetail().rows < n);
    CHECK(heatmap->colorMap()->data()->keySize() == heatmap->levelOfDetail().cols);
    // When the layout has settled, the image is asked for again at the plot's own pixel size.
    REQUIRE(QTest::qWaitFor(
            [&] {
                const attnscope::PoolRequest now = heatmap->levelOfDetailRequest(),
                                             drawn = heatmap->levelOfDetailShown();
                return drawn.outRows == now.outRows && drawn.outCols == now.outCols &&
                       heatmap->levelOfDetail().rows == now.outRows;
            },
            20000));
    // Exported as shown: the bins, labelled with each bin's first token.
    HeatmapView::Shown shown = heatmap->shown();
    CHECK(shown.map.rows == heatmap->levelOfDetail().rows);
    CHECK(shown.queryLabels.size() == shown.map.rows);

    // Zoom to 30 x 30 cells: one bin per cell (crisp, the exact weights), every token labelled
    // (square cells: the window has the room of a 1920 x 1080 screen).
    window.resize(1920, 1080);
    QTest::qWait(50);
    const int r0 = 1500, c0 = 1000;
    heatmap->setZoom(heatmap->zoom().toRect(c0, r0, c0 + 29, r0 + 29));
    CHECK(heatmap->zoom().rowBegin() == r0);
    CHECK(heatmap->zoom().rowEnd() == r0 + 30);
    REQUIRE(QTest::qWaitFor([&] { return heatmap->levelOfDetail().rows == 30 && heatmap->levelOfDetail().cols == 30; },
                            20000));
    double worst = 0;
    for (int i = 0; i < 30; ++i)
        for (int j = 0; j < 30; ++j)
            worst = std::max(worst, double(std::abs(heatmap->levelOfDetail().at(i, j) - exact.at(r0 + i, c0 + j))));
    CHECK(worst < 1e-6);
    const QStringList rows = heatmap->queryTickLabels();
    CHECK(rows.size() == 30);
    CHECK(rows.contains(heatmap->queryLabels()[r0]));
    CHECK(heatmap->describeCell({r0 + 3, c0 + 4}).endsWith(QString::number(double(exact.at(r0 + 3, c0 + 4)), 'f', 4)));
    shown = heatmap->shown();
    CHECK(shown.map.rows == 30);
    CHECK(shown.map.at(3, 4) == exact.at(r0 + 3, c0 + 4));
    CHECK(shown.keyLabels.front() == heatmap->keyLabels()[c0]);

    // The pooling combo: mean, for the zoomed-out image and the thumbnails.
    heatmap->resetZoom();
    heatmap->poolingCombo()->setCurrentIndex(heatmap->poolingCombo()->findData(int(attnscope::Pooling::Mean)));
    CHECK(heatmap->pooling() == attnscope::Pooling::Mean);
    CHECK(heatmap->levelOfDetailRequest().pooling == attnscope::Pooling::Mean);
    REQUIRE(QTest::qWaitFor(
            [&] {
                wanted = heatmap->levelOfDetailRequest();
                wanted.outRows = heatmap->levelOfDetail().rows;
                wanted.outCols = heatmap->levelOfDetail().cols;
                return heatmap->levelOfDetail().rows > 30 &&
                       heatmap->levelOfDetail().values == trace->pooledMap(0, 0, 0, wanted).values;
            },
            20000));
    REQUIRE(QTest::qWaitFor(
            [&] {
                return overview->images().size() == 8 &&
                       sameImage(overview->images()[0], thumbnailImage(meanThumb, controls));
            },
            60000));

    // A new head of a long map is drawn from its shape before its values arrive: hovering names
    // the cell and says the weight is being computed, exports refuse with a dialog, and the
    // exact values follow.
    head->setValue(1);
    // (The window's map presenter sends its request at the event loop's next turn, with any
    // other change made in this one: deliver just that call.)
    auto* presenter = window.findChild<MapPresenter*>();
    REQUIRE(presenter);
    QCoreApplication::sendPostedEvents(presenter, QEvent::MetaCall);
    REQUIRE(heatmap->valuesPending());
    CHECK(heatmap->map().rows == n);
    CHECK(heatmap->usesLevelOfDetail());
    CHECK(heatmap->describeCell({5, 3}).endsWith(QStringLiteral("computing\u2026")));
    const fs::path out = freshDir("ui-long-pending");
    CHECK_FALSE(window.writeCurrentMapData(qpath(out / "pending.csv")));
    CHECK_FALSE(fs::exists(out / "pending.csv"));
    auto* box = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"));
    REQUIRE(box);
    CHECK(box->text().contains(QStringLiteral("still being computed")));
    box->close();
    const attnscope::HeadMap exact1 = trace->map(0, 0, 1);
    REQUIRE(QTest::qWaitFor([&] { return heatmap->map().values == exact1.values; }, 20000));
    CHECK_FALSE(heatmap->valuesPending());
    CHECK(window.statusBar()->currentMessage().startsWith(QStringLiteral("Exact weights (hover, export) ready in")));
    CHECK(heatmap->describeCell({5, 3}).endsWith(QString::number(double(exact1.at(5, 3)), 'f', 4)));
    CHECK(window.writeCurrentMapData(qpath(out / "head1.csv")));
    CHECK(fs::exists(out / "head1.csv"));
    fs::remove_all(out);
    fs::remove_all(folder);
}

}  // namespace test_long_map
