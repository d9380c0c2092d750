// Screenshots of Swin's windows for a person to look at (not run by ctest), the window at
// 1366 × 768:
//   ATTNSCOPE_SCREENSHOT_DIR=/tmp/shots ATTNSCOPE_SHOT_IMAGE=picture.png QT_QPA_PLATFORM=xcb \
//     xvfb-run -a -s "-screen 0 1366x768x24" build/tools/attnscope-devtools "[.swin-shots]"
// A random Swin on 56² pixels (patch 4: a 14 × 14 stage-1 grid, windows of 7 shifted by 3 on odd
// layers; random weights large enough that the maps are not uniform) on the picture (a random
// one without ATTNSCOPE_SHOT_IMAGE): swin-map.png (stage 1, layer 1, whole), swin-map-zoom.png
// (zoomed until the windows' outline is drawn), swin-image.png (the Image tab: the shifted
// window grid, a patch's row, its window outlined) and swin-image-layer0.png (the unshifted one).
#include "window_fixture.h"

#include "controllers/imagecontroller.h"
#include "fixtures_swin.h"
#include "panels/imageoverlaypanel.h"
#include "png_write.h"
#include "views/imageoverlay.h"
#include "views/windowoutline.h"

#include <cstdlib>

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

TEST_CASE_METHOD(WindowFixture, "save screenshots of Swin's windows", "[.swin-shots]") {
    const char* dirEnv = std::getenv("ATTNSCOPE_SCREENSHOT_DIR");
    REQUIRE(dirEnv);
    const fs::path out = dirEnv;
    fs::create_directories(out);
    SwinSpec spec;
    spec.imageSize = 56;
    spec.window = 7;
    spec.embed = 16;
    const fs::path model = freshDir("swin-shots") / "swin-56";
    writeCheckpoint(model, makeSwin(spec, 35));
    writeText(model / "preprocessor_config.json",
              R"({"image_processor_type": "ViTImageProcessor", "resample": 3, "size": {"height": 56, "width": 56},)"
              R"( "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]})");
    fs::path picture = model / "picture.png";
    if (const char* image = std::getenv("ATTNSCOPE_SHOT_IMAGE")) {
        picture = image;
    } else {
        writeNoisePng(picture, 56, 56, 8);
    }
    window.resize(1366, 768);
    openWithImage(qpath(model), qpath(picture));
    const auto trace = session->trace();
    layer->setValue(1);
    waitForMap(trace->map(0, 1, head->value()));
    QTest::qWait(500);
    REQUIRE(window.grab().save(qpath(out / "swin-map.png")));
    for (int i = 0; i < 8 && !heatmap->windowOutline()->drawsAtCurrentZoom(); ++i)
        heatmap->setZoom(heatmap->zoom().zoomedAt(0, 0, 1.5));
    REQUIRE(heatmap->windowOutline()->drawsAtCurrentZoom());
    QTest::qWait(500);
    REQUIRE(window.grab().save(qpath(out / "swin-map-zoom.png")));

    ImageOverlayPanel* panel = window.imageView()->panel();
    window.tabs()->setCurrentWidget(panel);
    ImageOverlayView* view = panel->view();
    REQUIRE(QTest::qWaitFor([&] { return view->hasPicture() && !view->picture().windows.empty(); }, 20000));
    QTest::mouseClick(view, Qt::LeftButton, {}, view->patchRect(5 * 14 + 2).center().toPoint());
    REQUIRE(QTest::qWaitFor([&] { return view->picture().markedPatch == 5 * 14 + 2; }, 20000));
    QTest::qWait(800);
    REQUIRE(window.grab().save(qpath(out / "swin-image.png")));
    layer->setValue(0);
    QTest::qWait(1500);
    REQUIRE(window.grab().save(qpath(out / "swin-image-layer0.png")));
}
