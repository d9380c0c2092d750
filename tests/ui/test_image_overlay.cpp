// The Image tab on a ViT folder, driven through the real widgets: the overlay shows core's
// numbers (attnscope::patchOverlay) for the shown head, the layer mean and the rollout, follows
// the window's layer, head and temperature, a click on a patch shows its row, the look
// (opacity, colours) is what the screen draws, and the exported figure parses.
#include "figure/overlayfigure.h"
#include "panels/imageoverlaypanel.h"
#include "panels/modelviewpanel.h"
#include "views/imageoverlay.h"
#include "controllers/imagecontroller.h"
#include "controllers/labcontroller.h"
#include "controllers/modelviewcontroller.h"
#include "controllers/viewscontroller.h"
#include "panels/labpanel.h"
#include "window_fixture.h"

#include "family_fixtures.h"
#include "fixtures_vision.h"
#include "png_write.h"

#include "attnscope/analysis/overlay.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QMouseEvent>
#include <QSvgRenderer>

#include <fstream>

namespace test_image_overlay {

using namespace uitest;
using namespace attnscope::testing;
using attnscope::OverlaySource;

namespace {

struct VitFolder {
    std::filesystem::path dir;
    VitSpec spec;
};

// A 3-layer ViT on 32 × 32 pixels in 8-pixel patches (a 4 × 4 grid) and a 48 × 32 picture.
VitFolder writeVitFolder(const std::string& name) {
    VitFolder v;
    v.spec.layers = 3;
    v.spec.imageSize = 32;
    v.spec.patch = 8;
    v.dir = freshDir(name);
    writeCheckpoint(v.dir, makeVit(v.spec, 61));
    writeNoisePng(v.dir / "picture.png", 48, 32, 5);
    return v;
}

// A mouse move as the view gets it (no real pointer on the offscreen platform).
void moveMouse(QWidget* w, const QPointF& p) {
    QMouseEvent move(QEvent::MouseMove, p, w->mapToGlobal(p), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(w, &move);
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "Attention over the image shows core's overlay, follows the selection and exports",
                 "[ui][image][vit]") {
    const VitFolder v = writeVitFolder("ui-image-overlay");
    openWithImage(qpath(v.dir), qpath(v.dir / "picture.png"));
    const auto trace = session->trace();

    ImageController* image = window.imageView();
    ImageOverlayPanel* panel = image->panel();
    ImageOverlayView* view = panel->view();
    window.tabs()->setCurrentWidget(panel);

    // Waits until the panel shows core's overlay for these options.
    auto waitForOverlay = [&](attnscope::OverlayOptions o) {
        const attnscope::PatchOverlay want = attnscope::patchOverlay(*trace, 0, o);
        const bool shown = QTest::qWaitFor(
                [&] {
                    return image->shown().trace == trace && view->hasPicture() &&
                           view->picture().values == want.patches && image->shown().options.query == o.query &&
                           image->shown().options.source == o.source;
                },
                20000);
        REQUIRE(shown);
        CHECK(view->picture().gridRows == 4);
        CHECK(view->picture().gridCols == 4);
        CHECK(view->picture().maxValue == want.maxPatch);
        return want;
    };

    attnscope::OverlayOptions o;  // the [CLS] row of layer 0, head 0 at T = 1
    waitForOverlay(o);
    // The image keeps its own aspect (48 × 32) on screen, whatever the model resized it to.
    CHECK(view->imageRect().width() / view->imageRect().height() == Approx(1.5).epsilon(0.01));
    CHECK(view->caption().contains(QStringLiteral("[CLS] row · layer 0 · head 0")));

    // The window's layer and head: the overlay follows.
    layer->setValue(2);
    head->setValue(1);
    o.layer = 2;
    o.head = 1;
    waitForOverlay(o);
    // The temperature slider: maps at T, the overlay too.
    slider->setValue(slider->minimum() + (slider->maximum() - slider->minimum()) / 4);
    const double t = controls->temperature()->temperature();
    REQUIRE(t < 1.0);
    o.map.temperature = t;
    waitForOverlay(o);
    CHECK(view->caption().contains(QStringLiteral("T = ")));

    // The layer mean, then the rollout with vit-explain's discard.
    panel->sourceCombo()->setCurrentIndex(panel->sourceCombo()->findData(int(OverlaySource::LayerMean)));
    o.source = OverlaySource::LayerMean;
    waitForOverlay(o);
    CHECK_FALSE(panel->discardSpin()->isEnabled());
    panel->sourceCombo()->setCurrentIndex(panel->sourceCombo()->findData(int(OverlaySource::Rollout)));
    CHECK(panel->discardSpin()->isEnabled());
    panel->discardSpin()->setValue(0.5);
    panel->fusionCombo()->setCurrentIndex(panel->fusionCombo()->findData(int(attnscope::HeadFusion::Max)));
    o.source = OverlaySource::Rollout;
    o.rollout.discardRatio = 0.5;
    o.rollout.fusion = attnscope::HeadFusion::Max;
    const attnscope::PatchOverlay rollout = waitForOverlay(o);
    double rowSum = rollout.otherWeight;
    for (double w : rollout.patches) rowSum += w;
    CHECK(rowSum == Approx(1.0).margin(1e-9));

    // Hover shows the patch; a click shows that patch's row (patch 6 = r1c2 = token 7), marked.
    moveMouse(view, view->patchRect(6).center());
    CHECK(view->hoveredPatch() == 6);
    moveMouse(view, QPointF(1, 1));  // off the image
    CHECK(view->hoveredPatch() == -1);
    QTest::mouseClick(view, Qt::LeftButton, {}, view->patchRect(6).center().toPoint());
    o.query = 7;
    waitForOverlay(o);
    CHECK(view->picture().markedPatch == 6);
    CHECK(panel->clsButton()->isEnabled());
    CHECK(view->caption().contains(QStringLiteral("r1c2 row")));
    // Selection linking: the patch's row is framed in the heat map, and the views pick it.
    CHECK(window.views()->heatmapHighlight() == std::make_pair(0, 7));
    CHECK(window.views()->selectedSide() == 0);
    CHECK(window.views()->selectedIndex() == 7);
    QTest::mouseClick(panel->clsButton(), Qt::LeftButton);
    o.query = 0;
    waitForOverlay(o);
    CHECK(view->picture().markedPatch == -1);

    // The lab's linear variant: the overlay is core's overlay of the linear maps, and says so.
    QComboBox* variant = window.lab()->panel()->variantCombo();
    variant->setCurrentIndex(int(LabVariant::Linear));
    o.map = window.lab()->variantSpec(window.currentKey()).map;
    o.map.variant = attnscope::MapVariant::Linear;
    waitForOverlay(o);
    CHECK(view->caption().contains(QStringLiteral("lab: linear")));
    variant->setCurrentIndex(int(LabVariant::Native));
    o.map.variant = attnscope::MapVariant::Native;
    waitForOverlay(o);

    // The tab's State round-trips through its widgets.
    ImageController::State st = image->state();
    CHECK(st.source == OverlaySource::Rollout);
    CHECK(st.fusion == attnscope::HeadFusion::Max);
    CHECK(st.discardRatio == Approx(0.5));
    st.source = OverlaySource::LayerMean;
    st.opacity = 35;
    st.colormap = Colormap::Cividis;
    st.grid = true;
    st.query = 7;
    image->setState(st);
    const ImageController::State back = image->state();
    CHECK(back.source == OverlaySource::LayerMean);
    CHECK(back.opacity == 35);
    CHECK(back.colormap == Colormap::Cividis);
    CHECK(back.grid);
    CHECK(back.query == 7);
    o.source = OverlaySource::LayerMean;
    o.query = 7;
    waitForOverlay(o);
    st.source = OverlaySource::Rollout;
    st.opacity = 60;
    st.colormap = Colormap::Magma;
    st.grid = false;
    st.query = 0;
    image->setState(st);
    o.source = OverlaySource::Rollout;
    o.query = 0;
    waitForOverlay(o);

    // The look: at full opacity a patch's centre on screen is its value's colour.
    panel->opacitySlider()->setValue(100);
    panel->colormapCombo()->setCurrentIndex(int(Colormap::Viridis));
    panel->smoothCheck()->setChecked(false);
    REQUIRE(QTest::qWaitFor(
            [&] { return view->picture().opacity == 1.0 && view->picture().colormap == Colormap::Viridis; }));
    moveMouse(view, QPointF(1, 1));  // no hover outline over the patches
    REQUIRE(view->hoveredPatch() == -1);
    const QImage shot = view->grab().toImage();
    const double ratio = shot.width() / double(view->width());
    for (int p : {0, 5, 10, 15}) {
        const QPointF c = view->patchRect(p).center() * ratio;
        const QColor got = shot.pixelColor(c.toPoint()),
                     want = overlayColor(view->picture(), view->picture().values[std::size_t(p)]);
        INFO("patch " << p);
        CHECK(std::abs(got.red() - want.red()) <= 1);
        CHECK(std::abs(got.green() - want.green()) <= 1);
        CHECK(std::abs(got.blue() - want.blue()) <= 1);
    }

    // Export: PDF, SVG and PNG of the image plus its colour bar.
    panel->opacitySlider()->setValue(60);
    const auto out = freshDir("ui-image-overlay-export");
    REQUIRE(image->exportFigure(qpath(out / "overlay.pdf")));
    REQUIRE(image->exportFigure(qpath(out / "overlay.svg")));
    REQUIRE(image->exportFigure(qpath(out / "overlay.png")));
    QFile pdf(qpath(out / "overlay.pdf"));
    REQUIRE(pdf.open(QIODevice::ReadOnly));
    CHECK(pdf.read(5) == QByteArray("%PDF-"));
    QSvgRenderer svg(qpath(out / "overlay.svg"));
    CHECK(svg.isValid());
    const QImage png(qpath(out / "overlay.png"));
    REQUIRE_FALSE(png.isNull());
    CHECK(png.width() == 975);          // 3.25 in at 300 dpi
    CHECK(png.height() < png.width());  // a 3:2 picture with a title above
    const QSizeF pt = overlayFigureSizePoints(image->figure());
    CHECK(png.height() == int(std::lround(pt.height() * 300 / 72.0)));
    // An unwritable place is an error in the dialog that names the file.
    CHECK_FALSE(image->exportFigure(qpath(out / "missing" / "overlay.pdf")));
    CHECK(takeErrorDialog().contains(QStringLiteral("overlay.pdf")));
}

TEST_CASE_METHOD(WindowFixture, "The Image tab names a row that is not a patch by its token: registers, [DIST]",
                 "[ui][image][vision]") {
    VisionModelSpec spec;
    spec.type = "dinov2_with_registers";
    const auto dir = freshDir("ui-image-registers");
    writeCheckpoint(dir, makeVisionModel(spec, 23));
    std::ofstream(dir / "preprocessor_config.json") << R"({"size": 16, "crop_size": 16})";
    writeNoisePng(dir / "picture.png", 16, 16, 6);
    openWithImage(qpath(dir), qpath(dir / "picture.png"));
    ImageController* image = window.imageView();
    ImageOverlayPanel* panel = image->panel();
    window.tabs()->setCurrentWidget(panel);
    REQUIRE(QTest::qWaitFor([&] { return image->shown().trace == session->trace() && panel->view()->hasPicture(); },
                            20000));
    auto* row = panel->findChild<QLabel*>(QStringLiteral("overlayRowLabel"));
    REQUIRE(row);
    CHECK(row->text() == QStringLiteral("Row: [CLS]"));
    panel->setQuery(2);  // the second register (tokens: [CLS], [REG 1], [REG 2], r0c0, ...)
    CHECK(row->text() == QStringLiteral("Row: [REG 2]"));
    panel->setQuery(3);
    CHECK(row->text() == QStringLiteral("Row: patch r0c0"));

    // Patches only: core's row renormalised over the patches, the registers' weight left out.
    const auto trace = session->trace();
    attnscope::OverlayOptions o;
    o.query = 3;
    o.patchesOnly = true;
    const attnscope::PatchOverlay want = attnscope::patchOverlay(*trace, 0, o);
    REQUIRE(want.renormalised);
    panel->patchesOnlyCheck()->setChecked(true);
    REQUIRE(QTest::qWaitFor([&] { return panel->view()->picture().values == want.patches; }, 20000));
    double sum = 0;
    for (double v : panel->view()->picture().values) sum += v;
    CHECK(sum == Approx(1.0).margin(1e-9));
    CHECK(panel->view()->caption().contains(QStringLiteral("renormalised over the patches")));
    CHECK(image->state().patchesOnly);
    ImageController::State st = image->state();
    st.patchesOnly = false;
    image->setState(st);
    CHECK_FALSE(panel->patchesOnlyCheck()->isChecked());
    o.patchesOnly = false;
    const attnscope::PatchOverlay raw = attnscope::patchOverlay(*trace, 0, o);
    REQUIRE(QTest::qWaitFor([&] { return panel->view()->picture().values == raw.patches; }, 20000));
    CHECK(raw.otherWeight > 0);  // [CLS] and the registers hold weight the renormalised row leaves out
}

TEST_CASE_METHOD(WindowFixture, "The Image tab says why a text model has no attention over the image", "[ui][image]") {
    openStandIn();
    ImageOverlayPanel* panel = window.imageView()->panel();
    window.tabs()->setCurrentWidget(panel);
    REQUIRE(QTest::qWaitFor(
            [&] { return panel->view()->message().contains(QStringLiteral("reads tokens, not images")); }, 5000));
    CHECK_FALSE(panel->view()->hasPicture());
    CHECK_FALSE(panel->exportButton()->isEnabled());
}

TEST_CASE("Overlay figures: ticks, a size from the image's aspect, and errors that say what is missing",
          "[ui][image][figure]") {
    const std::vector<double> ticks = overlayTicks(0.08);
    REQUIRE(ticks.size() == 5u);
    for (int i = 0; i < 5; ++i) CHECK(ticks[std::size_t(i)] == Approx(0.02 * i).margin(1e-15));
    CHECK(overlayTicks(1.0).size() == 5);
    OverlayFigure f;
    f.picture.image = QImage(40, 20, QImage::Format_RGB32);
    f.picture.image.fill(Qt::gray);
    f.picture.gridRows = 2;
    f.picture.gridCols = 4;
    f.picture.values = {0.1, 0.2, 0.3, 0.4, 0, 0, 0, 0};
    f.picture.maxValue = 0.4;
    const QSizeF pt = overlayFigureSizePoints(f);
    CHECK(pt.width() == Approx(3.25 * 72));
    CHECK(pt.height() < pt.width() / 2 + 20);  // a 2:1 image and margins
    const auto out = freshDir("ui-overlay-figure");
    writeOverlayFigure(f, qpath(out / "f.svg"));
    CHECK(QSvgRenderer(qpath(out / "f.svg")).isValid());
    f.picture.values.pop_back();
    CHECK_THROWS_WITH(writeOverlayFigure(f, qpath(out / "g.pdf")),
                      Catch::Contains("g.pdf") && Catch::Contains("one value per patch"));
    CHECK_THROWS_WITH(writeOverlayFigure(f, qpath(out / "g.txt")), Catch::Contains("g.txt"));
}

}  // namespace test_image_overlay
