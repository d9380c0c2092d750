// A long input in the window: 2,048 ids on a small random Llama-shaped checkpoint whose first
// head is made sparse (its queries scaled up, so each row puts nearly all its weight on one key).
// Its max-pooled thumbnail is not blank where the mean would be; the heat map shows the map at
// screen resolution (Trace::pooledMap of the visible rectangle), recomputes it for a zoom that
// brings crisp cells and every token's label, hovers exact weights, exports what it shows, and
// follows the pooling combo (thumbnails too).
#include "window_fixture.h"

#include "family_fixtures.h"
#include "figure/colormaps.h"

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

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

bool sameImage(const QImage& a, const QImage& b) {
    return a.size() == b.size() && a.convertToFormat(QImage::Format_RGB32) == b.convertToFormat(QImage::Format_RGB32);
}

QImage thumbnail(const attnscope::HeadMap& m, const ControlPanel* controls) {
    return pooledImage({m.cols, m.rows, std::vector<double>(m.values.begin(), m.values.end())}, controls->colormap(),
                       controls->colorScale());
}

double largest(const attnscope::HeadMap& m) { return *std::max_element(m.values.begin(), m.values.end()); }

// Like QTest::qWaitFor, for timings: the predicate is checked every millisecond from a running
// event loop. (qWaitFor sleeps 10 ms between its checks, and while it sleeps no queued call,
// job result or replot moves on, which the window's own event loop would not do.)
bool waitTimed(const std::function<bool()>& done, int timeoutMs) {
    if (done()) return true;
    QEventLoop loop;
    QTimer tick, deadline;
    QObject::connect(&tick, &QTimer::timeout, &loop, [&] {
        if (done()) loop.quit();
    });
    QObject::connect(&deadline, &QTimer::timeout, &loop, &QEventLoop::quit);
    tick.start(1);
    deadline.setSingleShot(true);
    deadline.start(timeoutMs);
    loop.exec();
    return done();
}

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
                       sameImage(overview->images()[0], thumbnail(maxThumb, controls));
            },
            60000));
    CHECK_FALSE(sameImage(overview->images()[0], thumbnail(meanThumb, controls)));

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
                       sameImage(overview->images()[0], thumbnail(meanThumb, controls));
            },
            60000));

    // A new head of a long map is drawn from its shape before its values arrive: hovering names
    // the cell and says the weight is being computed, exports refuse with a dialog, and the
    // exact values follow.
    head->setValue(1);
    // (The window sends its request at the event loop's next turn, with any other change made
    // in this one: deliver just that call.)
    QCoreApplication::sendPostedEvents(&window, QEvent::MetaCall);
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

// Screenshots of the window on a long input (not run by default; writes overview.png and
// zoomed.png into ATTNSCOPE_SHOT_DIR):
//   ATTNSCOPE_SHOT_MODEL=/tmp/llama8k ATTNSCOPE_SHOT_DIR=/tmp/shots build/tests/ui/attnscope_ui_tests
//   "[.screenshots-long]"
TEST_CASE_METHOD(WindowFixture, "screenshots of a 4,096-token input", "[.screenshots-long]") {
    const char* model = std::getenv("ATTNSCOPE_SHOT_MODEL");
    const char* dir = std::getenv("ATTNSCOPE_SHOT_DIR");
    REQUIRE(model);
    REQUIRE(dir);
    const int n = 4096;
    window.resize(1500, 950);
    open(QString::fromLocal8Bit(model));
    QStringList ids;
    for (int i = 0; i < n; ++i) ids << QString::number((i * 7919 + 13) % 32000);
    input->setText(ids.join(QLatin1Char(' ')));
    QSignalSpy traced(session, &Session::traceReady);
    QTest::mouseClick(run, Qt::LeftButton);
    REQUIRE(traced.wait(600000));
    QElapsedTimer clock;
    clock.start();
    layer->setValue(5);
    head->setValue(3);
    // A log colour scale: random weights spread each row over thousands of keys.
    controls->scaleCombo()->setCurrentIndex(1);
    const auto trace = session->trace();
    const auto& info = trace->blocks()[0];
    attnscope::PoolRequest thumb;
    thumb.outRows = thumb.outCols = 48;
    // When the detail map and the last thumbnail first show, from the end of the forward (the
    // head change above restarts both): printed for docs/benchmarks.md. The test's own checks
    // (the images it compares with, computed here on the GUI thread) are not counted.
    qint64 detailMs = -1, thumbsMs = -1, ownMs = 0;
    QElapsedTimer own;
    std::vector<float> seen;  // the last level of detail checked
    std::optional<QImage> last;
    REQUIRE(waitTimed(
            [&] {
                const attnscope::HeadMap& lod = heatmap->levelOfDetail();
                if (detailMs < 0 && heatmap->map().rows == n && !lod.values.empty() && lod.values != seen) {
                    // Layer 5, head 3's own image (not the first head's, kept while it is computed).
                    const qint64 t = clock.elapsed() - ownMs;
                    seen = lod.values;
                    own.start();
                    if (lod.values == trace->pooledMap(0, 5, 3, heatmap->levelOfDetailRequest()).values) detailMs = t;
                    ownMs += own.elapsed();
                }
                // (The last thumbnail's reference is computed once the detail map is seen: on the GUI
                // thread, it would hold back the window's own work before that.)
                if (thumbsMs < 0 && detailMs >= 0 &&
                    overview->images().size() == std::size_t(info.layers * info.heads)) {
                    const qint64 t = clock.elapsed() - ownMs;
                    own.start();
                    if (!last) last = thumbnail(trace->pooledMap(0, info.layers - 1, info.heads - 1, thumb), controls);
                    if (sameImage(overview->images().back(), *last)) thumbsMs = t;
                    ownMs += own.elapsed();
                }
                return detailMs >= 0 && thumbsMs >= 0;
            },
            900000));
    std::cout << "4,096 tokens in the window: detail map drawn after " << detailMs << " ms, all "
              << info.layers * info.heads << " thumbnails after " << thumbsMs << " ms" << std::endl;
    QTest::qWait(500);
    CHECK(window.grab().save(QDir(QString::fromLocal8Bit(dir)).filePath(QStringLiteral("overview.png"))));
    clock.restart();
    heatmap->setZoom(heatmap->zoom().toRect(0, 0, 39, 39));
    REQUIRE(waitTimed([&] { return heatmap->levelOfDetail().rows == 40; }, 120000));
    std::cout << "zoomed to rows 0-39: drawn after " << clock.elapsed() << " ms" << std::endl;
    QTest::qWait(500);
    CHECK(window.grab().save(QDir(QString::fromLocal8Bit(dir)).filePath(QStringLiteral("zoomed.png"))));
}
