// Screenshots of the views for looking at them (not run by ctest): the window with each view
// raised and each view's exported figure, on GPT-2, BERT and Llama folders with real tokenizers
// and on the built-ins. Run on a screen (Xvfb) or offscreen:
//   ATTNSCOPE_SHOTS=DIR build/tools/attnscope-devtools "[.views-shots]"
#include "views_fixture.h"

#include "family_fixtures.h"
#include "gpt2_fixture.h"
#include "png_write.h"
#include "panels/imageoverlaypanel.h"
#include "panels/labpanel.h"
#include "views/imageoverlay.h"
#include "controllers/imagecontroller.h"
#include "controllers/labcontroller.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QScrollBar>
#include <QTabWidget>

#include <cstdlib>

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kData = ATTNSCOPE_TOKENIZER_DATA;

void shoot(ViewsFixture& f, const fs::path& out, const std::string& name) {
    QTest::qWait(300);
    REQUIRE(f.window.grab().save(qpath(out / ("views-" + name + ".png"))));
}

void allViews(ViewsFixture& f, const fs::path& out, const std::string& name, int query, const QString& text = {}) {
    if (!text.isEmpty()) f.runText(text);
    QTest::qWait(200);
    f.show(f.views->lines(), &ViewsController::linesShown);
    f.views->lines()->thresholdSpin()->setValue(0.02);
    shoot(f, out, name + "-lines");
    f.views->lines()->exportFigure(qpath(out / ("views-" + name + "-lines-figure.png")));
    f.views->lines()->exportFigure(qpath(out / ("views-" + name + "-lines-figure.pdf")));
    f.show(f.views->neuron(), &ViewsController::neuronShown);
    if (query >= 0)
        f.after(&ViewsController::neuronShown, [&] { f.views->neuron()->queryCombo()->setCurrentIndex(query); });
    shoot(f, out, name + "-neuron");
    f.views->neuron()->exportFigure(qpath(out / ("views-" + name + "-neuron-figure.png")));
    f.show(f.views->qkSpace(), &ViewsController::qkShown);
    f.after(&ViewsController::qkShown, [&] { f.views->qkSpace()->scopeCombo()->setCurrentIndex(1); });
    // Coloured by token kind (AttentionViz): special, punctuation, word start, continuation, patch.
    f.views->qkSpace()->coloringCombo()->setCurrentIndex(
            f.views->qkSpace()->coloringCombo()->findData(int(QkColoring::TokenKind)));
    if (query >= 0) f.views->select(0, query);
    shoot(f, out, name + "-qk");
    f.views->qkSpace()->exportFigure(qpath(out / ("views-" + name + "-qk-figure.png")));
    f.after(&ViewsController::qkShown, [&] { f.views->qkSpace()->scopeCombo()->setCurrentIndex(0); });
    f.views->select(-1, -1);
}

}  // namespace

TEST_CASE_METHOD(ViewsFixture, "screenshots of the views", "[.views-shots]") {
    const char* env = std::getenv("ATTNSCOPE_SHOTS");
    REQUIRE(env);
    const fs::path out(env);
    fs::create_directories(out);
    window.resize(1600, 1000);

    const auto gpt2 = freshDir("shots-gpt2");
    writeGpt2TokenizerFolder(gpt2, kData / "gpt2.json", 24);
    open(qpath(gpt2));
    allViews(*this, out, "gpt2", 6, QStringLiteral("The cat sat on the mat because it was tired."));
    // The window at 1280 pixels (the neuron view's header in a narrow dock), and a lab variant.
    window.resize(1280, 820);
    show(views->neuron(), &ViewsController::neuronShown);
    shoot(*this, out, "gpt2-neuron-1280");
    QComboBox* variant = window.lab()->panel()->variantCombo();
    after(&ViewsController::neuronShown, [&] { variant->setCurrentIndex(int(LabVariant::Linear)); });
    shoot(*this, out, "gpt2-lab-linear-neuron");
    show(views->lines(), &ViewsController::linesShown);
    shoot(*this, out, "gpt2-lab-linear-lines");
    views->lines()->exportFigure(qpath(out / "views-gpt2-lab-linear-lines-figure.png"));
    variant->setCurrentIndex(int(LabVariant::Native));
    window.resize(1600, 1000);

    BertSpec bert;
    bert.vocab = 11506;
    const auto bdir = freshDir("shots-bert");
    writeCheckpoint(bdir, makeBert(bert, 31));
    fs::copy_file(kData / "bert-uncased" / "vocab.txt", bdir / "vocab.txt", fs::copy_options::overwrite_existing);
    open(qpath(bdir));
    allViews(*this, out, "bert", 3, QStringLiteral("the quick brown fox jumps over the lazy dog"));

    LlamaSpec llama;
    llama.vocab = 9295;
    llama.tied = true;
    const auto ldir = freshDir("shots-llama");
    writeCheckpoint(ldir, makeLlama(llama, 33));
    fs::copy_file(kData / "llama2.json", ldir / "tokenizer.json", fs::copy_options::overwrite_existing);
    open(qpath(ldir));
    allViews(*this, out, "llama", 5, QStringLiteral("Attention is all you need, they said."));

    // A small ViT (4 × 4 patches + [CLS]) on a random picture.
    VitSpec vit;
    vit.layers = 3;
    vit.imageSize = 32;
    vit.patch = 8;
    const auto vdir = freshDir("shots-vit");
    writeCheckpoint(vdir, makeVit(vit, 61));
    writeNoisePng(vdir / "picture.png", 48, 32, 5);
    openWithImage(qpath(vdir), qpath(vdir / "picture.png"));  // an image model runs once it has an image
    allViews(*this, out, "vit", 3);
    // A click on a patch frames its row in the heat map (patch 6 = token 7).
    window.tabs()->setCurrentWidget(window.imageView()->panel());
    REQUIRE(QTest::qWaitFor([&] { return window.imageView()->panel()->view()->hasPicture(); }, 20000));
    QTest::mouseClick(window.imageView()->panel()->view(), Qt::LeftButton, {},
                      window.imageView()->panel()->view()->patchRect(6).center().toPoint());
    show(views->lines(), &ViewsController::linesShown);
    shoot(*this, out, "vit-patch-click");
    window.tabs()->setCurrentIndex(0);
    shoot(*this, out, "vit-patch-click-heatmap");

    open(QStringLiteral("builtin:reverse-dot"));
    allViews(*this, out, "reverse-dot", 2);
    open(QStringLiteral("builtin:sentiment-dot"));
    allViews(*this, out, "sentiment-dot", 1);

    // An input past 512 tokens: the line view's token window, scrolled into the middle.
    Gpt2Spec spec;
    spec.layers = 2;
    spec.heads = 4;
    spec.embd = 32;
    spec.positions = 1024;
    spec.vocab = 50;
    const auto longDir = freshDir("shots-long");
    writeGpt2Folder(longDir, makeGpt2(spec, 9));
    open(qpath(longDir));
    QStringList ids;
    for (int i = 0; i < 800; ++i) ids << QString::number((i * 7) % 50);
    runText(ids.join(QLatin1Char(' ')));
    show(views->lines(), &ViewsController::linesShown);
    after(&ViewsController::linesShown, [&] { views->lines()->windowBar()->setValue(400); });
    shoot(*this, out, "long-800-lines-window");
}
