// The Show selector (map sources, issue 31) for a person to look at, and the worked example of
// docs/map_sources.md (not run by ctest):
//   ATTNSCOPE_SCREENSHOT_DIR=/tmp/shots [ATTNSCOPE_DOCS_FIGURES=docs/figures] QT_QPA_PLATFORM=xcb \
//     xvfb-run -s "-screen 0 1366x768x24" build/tools/attnscope-devtools "[.sources]"
// writes show-value-weighted.png and show-value-weighted-layer.png (the window at 1366 × 768 on a
// 12-layer × 12-head GPT-2-shaped folder) and, with ATTNSCOPE_DOCS_FIGURES, the exported head
// figures of the weights and the value-weighted map side by side (map_sources_example.png); under
// xcb also the open selector on a built-in model, its gradient sources greyed out
// (show-builtin-disabled.png).
// "[.sources-tabs]" writes the Model view, Metrics and Compare tabs following a source
// (tabs-model-value-weighted.png, tabs-metrics-alti.png, tabs-metrics-value-weighted.png,
// tabs-compare-value-weighted.png, tabs-model-grad-weighted.png).
// "[.sources-image]" writes the Image tab of a 6-layer ViT on a 64 × 64 picture for every source
// (image-SOURCE.png, with the Explore heat map and overview beside it in explore-vit-SOURCE.png),
// and the Compare tab of the built-in reverse models for value-weighted on cross-attention and
// ALTI and its rollout on the encoder (compare-builtin-*.png).
#include "window_fixture.h"

#include "controllers/labcontroller.h"
#include "controllers/modelviewcontroller.h"
#include "controllers/sourcecontroller.h"
#include "panels/metricspanel.h"
#include "panels/modelviewpanel.h"
#include "figure/figure.h"
#include "gpt2_fixture.h"
#include "family_fixtures.h"
#include "png_write.h"
#include "controllers/imagecontroller.h"
#include "panels/imageoverlaypanel.h"
#include "views/imageoverlay.h"
#include "panels/sourcepicker.h"
#include "state/viewstate.h"

#include "attnscope/analysis/value_norm.h"

#include <QDockWidget>
#include <QGuiApplication>
#include <QScreen>
#include <QPainter>

#include <cstdlib>

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

void chooseSource(WindowFixture& w, attnscope::MapSource source) {
    QComboBox* combo = w.controls->sourcePicker()->showCombo();
    combo->setCurrentIndex(combo->findData(int(source)));
    REQUIRE(QTest::qWaitFor(
            [&] {
                const auto t = w.session->trace();
                return t && !w.session->isBusy() &&
                       (source == attnscope::MapSource::Weights || attnscope::hasValues(*t, 0));
            },
            30000));
}

// Two images side by side on white.
QImage sideBySide(const QImage& a, const QImage& b) {
    QImage out(a.width() + b.width(), std::max(a.height(), b.height()), QImage::Format_RGB32);
    out.fill(Qt::white);
    QPainter p(&out);
    p.drawImage(0, 0, a);
    p.drawImage(a.width(), 0, b);
    return out;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "save screenshots of the Show selector on a 12 x 12 GPT-2 folder", "[.sources]") {
    const char* dir = std::getenv("ATTNSCOPE_SCREENSHOT_DIR");
    REQUIRE(dir);
    const fs::path out = dir;
    fs::create_directories(out);
    Gpt2Spec spec;
    spec.layers = spec.heads = 12;
    spec.embd = 96;
    spec.vocab = 64;
    const fs::path parent = freshDir("sources");
    const fs::path model = parent / "gpt2-12x12";  // the figures' title names the folder
    writeGpt2Folder(model, makeGpt2(spec, 2031));
    window.resize(1366, 768);
    open(qpath(model));
    runText(QStringLiteral("5 9 2 14 3 7 21 8 11 4 17 30"));
    layer->setValue(5);
    head->setValue(3);
    QTest::qWait(300);
    const QImage weights = renderFigure(window.currentFigure(), 200);

    chooseSource(*this, attnscope::MapSource::ValueNorm);
    layer->setValue(5);
    head->setValue(3);
    REQUIRE(QTest::qWaitFor([&] { return heatmap->title().contains(QStringLiteral("Value-weighted")); }, 30000));
    QTest::qWait(500);
    REQUIRE(window.grab().save(qpath(out / "show-value-weighted.png")));
    const QImage valueWeighted = renderFigure(window.currentFigure(), 200);

    chooseSource(*this, attnscope::MapSource::ValueNormLayer);
    REQUIRE(QTest::qWaitFor([&] { return heatmap->title().contains(QStringLiteral("(layer)")); }, 30000));
    QTest::qWait(500);
    REQUIRE(window.grab().save(qpath(out / "show-value-weighted-layer.png")));
    const QImage layerMap = renderFigure(window.currentFigure(), 200);

    // ALTI, its rollout and the gradient sources (the model's own next token as the target).
    for (const auto& [source, file] : {std::pair{attnscope::MapSource::Alti, "show-alti.png"},
                                       std::pair{attnscope::MapSource::AltiRollout, "show-alti-rollout.png"},
                                       std::pair{attnscope::MapSource::GradWeighted, "show-grad-weighted.png"},
                                       std::pair{attnscope::MapSource::Relevance, "show-relevance.png"}}) {
        chooseSource(*this, source);
        const QString label = QString::fromUtf8(attnscope::sourceLabel(source));
        REQUIRE(QTest::qWaitFor([&] { return heatmap->title().contains(label) && heatmap->map().rows > 0; }, 60000));
        QTest::qWait(500);
        REQUIRE(window.grab().save(qpath(out / file)));
    }

    // A built-in model: the gradient sources, which it cannot show, are greyed out in the open selector (the
    // popup is a window of its own: the screen is grabbed, which needs QT_QPA_PLATFORM=xcb).
    open(QStringLiteral("builtin:reverse-dot"));
    QComboBox* show = controls->sourcePicker()->showCombo();
    show->showPopup();
    QTest::qWait(500);
    if (QGuiApplication::platformName() == QLatin1String("xcb"))
        REQUIRE(QGuiApplication::primaryScreen()->grabWindow(0).save(qpath(out / "show-builtin-disabled.png")));
    show->hidePopup();

    if (const char* docs = std::getenv("ATTNSCOPE_DOCS_FIGURES")) {
        const fs::path d = docs;
        fs::create_directories(d);
        REQUIRE(sideBySide(weights, valueWeighted).save(qpath(d / "map_sources_example.png")));
        REQUIRE(layerMap.save(qpath(d / "map_sources_value_layer.png")));
    }
    fs::remove_all(parent);
}

TEST_CASE_METHOD(WindowFixture, "save screenshots of the Model view, Metrics and Compare following a source",
                 "[.sources-tabs]") {
    const char* dir = std::getenv("ATTNSCOPE_SCREENSHOT_DIR");
    REQUIRE(dir);
    const fs::path out = dir;
    fs::create_directories(out);
    Gpt2Spec spec;
    spec.layers = spec.heads = 12;
    spec.embd = 96;
    spec.vocab = 64;
    const fs::path parent = freshDir("sources-tabs");
    const fs::path model = parent / "gpt2-12x12";
    writeGpt2Folder(model, makeGpt2(spec, 2031));
    window.resize(1366, 768);
    open(qpath(model));
    runText(QStringLiteral("5 9 2 14 3 7 21 8 11 4 17 30"));
    layer->setValue(5);
    head->setValue(3);
    chooseSource(*this, attnscope::MapSource::ValueNorm);
    const auto shot = [&](QWidget* tab, const char* file, const std::function<bool()>& ready) {
        window.tabs()->setCurrentWidget(tab);
        REQUIRE(QTest::qWaitFor(ready, 60000));
        QTest::qWait(700);
        REQUIRE(window.grab().save(qpath(out / file)));
    };
    ModelViewPanel* mv = window.modelView()->panel();
    const auto modelReady = [&] {
        return mv->metricsOf(11, 11) && mv->grid()->images().size() == 144u &&
               mv->statusLabel()->text().startsWith(QStringLiteral("metrics of 144"));
    };
    shot(mv, "tabs-model-value-weighted.png", modelReady);
    MetricsPanel* metrics = window.lab()->metrics();
    shot(metrics, "tabs-metrics-value-weighted.png", [&] { return metrics->model()->metrics().size() == 144u; });
    chooseSource(*this, attnscope::MapSource::Alti);
    shot(metrics, "tabs-metrics-alti.png", [&] {
        return metrics->model()->metrics().size() == 12u &&
               metrics->blockView()->title().contains(QStringLiteral("of the weights"));
    });
    chooseSource(*this, attnscope::MapSource::ValueNorm);
    shot(window.compare(), "tabs-compare-value-weighted.png", [&] {
        return window.compare()->lastRun().traces[2] &&
               window.compare()->view(2)->title().contains(QStringLiteral("value"));
    });
    chooseSource(*this, attnscope::MapSource::GradWeighted);
    shot(mv, "tabs-model-grad-weighted.png", [&] {
        return mv->grid()->caption().contains(QStringLiteral("Gradient")) && mv->metricsOf(11, 11) &&
               mv->statusLabel()->text().startsWith(QStringLiteral("metrics of 144"));
    });
    fs::remove_all(parent);
}

TEST_CASE_METHOD(WindowFixture, "save screenshots of every source on a ViT's Image tab and the built-in Compare",
                 "[.sources-image]") {
    const char* dir = std::getenv("ATTNSCOPE_SCREENSHOT_DIR");
    REQUIRE(dir);
    const fs::path out = dir;
    fs::create_directories(out);
    const fs::path parent = freshDir("sources-image");
    const fs::path model = parent / "vit-6x4";
    VitSpec spec;
    spec.layers = 6;
    spec.heads = 4;
    spec.hidden = 32;
    spec.imageSize = 64;
    spec.patch = 8;
    writeCheckpoint(model, makeVit(spec, 77));
    std::vector<std::uint8_t> pixels(64 * 64 * 3);
    for (int y = 0; y < 64; ++y)
        for (int x = 0; x < 64; ++x) {  // a bright disc on a dark ramp
            const std::size_t i = std::size_t(y * 64 + x) * 3;
            const bool disc = (x - 40) * (x - 40) + (y - 24) * (y - 24) < 144;
            pixels[i] = std::uint8_t(disc ? 240 : x * 2);
            pixels[i + 1] = std::uint8_t(disc ? 200 : y * 2);
            pixels[i + 2] = std::uint8_t(disc ? 60 : 90);
        }
    writePng(model / "picture.png", 64, 64, pixels);
    window.resize(1366, 768);
    openWithImage(qpath(model), qpath(model / "picture.png"), 30000);
    for (attnscope::MapSource source : attnscope::kMapSources) {
        chooseSource(*this, source);
        layer->setValue(5);
        head->setValue(1);
        const QString label = QString::fromUtf8(attnscope::sourceLabel(source));
        const std::string name = attnscope::sourceName(source);
        window.showExplore();
        REQUIRE(QTest::qWaitFor(
                [&] {
                    return (source == attnscope::MapSource::Weights || heatmap->title().contains(label)) &&
                           heatmap->map().rows > 0 && !session->isBusy();
                },
                60000));
        QTest::qWait(700);
        REQUIRE(window.grab().save(qpath(out / ("explore-vit-" + name + ".png"))));
        ImageController* image = window.imageView();
        window.tabs()->setCurrentWidget(image->panel());
        REQUIRE(QTest::qWaitFor(
                [&] {
                    return image->shown().source.source == source && image->panel()->view()->hasPicture() &&
                           !image->service()->isRunning();
                },
                60000));
        QTest::qWait(700);
        REQUIRE(window.grab().save(qpath(out / ("image-" + name + ".png"))));
    }

    open(QStringLiteral("builtin:reverse-dot"));  // cross-attention, as the window starts
    chooseSource(*this, attnscope::MapSource::ValueNorm);
    ComparePanel* compare = window.compare();
    const auto shot = [&](const char* file, const QString& label) {
        window.tabs()->setCurrentWidget(compare);
        REQUIRE(QTest::qWaitFor(
                [&] {
                    return compare->lastRun().traces[2] && compare->view(0)->title().contains(label) &&
                           compare->view(2)->title().contains(label);
                },
                60000));
        QTest::qWait(700);
        REQUIRE(window.grab().save(qpath(out / file)));
    };
    shot("compare-builtin-value-weighted-cross.png", QStringLiteral("Value-weighted"));
    chooseSource(*this, attnscope::MapSource::Alti);
    shot("compare-builtin-alti-cross.png", QStringLiteral("mixes"));
    controls->blockCombo()->setCurrentIndex(controls->blockCombo()->findText(QStringLiteral("encoder")));
    shot("compare-builtin-alti-encoder.png", QStringLiteral("ALTI"));
    chooseSource(*this, attnscope::MapSource::AltiRollout);
    shot("compare-builtin-alti-rollout-encoder.png", QStringLiteral("ALTI rollout"));
    chooseSource(*this, attnscope::MapSource::Weights);
    fs::remove_all(parent);
}
