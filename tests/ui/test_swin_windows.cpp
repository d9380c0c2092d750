// Swin in the window, through the real widgets: the heat map outlines the shown layer's windows
// (exactly the border of the cells whose query and key share a window, as core's keyWindows
// says), shifted on the odd layer, and names the window padding; the Image tab draws the window
// grid with the query's window outlined and says how much of its row fell on padding.
#include "controllers/imagecontroller.h"
#include "panels/imageoverlaypanel.h"
#include "views/imageoverlay.h"
#include "views/windowoutline.h"
#include "window_fixture.h"

#include "family_fixtures.h"
#include "fixtures_swin.h"
#include "png_write.h"

#include "attnscope/analysis/overlay.h"
#include "attnscope/attention/window_padding.h"

#include <QMouseEvent>

#include <set>
#include <tuple>

namespace test_swin_windows {

using namespace uitest;
using namespace attnscope::testing;

namespace {

// A 28² Swin (patch 4: a 7×7 stage-1 grid padded to 9×9 for windows of 3; 4×4 at stage 2).
std::filesystem::path writeSwinFolder(const std::string& name) {
    const SwinSpec spec;
    const auto dir = freshDir(name);
    writeCheckpoint(dir, makeSwin(spec, 71));
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "ViTImageProcessor", "resample": 3, "size": {"height": 28, "width": 28},)"
              R"( "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]})");
    writeNoisePng(dir / "picture.png", 28, 28, 7);
    return dir;
}

using Edge = std::tuple<double, double, double, double>;

// The border of {(i, j): windows[i] == windows[j]} over the whole n × m map, by brute force:
// every side of an inside cell whose neighbour is outside or off the matrix.
std::set<Edge> borderOf(const std::vector<int>& windows, int n, int m) {
    const auto in = [&](int i, int j) { return i >= 0 && i < n && j >= 0 && j < m && windows[i] == windows[j]; };
    std::set<Edge> out;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            if (!in(i, j)) continue;
            if (!in(i, j - 1)) out.emplace(j - 0.5, i - 0.5, j - 0.5, i + 0.5);
            if (!in(i, j + 1)) out.emplace(j + 0.5, i - 0.5, j + 0.5, i + 0.5);
            if (!in(i - 1, j)) out.emplace(j - 0.5, i - 0.5, j + 0.5, i - 0.5);
            if (!in(i + 1, j)) out.emplace(j - 0.5, i + 0.5, j + 0.5, i + 0.5);
        }
    return out;
}

std::set<Edge> drawnEdges(const WindowOutline& outline) {
    std::set<Edge> out;
    for (const QLineF& l : outline.edges()) out.emplace(l.x1(), l.y1(), l.x2(), l.y2());
    return out;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "Swin: the heat map outlines each layer's windows and the image shows the window grid",
                 "[ui][image][swin]") {
    window.resize(1280, 720);
    const auto dir = writeSwinFolder("ui-swin");
    openWithImage(qpath(dir), qpath(dir / "picture.png"));
    const auto trace = session->trace();
    REQUIRE(trace->blocks().size() == 2u);  // stage1, stage2
    const int n = 49, m = 81;               // stage 1: 49 tokens, 32 padding keys

    for (int l : {0, 1}) {
        layer->setValue(l);
        waitForMap(trace->map(0, l, head->value()));
        const std::vector<int> windows = attnscope::keyWindows(*trace, 0, l);
        REQUIRE(windows.size() == std::size_t(m));
        const WindowOutline* outline = heatmap->windowOutline();
        REQUIRE(outline->active());
        CHECK(heatmap->title().contains(QStringLiteral("windows outlined")));
        CHECK(heatmap->title().contains(QStringLiteral("last 32 keys: window padding")));
        REQUIRE(outline->drawsAtCurrentZoom());  // 81 columns fit at more than 3 px a cell
        const std::set<Edge> want = borderOf(windows, n, m), got = drawnEdges(*outline);
        CHECK(got.size() == want.size());
        CHECK(got == want);
        // Zoomed in on the top-left corner, the edges there are the same ones.
        MapZoom corner = MapZoom::whole(n, m);
        corner.keyUpper = corner.queryUpper = 8.5;
        heatmap->setZoom(corner);
        QCoreApplication::processEvents();
        for (const Edge& e : drawnEdges(*outline)) CHECK(want.count(e) == 1);
        heatmap->resetZoom();
    }
    // The shifted layer's windows differ: r0c0 wraps into the last window.
    CHECK(attnscope::keyWindows(*trace, 0, 1)[0] != attnscope::keyWindows(*trace, 0, 0)[0]);

    // Stage 2 (4×4 grid, windows of 3, padded to 6×6): the outline follows the block.
    controls->blockCombo()->setCurrentIndex(1);
    layer->setValue(0);
    waitForMap(trace->map(1, 0, head->value()));
    REQUIRE(heatmap->windowOutline()->active());
    CHECK(drawnEdges(*heatmap->windowOutline()) == borderOf(attnscope::keyWindows(*trace, 1, 0), 16, 36));
    heatmap->clear(QStringLiteral("gone"));  // a cleared map draws no windows
    CHECK_FALSE(heatmap->windowOutline()->active());

    // The Image tab: stage 1, layer 0 (unshifted), the row of r6c6: its window holds padding,
    // which the shifted layer's windows only hold across regions (-100, so ~0 weight).
    controls->blockCombo()->setCurrentIndex(0);
    layer->setValue(0);
    ImageController* image = window.imageView();
    ImageOverlayPanel* panel = image->panel();
    ImageOverlayView* view = panel->view();
    window.tabs()->setCurrentWidget(panel);
    REQUIRE(QTest::qWaitFor([&] { return image->shown().trace == trace && view->hasPicture(); }, 20000));
    QTest::mouseClick(view, Qt::LeftButton, {}, view->patchRect(48).center().toPoint());
    attnscope::OverlayOptions o;
    o.layer = 0;
    o.head = head->value();
    o.query = 48;
    const attnscope::PatchOverlay want = attnscope::patchOverlay(*trace, 0, o);
    REQUIRE(QTest::qWaitFor([&] { return view->picture().values == want.patches; }, 20000));
    CHECK(view->picture().windows == want.windows);
    CHECK(view->picture().markedPatch == 48);
    CHECK(want.paddingWeight > 0);
    CHECK(view->caption().contains(QStringLiteral("weight on window padding")));
    CHECK(view->caption().contains(QString::number(want.paddingWeight, 'g', 3)));

    // On screen: the border between two patches of different windows is drawn in white.
    panel->opacitySlider()->setValue(100);
    REQUIRE(QTest::qWaitFor([&] { return view->picture().opacity == 1.0; }));
    QMouseEvent away(QEvent::MouseMove, QPointF(1, 1), view->mapToGlobal(QPointF(1, 1)), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QCoreApplication::sendEvent(view, &away);
    const QImage shot = view->grab().toImage();
    const double ratio = shot.width() / double(view->width());
    int borders = 0;
    for (int r = 0; r < 7; ++r)
        for (int c = 0; c + 1 < 7; ++c) {
            const int a = r * 7 + c;
            if (want.windows[std::size_t(a)] == want.windows[std::size_t(a + 1)]) continue;
            const int mine = want.windows[48];
            if (want.windows[std::size_t(a)] == mine || want.windows[std::size_t(a + 1)] == mine) continue;
            const QRectF left = view->patchRect(a);
            const QPointF at = QPointF(left.right(), left.center().y()) * ratio;
            int brightest = 0;
            for (int dx = -1; dx <= 1; ++dx) {
                const QColor px = shot.pixelColor(at.toPoint() + QPoint(dx, 0));
                brightest = std::max(brightest, std::min({px.red(), px.green(), px.blue()}));
            }
            CHECK(brightest > 200);
            ++borders;
        }
    CHECK(borders > 0);

    // The shifted layer: the overlay's windows follow it (r0c0 wraps into the last window).
    layer->setValue(1);
    const std::vector<int> shifted = attnscope::keyWindows(*trace, 0, 1);
    REQUIRE(QTest::qWaitFor(
            [&] {
                const auto& w = view->picture().windows;
                return w.size() == 49u && std::equal(w.begin(), w.end(), shifted.begin());
            },
            20000));
    CHECK(view->picture().windows[0] == 8);  // (0 - 1) mod 9 = 8: the last row and column of windows
}

}  // namespace test_swin_windows
