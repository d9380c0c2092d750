// CLIP in the window, through the real widgets: the model takes an image and the text box's text,
// the two towers are the blocks "vision" and "text", and the Image tab shows each patch's
// contribution to the image–text logit (core's similarityOverlay) on a diverging scale, with the
// cosine, the logit and the remainder in its caption; the choice is greyed out for other models.
#include "controllers/imagecontroller.h"
#include "controllers/labcontroller.h"
#include "panels/outputpanel.h"
#include "views/outputchangeview.h"
#include "views/temperatureslider.h"
#include "panels/imageoverlaypanel.h"
#include "views/imageoverlay.h"
#include "window_fixture.h"

#include "family_fixtures.h"
#include "fixtures_clip.h"
#include "fixtures_vision.h"
#include "png_write.h"

#include "attnscope/analysis/overlay.h"
#include "attnscope/attention/image_text.h"

#include <QStandardItemModel>

namespace test_clip_window {

using namespace uitest;
using namespace attnscope::testing;

namespace {

bool similarityEnabled(ImageOverlayPanel* panel) {
    auto* model = qobject_cast<QStandardItemModel*>(panel->sourceCombo()->model());
    const int row = panel->sourceCombo()->findData(int(attnscope::OverlaySource::Similarity));
    return model && row >= 0 && model->item(row)->isEnabled();
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "CLIP: an image and a text, both towers, and each patch's share of the match",
                 "[ui][image][clip]") {
    ClipSpec spec;
    const auto dir = freshDir("ui-clip");
    writeCheckpoint(dir, makeClip(spec, 91));
    writeClipTokenizer(dir);
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "CLIPImageProcessor", "do_resize": false, "crop_size": 16})");
    writeNoisePng(dir / "picture.png", 16, 16, 92);

    openWithImage(qpath(dir), qpath(dir / "picture.png"));
    CHECK(input->isVisibleTo(&window));  // the text box stays beside the image bar
    runText(QStringLiteral("the cat"));
    const auto trace = session->trace();
    REQUIRE(trace->blocks().size() == 2u);
    CHECK(trace->blocks()[0].name == "vision");
    CHECK(trace->blocks()[1].name == "text");
    // The text's tokens: <|startoftext|> the</w> cat</w> <|endoftext|> (the tokenizer's 62 53 55 63).
    CHECK(trace->ids() == std::vector<std::int64_t>{62, 53, 55, 63});
    const attnscope::ImageTextScore& score = attnscope::traceImageText(*trace);
    REQUIRE(score.present);

    // The output: the image–text match, and a re-run's change of the logit (the temperature
    // inside the model).
    CHECK(controls->outputs()->text().contains(
            QStringLiteral("Image–text match: cosine %1").arg(score.cosine, 0, 'g', 4)));
    LabController* lab = window.lab();
    lab->propagateCheck()->setChecked(true);
    slider->setValue(TemperatureSlider::positionOf(0.4));
    REQUIRE(QTest::qWaitFor([&] { return lab->changeView()->hasChange() && lab->shownTrace() != trace; }, 20000));
    CHECK(lab->changeView()->change().kind == "similarity");
    CHECK(lab->changeView()->change().originalLogit == score.logit);
    CHECK(lab->changeView()->text().contains(QStringLiteral("Image–text logit: %1 →").arg(score.logit, 0, 'g', 4)));
    lab->propagateCheck()->setChecked(false);
    slider->setValue(TemperatureSlider::positionOf(1.0));

    // The text tower's causal map is the window's map for block "text".
    controls->blockCombo()->setCurrentIndex(1);
    waitForMap(trace->map(1, layer->value(), head->value()));

    ImageController* image = window.imageView();
    ImageOverlayPanel* panel = image->panel();
    ImageOverlayView* view = panel->view();
    controls->blockCombo()->setCurrentIndex(0);
    window.tabs()->setCurrentWidget(panel);
    REQUIRE(QTest::qWaitFor([&] { return image->shown().trace == trace && view->hasPicture(); }, 20000));
    REQUIRE(similarityEnabled(panel));
    panel->sourceCombo()->setCurrentIndex(panel->sourceCombo()->findData(int(attnscope::OverlaySource::Similarity)));
    const attnscope::PatchOverlay want = attnscope::similarityOverlay(*trace);
    REQUIRE(QTest::qWaitFor([&] { return view->picture().values == want.patches; }, 20000));
    CHECK(view->picture().diverging);
    CHECK(view->picture().maxValue == want.maxPatch);
    CHECK(view->caption().contains(QStringLiteral("contribution to the image–text logit")));
    CHECK(view->caption().contains(QStringLiteral("cosine %1").arg(score.cosine, 0, 'g', 3)));
    CHECK(view->caption().contains(QStringLiteral("remainder %1").arg(want.otherWeight, 0, 'g', 4)));
    CHECK_FALSE(panel->patchesOnlyCheck()->isEnabled());
    CHECK(image->figure().colorbarLabel == QStringLiteral("contribution to the logit"));

    // On screen at full opacity: a patch's centre is its value's RdBu colour (white at 0).
    panel->opacitySlider()->setValue(100);
    REQUIRE(QTest::qWaitFor([&] { return view->picture().opacity == 1.0; }));
    const QImage shot = view->grab().toImage();
    const double ratio = shot.width() / double(view->width());
    for (int p : {0, 5, 10, 15}) {
        const QColor got = shot.pixelColor((view->patchRect(p).center() * ratio).toPoint());
        const QColor wantColor = overlayColor(view->picture(), want.patches[std::size_t(p)]);
        INFO("patch " << p);
        CHECK(std::abs(got.red() - wantColor.red()) <= 1);
        CHECK(std::abs(got.blue() - wantColor.blue()) <= 1);
    }
    CHECK(overlayColor(view->picture(), 0.0) == colormapColor(Colormap::RdBu, 0.5));

    // A model without a text tower: the choice is greyed out and the overlay goes back to a head.
    VisionModelSpec deit;
    const auto other = freshDir("ui-clip-deit");
    writeCheckpoint(other, makeVisionModel(deit, 93));
    writeText(other / "preprocessor_config.json", R"({"size": 16, "crop_size": 16})");
    QSignalSpy loadedAgain(session, &Session::modelLoaded);
    window.openModel(qpath(other));
    REQUIRE(loadedAgain.wait(20000));
    REQUIRE(QTest::qWaitFor([&] { return session->trace() && session->trace() != trace; }, 20000));
    REQUIRE(QTest::qWaitFor([&] { return !similarityEnabled(panel); }, 20000));
    CHECK(panel->source() == attnscope::OverlaySource::Head);
    CHECK_FALSE(input->isVisibleTo(&window));
}

TEST_CASE_METHOD(WindowFixture, "SigLIP: ids and an image, the MAP head's probe block, and the text match",
                 "[ui][image][siglip]") {
    ClipSpec spec;
    spec.type = "siglip";
    spec.scalarShape = false;  // SiglipModel's logit_scale and logit_bias are [1]
    const auto dir = freshDir("ui-siglip");
    writeCheckpoint(dir, makeClip(spec, 94));
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "SiglipImageProcessor", "do_resize": false, "size": 16})");
    writeNoisePng(dir / "picture.png", 16, 16, 95);

    openWithImage(qpath(dir), qpath(dir / "picture.png"));
    CHECK(controls->idsMode());  // no tokenizer in the folder: the text is ids
    const auto trace = session->trace();
    REQUIRE(trace->blocks().size() == 3u);
    CHECK(trace->blocks()[1].name == "probe");
    CHECK(trace->blocks()[1].queryTokens == std::vector<std::string>{"[PROBE]"});
    // The probe's one row over the 16 patches is the window's map for block "probe".
    controls->blockCombo()->setCurrentIndex(1);
    waitForMap(trace->map(1, 0, head->value()));

    ImageController* image = window.imageView();
    ImageOverlayPanel* panel = image->panel();
    controls->blockCombo()->setCurrentIndex(0);
    window.tabs()->setCurrentWidget(panel);
    REQUIRE(QTest::qWaitFor([&] { return image->shown().trace == trace && panel->view()->hasPicture(); }, 20000));
    panel->sourceCombo()->setCurrentIndex(panel->sourceCombo()->findData(int(attnscope::OverlaySource::Similarity)));
    const attnscope::PatchOverlay want = attnscope::similarityOverlay(*trace);
    REQUIRE(QTest::qWaitFor([&] { return panel->view()->picture().values == want.patches; }, 20000));
    CHECK(panel->view()->picture().diverging);
    CHECK(want.grid.rows == 4);
    const attnscope::ImageTextScore& score = attnscope::traceImageText(*trace);
    CHECK(score.block == "probe");
    CHECK(panel->view()->caption().contains(QStringLiteral("probe layer 0")));
    CHECK(panel->view()->caption().contains(QStringLiteral("logit %1").arg(score.logit, 0, 'g', 4)));
}

}  // namespace test_clip_window
