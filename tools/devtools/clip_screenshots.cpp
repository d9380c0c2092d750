// Screenshots of CLIP in the window for a person to look at (not run by ctest), 1366 × 768:
//   ATTNSCOPE_SCREENSHOT_DIR=/tmp/shots ATTNSCOPE_SHOT_IMAGE=picture.png QT_QPA_PLATFORM=xcb \
//     xvfb-run -a -s "-screen 0 1366x768x24" build/tools/attnscope-devtools "[.clip-shots]"
// A random CLIP (64² pixels in 8-px patches, the test tokenizer's tiny vocabulary) on the picture
// (a random one without ATTNSCOPE_SHOT_IMAGE) and "the cat": clip-match.png (the Image tab, each
// patch's contribution to the image–text logit), clip-vision.png (the [CLS] row of the last
// vision layer) and clip-text.png (the text tower's causal map).
#include "window_fixture.h"

#include "controllers/imagecontroller.h"
#include "fixtures_clip.h"
#include "panels/imageoverlaypanel.h"
#include "png_write.h"
#include "views/imageoverlay.h"

#include <cstdlib>

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

TEST_CASE_METHOD(WindowFixture, "save screenshots of CLIP's text match", "[.clip-shots]") {
    const char* dirEnv = std::getenv("ATTNSCOPE_SCREENSHOT_DIR");
    REQUIRE(dirEnv);
    const fs::path out = dirEnv;
    fs::create_directories(out);
    ClipSpec spec;
    spec.imageSize = 64;
    spec.patch = 8;
    spec.visionLayers = 4;
    const fs::path model = freshDir("clip-shots") / "clip-64";
    writeCheckpoint(model, makeClip(spec, 36));
    writeClipTokenizer(model);
    writeText(model / "preprocessor_config.json",
              R"({"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 64}, "crop_size": 64})");
    fs::path picture = model / "picture.png";
    if (const char* image = std::getenv("ATTNSCOPE_SHOT_IMAGE")) {
        picture = image;
    } else {
        writeNoisePng(picture, 64, 64, 9);
    }
    window.resize(1366, 768);
    openWithImage(qpath(model), qpath(picture));
    runText(QStringLiteral("the cat"));
    const auto trace = session->trace();

    ImageOverlayPanel* panel = window.imageView()->panel();
    window.tabs()->setCurrentWidget(panel);
    ImageOverlayView* view = panel->view();
    panel->sourceCombo()->setCurrentIndex(panel->sourceCombo()->findData(int(attnscope::OverlaySource::Similarity)));
    REQUIRE(QTest::qWaitFor([&] { return view->hasPicture() && view->picture().diverging; }, 20000));
    QTest::qWait(500);
    REQUIRE(window.grab().save(qpath(out / "clip-match.png")));
    panel->sourceCombo()->setCurrentIndex(panel->sourceCombo()->findData(int(attnscope::OverlaySource::LayerMean)));
    layer->setValue(spec.visionLayers - 1);
    REQUIRE(QTest::qWaitFor([&] { return view->hasPicture() && !view->picture().diverging; }, 20000));
    QTest::qWait(500);
    REQUIRE(window.grab().save(qpath(out / "clip-vision.png")));

    window.tabs()->setCurrentIndex(0);
    controls->blockCombo()->setCurrentIndex(1);
    layer->setValue(0);
    waitForMap(trace->map(1, 0, head->value()));
    QTest::qWait(500);
    REQUIRE(window.grab().save(qpath(out / "clip-text.png")));
}
