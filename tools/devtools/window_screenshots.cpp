// Screenshots of the window for a person to look at (not run by ctest): the Explore and Compare
// tabs and the export dialog, an encoder-decoder with its alignment figure, a 4,096-token input
// (with the times it takes to draw), the Image and Model tabs, and the Model tab and overview
// under a lab variant. Each case says its command and the environment variables it reads.
#include "window_fixture.h"

#include "family_fixtures.h"
#include "figure/alignment.h"
#include "figure/figure.h"
#include "gpt2_fixture.h"
#include "panels/exportdialog.h"
#include "panels/imageoverlaypanel.h"
#include "panels/labpanel.h"
#include "panels/modelviewpanel.h"
#include "views/imageoverlay.h"
#include "controllers/imagecontroller.h"
#include "controllers/labcontroller.h"
#include "controllers/modelviewcontroller.h"

#include "attnscope/analysis/alignment.h"

#include <QDir>
#include <QElapsedTimer>

#include <cstdlib>
#include <iostream>
#include <optional>

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

// Pictures of the window for a person to look at (not run by default):
//   ATTNSCOPE_SCREENSHOT_DIR=/tmp/shots build/tools/attnscope-devtools "[.screenshots]"
TEST_CASE_METHOD(WindowFixture, "save screenshots of the explore and compare tabs", "[.screenshots]") {
    const char* dir = std::getenv("ATTNSCOPE_SCREENSHOT_DIR");
    REQUIRE(dir);
    window.resize(1500, 900);
    openStandIn();
    runText(QStringLiteral("5 9 2 14 3 7 21 8 11 4"));
    layer->setValue(1);
    head->setValue(1);  // a head the Compare tab's built-ins have too (two heads; the stand-in has four)
    slider->setValue(TemperatureSlider::positionOf(0.5));
    QTest::qWait(300);
    window.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/explore.png"));
    window.tabs()->setCurrentWidget(window.compare());
    QSignalSpy updated(window.compare(), &ComparePanel::updated);
    REQUIRE(updated.wait(20000));
    QTest::qWait(300);
    window.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/compare.png"));
    ExportDialog* dialog = openExportDialog(*this);
    QTest::qWait(200);
    dialog->grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/export.png"));
    dialog->close();
}

// The built-in reverse model with a forced target, the export dialog on its alignment figure, and
// that figure at 200 dpi:
//   ATTNSCOPE_SCREENSHOT_DIR=/tmp/shots build/tools/attnscope-devtools "[.screenshots]"
TEST_CASE_METHOD(WindowFixture, "save screenshots of an encoder-decoder with a target and its alignment figure",
                 "[.screenshots]") {
    const char* dir = std::getenv("ATTNSCOPE_SCREENSHOT_DIR");
    REQUIRE(dir);
    window.resize(1500, 900);
    open(QStringLiteral("builtin:reverse-dot"));
    runPair(*this, QStringLiteral("attention2026"), QStringLiteral("6202noitnetta"));
    QTest::qWait(300);
    window.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/seq2seq_forced.png"));
    ExportDialog* dialog = openExportDialog(*this);
    dialog->findChild<QComboBox*>(QStringLiteral("figureChoice"))->setCurrentIndex(2);
    dialog->resize(700, 800);
    QTest::qWait(300);
    dialog->grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/seq2seq_alignment_dialog.png"));
    Figure f = alignmentFigure(*session->trace(), {}, QStringLiteral("reverse-dot"));
    f.widthIn = 3.25;
    renderFigure(f, 200).save(QString::fromLocal8Bit(dir) + QStringLiteral("/seq2seq_alignment.png"));
    dialog->close();
}

// Screenshots of the window on a long input (not run by default; writes overview.png and
// zoomed.png into ATTNSCOPE_SHOT_DIR):
//   ATTNSCOPE_SHOT_MODEL=/tmp/llama8k ATTNSCOPE_SHOT_DIR=/tmp/shots build/tools/attnscope-devtools
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
                    if (!last)
                        last = thumbnailImage(trace->pooledMap(0, info.layers - 1, info.heads - 1, thumb), controls);
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

// Screenshots of the Image and Model tabs for looking at by hand: $ATTNSCOPE_SHOT_MODELS holds
// model folders (vit-base with photo.png, and any others), $ATTNSCOPE_SHOT_OUT gets image-*.png.
//   ATTNSCOPE_SHOT_MODELS=/tmp/m ATTNSCOPE_SHOT_OUT=/tmp/s build/tools/attnscope-devtools "[.image-shots]"
TEST_CASE_METHOD(WindowFixture, "image and model view screenshots", "[.image-shots]") {
    const char* models = std::getenv("ATTNSCOPE_SHOT_MODELS");
    const char* outDir = std::getenv("ATTNSCOPE_SHOT_OUT");
    REQUIRE(models);
    REQUIRE(outDir);
    const std::filesystem::path root(models), out(outDir);
    window.resize(1600, 1000);
    auto shoot = [&](const std::string& name) {
        QTest::qWait(400);
        window.grab().save(qpath(out / ("image-" + name + ".png")));
    };
    auto waitIdle = [&] {
        QTest::qWait(300);
        REQUIRE(QTest::qWaitFor([&] { return !session->isBusy() && !window.imageView()->service()->isRunning(); },
                                60000));
    };
    if (std::filesystem::exists(root / "vit-base")) {
        openWithImage(qpath(root / "vit-base"), qpath(root / "vit-base" / "photo.png"), 60000);
        ImageOverlayPanel* panel = window.imageView()->panel();
        window.tabs()->setCurrentWidget(panel);
        layer->setValue(5);
        head->setValue(3);
        waitIdle();
        shoot("vit-head");
        panel->sourceCombo()->setCurrentIndex(2);
        panel->gridCheck()->setChecked(true);
        waitIdle();
        shoot("vit-rollout");
        QTest::mouseClick(panel->view(), Qt::LeftButton, {}, panel->view()->patchRect(14 * 6 + 8).center().toPoint());
        panel->smoothCheck()->setChecked(true);
        panel->gridCheck()->setChecked(false);
        waitIdle();
        shoot("vit-patch-row");
        window.imageView()->exportFigure(qpath(out / "image-vit-figure.png"));
        window.tabs()->setCurrentWidget(window.modelView()->panel());
        REQUIRE(QTest::qWaitFor([&] { return window.modelView()->panel()->metricsOf(11, 11); }, 60000));
        window.modelView()->panel()->orderCombo()->setCurrentIndex(1);
        shoot("vit-model-view");
    }
    for (const char* name : {"gpt2", "bert", "llama"}) {
        if (!std::filesystem::exists(root / name)) continue;
        open(qpath(root / name));
        window.tabs()->setCurrentWidget(window.modelView()->panel());
        REQUIRE(QTest::qWaitFor([&] { return window.modelView()->panel()->metricsOf(0, 0); }, 60000));
        window.modelView()->panel()->metricCombo()->setCurrentIndex(1);
        shoot(std::string(name) + "-model-view");
    }
    open(QStringLiteral("builtin:reverse-dot"));
    window.tabs()->setCurrentWidget(window.modelView()->panel());
    REQUIRE(QTest::qWaitFor([&] { return window.modelView()->panel()->metricsOf(0, 0); }, 60000));
    shoot("builtin-model-view");
    window.tabs()->setCurrentWidget(window.imageView()->panel());
    shoot("builtin-image-tab");
    window.modelView()->service()->waitForWorkers();
}

// Screenshots for looking at them (not run by ctest): the Model tab and the Explore overview with
// a lab variant selected, on a GPT-2 folder with its real tokenizer and on a built-in. Run on a
// screen (Xvfb) or offscreen:
//   ATTNSCOPE_SHOTS=DIR build/tools/attnscope-devtools "[.modelview-shots]"
TEST_CASE_METHOD(WindowFixture, "screenshots of the model view and the overview under a lab variant",
                 "[.modelview-shots]") {
    const char* env = std::getenv("ATTNSCOPE_SHOTS");
    REQUIRE(env);
    const std::filesystem::path out(env);
    std::filesystem::create_directories(out);
    window.resize(1600, 1000);
    ModelViewController* mv = window.modelView();
    QComboBox* variant = window.lab()->panel()->variantCombo();
    const auto settle = [&] {
        const auto trace = window.lab()->shownTrace();
        const auto& info = trace->blocks()[std::size_t(window.currentKey().block)];
        REQUIRE(QTest::qWaitFor([&] { return overview->images().size() == std::size_t(info.layers * info.heads); },
                                30000));
        if (window.tabs()->currentWidget() == mv->panel())
            REQUIRE(QTest::qWaitFor(
                    [&] {
                        return mv->metricsTrace() == trace && mv->metricsVariant() == window.lab()->shownVariant() &&
                               !mv->panel()->statusLabel()->text().contains(QStringLiteral("…"));
                    },
                    60000));
        QTest::qWait(400);
    };
    const auto shoot = [&](const std::string& name) {
        settle();
        REQUIRE(window.grab().save(qpath(out / ("views-" + name + ".png"))));
    };

    const auto gpt2 = freshDir("shots-model-view-gpt2");
    writeGpt2TokenizerFolder(gpt2, std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / "gpt2.json", 24);
    open(qpath(gpt2));
    runText(QStringLiteral("The cat sat on the mat because it was tired."));
    window.tabs()->setCurrentWidget(mv->panel());
    shoot("gpt2-model-own");
    variant->setCurrentIndex(int(LabVariant::Linear));
    shoot("gpt2-model-linear");
    window.showExplore();
    shoot("gpt2-overview-linear");

    // One head fitted: additive (the other heads blank), then the hybrid.
    layer->setValue(1);
    head->setValue(1);
    variant->setCurrentIndex(int(LabVariant::Additive));
    window.lab()->fitAdditive();
    REQUIRE(QTest::qWaitFor([&] { return window.lab()->lastFit() != nullptr; }, 60000));
    shoot("gpt2-overview-additive-fit");
    window.tabs()->setCurrentWidget(mv->panel());
    shoot("gpt2-model-additive-fit");
    variant->setCurrentIndex(int(LabVariant::Hybrid));
    shoot("gpt2-model-hybrid-fit");

    // A built-in: the linear variant of its dot-product heads (open() waits for the model's own map).
    variant->setCurrentIndex(int(LabVariant::Native));
    open(QStringLiteral("builtin:reverse-dot"));
    variant->setCurrentIndex(int(LabVariant::Linear));
    shoot("builtin-model-linear");
    window.showExplore();
    shoot("builtin-overview-linear");

    // A 12 × 12 Llama-shaped folder (grouped-query attention): the Model tab filling the screen.
    LlamaSpec spec;
    spec.layers = spec.heads = 12;
    spec.kvHeads = 4;
    spec.hidden = 48;
    spec.inner = 64;
    const auto llama = freshDir("shots-model-view-llama");
    writeCheckpoint(llama, makeLlama(spec, 71));
    variant->setCurrentIndex(int(LabVariant::Native));
    open(qpath(llama));
    window.tabs()->setCurrentWidget(mv->panel());
    shoot("llama12-model-own");
    variant->setCurrentIndex(int(LabVariant::Linear));
    shoot("llama12-model-linear");
    mv->service()->waitForWorkers();
    window.lab()->shutdown();
}
