// The window on the model families: a ViT folder with an image (picker, drop, patch labels,
// predicted class), a grouped-query Llama (key/value group of a head), GPT-2 and BERT folders
// with a tokenizer (readable labels on the axes, raw tokens on hover and in View > Raw Tokens),
// and the device choice.
#include "panels/devicecombo.h"
#include "figure/figure.h"
#include "panels/imageinput.h"
#include "panels/outputpanel.h"
#include "window_fixture.h"

#include "family_fixtures.h"
#include "png_write.h"

#include <QAction>
#include <QLabel>
#include <QMimeData>
#include <QStandardItemModel>
#include <QUrl>

#include "attnscope/tokenizer/tokenizer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace test_window_families {

using namespace uitest;
using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

QStringList patchLabels(int grid) {
    QStringList out{QStringLiteral("[CLS]")};
    for (int r = 0; r < grid; ++r)
        for (int c = 0; c < grid; ++c) out << QStringLiteral("r%1c%2").arg(r).arg(c);
    return out;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "A ViT folder takes an image: patch labels and the predicted class",
                 "[ui][window][vit]") {
    VitSpec spec;  // 16 x 16 pixels, 4 x 4 patches, 2 layers x 3 heads, 5 classes
    const Checkpoint c = makeVit(spec, 21);
    const auto dir = freshDir("ui-vit");
    writeCheckpoint(dir, c);
    std::mt19937 rng(9);
    std::vector<std::uint8_t> pixels(16 * 16 * 3);
    for (auto& p : pixels) p = std::uint8_t(rng() % 256);
    writePng(dir / "picture.png", 16, 16, pixels);

    // Opened before any image: the image bar replaces the text box and the map asks for one.
    QSignalSpy loaded(session, &Session::modelLoaded);
    window.openModel(qpath(dir));
    REQUIRE(loaded.wait(20000));
    CHECK(controls->imageInput()->isVisibleTo(controls));
    CHECK_FALSE(input->isVisibleTo(controls));
    REQUIRE(QTest::qWaitFor([&] { return !session->isBusy(); }, 20000));
    CHECK_FALSE(session->trace());
    CHECK(heatmap->title().contains(QStringLiteral("open one (Ctrl+I)")));

    // The image runs at once; the axes are [CLS] and the 16 patches, row by row.
    QSignalSpy traced(session, &Session::traceReady);
    REQUIRE(window.setImageFile(qpath(dir / "picture.png")));
    REQUIRE(traced.wait(20000));
    CHECK(controls->imageInput()->nameLabel()->text().contains(QStringLiteral("picture.png (16 × 16)")));
    const auto trace = session->trace();
    REQUIRE(trace->blocks().size() == 1);
    waitForMap(trace->map(0, 0, 0));
    CHECK(heatmap->queryLabels() == patchLabels(4));
    CHECK(heatmap->keyLabels() == patchLabels(4));

    // The map and the class against the independent double-precision ViT of the tests.
    std::vector<double> preprocessed(3 * 256);
    for (int i = 0; i < 256; ++i)
        for (int ch = 0; ch < 3; ++ch)
            preprocessed[std::size_t(ch * 256 + i)] = (pixels[std::size_t(i * 3 + ch)] / 255.0 - 0.5) / 0.5;
    const Reference ref = referenceVit(c, spec, preprocessed);
    double worst = 0;
    for (int q = 0; q < 17; ++q)
        for (int k = 0; k < 17; ++k)
            worst = std::max(worst, std::abs(heatmap->map().at(q, k) - ref.probs[0][0][std::size_t(q * 17 + k)]));
    CHECK(worst < 2e-6);
    std::size_t best = 0;
    for (std::size_t i = 1; i < ref.logits.size(); ++i)
        if (ref.logits[i] > ref.logits[best]) best = i;
    CHECK(controls->outputs()->text().contains(QStringLiteral("Class: class%1").arg(best)));

    // Dropping another image on the window runs it (a flipped picture gives other maps).
    std::vector<std::uint8_t> flipped(pixels.rbegin(), pixels.rend());
    writePng(dir / "flipped.png", 16, 16, flipped);
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(qpath(dir / "flipped.png"))});
    QDragEnterEvent enter(QPoint(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &enter);
    CHECK(enter.isAccepted());
    QDropEvent drop(QPointF(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QSignalSpy again(session, &Session::traceReady);
    QCoreApplication::sendEvent(&window, &drop);
    REQUIRE(again.wait(20000));
    CHECK(window.imageFile() == qpath(dir / "flipped.png"));
    CHECK(session->modelSpec() == qpath(dir));  // still the same model
    CHECK(session->trace()->map(0, 0, 0).values != trace->map(0, 0, 0).values);

    // A file that is not an image: the error dialog names it; the last image stays.
    CHECK_FALSE(window.setImageFile(qpath(dir / "config.json")));
    CHECK(takeErrorDialog().contains(QStringLiteral("config.json: cannot read the image")));
    CHECK(window.imageFile() == qpath(dir / "flipped.png"));
}

TEST_CASE_METHOD(WindowFixture, "A grouped-query Llama says which key/value group a head shares",
                 "[ui][window][llama]") {
    LlamaSpec spec;  // 4 query heads, 2 key/value heads
    const auto dir = freshDir("ui-llama-gqa");
    writeCheckpoint(dir, makeLlama(spec, 22));
    open(qpath(dir));
    QLabel* group = controls->headGroupLabel();
    CHECK(head->maximum() == 3);  // every query head on its own
    CHECK(group->isVisibleTo(controls));
    CHECK(group->text() ==
          QStringLiteral("Head 0 shares key/value group 0 of 2 with heads 0–1 (grouped-query attention)."));
    head->setValue(3);
    CHECK(group->text() ==
          QStringLiteral("Head 3 shares key/value group 1 of 2 with heads 2–3 (grouped-query attention)."));
    CHECK(head->toolTip() == group->text());
    waitForMap(session->trace()->map(0, 0, 3));

    // A model without grouped-query attention has no such line, from the moment it is loaded.
    const auto bert = freshDir("ui-bert-plain");
    writeCheckpoint(bert, makeBert(BertSpec{}, 23));
    QSignalSpy loaded(session, &Session::modelLoaded);
    window.openModel(qpath(bert));
    REQUIRE(loaded.wait(20000));
    CHECK_FALSE(group->isVisibleTo(controls));
    REQUIRE(QTest::qWaitFor([&] { return session->trace() != nullptr; }, 20000));
    CHECK_FALSE(group->isVisibleTo(controls));
}

TEST_CASE_METHOD(WindowFixture, "GPT-2 and BERT folders show readable tokens; the raw ones on hover and on request",
                 "[ui][window][tokenizer]") {
    const auto gdir = freshDir("ui-gpt2-tokenizer");
    writeGpt2TokenizerFolder(gdir, kData / "gpt2.json", 24);
    open(qpath(gdir));
    CHECK(session->hasTokenizer());
    runText(QStringLiteral("Hello world"));
    waitForMap(session->trace()->map(0, layer->value(), head->value()));
    const QStringList readable{"H", "ell", "o", QStringLiteral("\u00B7world")};
    CHECK(heatmap->keyLabels() == readable);
    CHECK(heatmap->queryLabels() == readable);
    CHECK(heatmap->describeCell({3, 3}).contains(QStringLiteral("'\u00B7world' [\u0120world]")));
    CHECK(heatmap->describeCell({1, 0}).contains(QStringLiteral("query 1 'ell' \u2192 key 0 'H'")));

    // The next-token list reads the same way: the readable forms of the five likeliest ids.
    const auto& logits = session->trace()->nextTokenLogits();
    std::vector<std::int64_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](std::int64_t a, std::int64_t b) { return logits[std::size_t(a)] > logits[std::size_t(b)]; });
    const auto reference = attnscope::Tokenizer::fromFile(kData / "gpt2.json");
    const QString outputs = controls->outputs()->text();
    for (int i = 0; i < 5; ++i) {
        const QString readableToken = QString::fromStdString(reference->displayToken(order[std::size_t(i)]));
        const QString rawToken = QString::fromStdString(*reference->idToToken(order[std::size_t(i)]));
        INFO(outputs.toStdString());
        CHECK(outputs.contains(readableToken == rawToken
                                       ? readableToken
                                       : readableToken + QStringLiteral(" [") + rawToken + QStringLiteral("]")));
    }

    QAction* raw = window.rawTokensAction();
    raw->trigger();
    REQUIRE(QTest::qWaitFor([&] { return heatmap->keyLabels().value(3) == QStringLiteral("\u0120world"); }, 20000));
    CHECK(heatmap->queryLabels() == QStringList({"H", "ell", "o", QStringLiteral("\u0120world")}));
    raw->trigger();
    REQUIRE(QTest::qWaitFor([&] { return heatmap->keyLabels() == readable; }, 20000));

    BertSpec bert;
    bert.vocab = 11506;  // the pruned bert-base-uncased vocabulary
    const auto bdir = freshDir("ui-bert-tokenizer");
    writeCheckpoint(bdir, makeBert(bert, 25));
    std::filesystem::copy_file(kData / "bert-uncased" / "vocab.txt", bdir / "vocab.txt");
    open(qpath(bdir));
    CHECK_FALSE(controls->idsCheck()->isChecked());
    runText(QStringLiteral("Hello world"));
    waitForMap(session->trace()->map(0, layer->value(), head->value()));
    CHECK(heatmap->keyLabels() == QStringList({"[CLS]", "hell", "o", "world", "[SEP]"}));
    CHECK(heatmap->describeCell({2, 0}).contains(QStringLiteral("query 2 'o' [##o] \u2192 key 0 '[CLS]'")));
    raw->trigger();
    REQUIRE(QTest::qWaitFor([&] { return heatmap->keyLabels().value(2) == QStringLiteral("##o"); }, 20000));
    CHECK(window.currentFigure().panels.front().keyLabels.value(2) == QStringLiteral("##o"));  // exports follow
    raw->trigger();
}

TEST_CASE("The device choice offers cuda only when core can use it", "[ui][device]") {
    DeviceCombo without(false);
    CHECK(without.choice() == attnscope::DeviceChoice::Auto);
    const auto* items = qobject_cast<QStandardItemModel*>(without.model());
    REQUIRE(items);
    CHECK_FALSE(items->item(2)->isEnabled());
    CHECK(without.itemData(2, Qt::ToolTipRole).toString().contains(QStringLiteral("CUDA is not available")));
    CHECK_FALSE(without.setChoice(attnscope::DeviceChoice::Cuda));
    CHECK(without.setChoice(attnscope::DeviceChoice::Cpu));
    CHECK(without.choice() == attnscope::DeviceChoice::Cpu);

    DeviceCombo with(true);
    CHECK(qobject_cast<QStandardItemModel*>(with.model())->item(2)->isEnabled());
    CHECK(with.setChoice(attnscope::DeviceChoice::Cuda));
    CHECK(with.choice() == attnscope::DeviceChoice::Cuda);

    DeviceCombo real;  // the window's: follows core
    CHECK(qobject_cast<QStandardItemModel*>(real.model())->item(2)->isEnabled() == attnscope::cudaAvailable());
}

TEST_CASE_METHOD(WindowFixture, "Models open on the chosen device; load errors show in the dialog",
                 "[ui][window][device]") {
    const auto dir = freshDir("ui-device-llama");
    writeCheckpoint(dir, makeLlama(LlamaSpec{}, 26));
    REQUIRE(controls->device()->setChoice(attnscope::DeviceChoice::Cpu));
    open(qpath(dir));
    CHECK(session->model()->info().device == "cpu");
    CHECK(controls->modelLabel()->text().contains(QStringLiteral("cpu")));

    if (!attnscope::cudaAvailable()) {  // asking for the GPU anyway: core's clear refusal
        session->openModel(qpath(dir), attnscope::DeviceChoice::Cuda);
        CHECK(takeErrorDialog().contains(QStringLiteral("device 'cuda' is not available")));
        CHECK(session->model()->info().device == "cpu");  // the open model stays
    } else {                                              // choosing cuda reopens the model on the GPU
        QSignalSpy loaded(session, &Session::modelLoaded);
        REQUIRE(controls->device()->setChoice(attnscope::DeviceChoice::Cuda));
        REQUIRE(loaded.wait(60000));
        CHECK(QString::fromStdString(session->model()->info().device).startsWith(QStringLiteral("cuda")));
    }

    // An input whose forward pass would not fit in memory is refused before it runs, saying how
    // much it needs and what there is. The forward attends in blocks, so what cannot fit is the
    // capture: 4 layers of 1024 query and 1024 key heads of size 256 over 16,000 tokens keep
    // 134 GB of Q and K, from weights of 34 MB (a width of 2; RoPE keeps long positions cheap),
    // whose values do not matter here (a fixed pattern: no random draws).
    const auto longDir = freshDir("ui-device-long");
    LlamaSpec longSpec;
    longSpec.randomWeights = false;
    longSpec.positions = 20000;
    longSpec.hidden = 2;
    longSpec.inner = 2;
    longSpec.layers = 4;
    longSpec.heads = 1024;
    longSpec.kvHeads = 1024;
    longSpec.headDim = 256;
    writeCheckpoint(longDir, makeLlama(longSpec, 28));
    open(qpath(longDir));
    const auto shortTrace = session->trace();
    QStringList ids;
    for (int i = 0; i < 16000; ++i) ids << QStringLiteral("1");
    input->setText(ids.join(QLatin1Char(' ')));
    REQUIRE(input->text().size() == 31999);  // within QLineEdit's 32767 characters
    QTest::mouseClick(run, Qt::LeftButton);
    const QString refusal = takeErrorDialog();
    CHECK(refusal.contains(QStringLiteral("a forward pass over 16000 tokens needs")));
    CHECK(refusal.contains(QStringLiteral("GiB available")));
    CHECK(session->trace() == shortTrace);
    input->setText(QStringLiteral("1 2 3"));
    open(qpath(dir));

    // A checkpoint whose tensor has the wrong shape: the message names it; the window goes on.
    const auto bad = freshDir("ui-device-bad");
    LlamaSpec spec;
    Checkpoint c = makeLlama(spec, 27);
    c.config["hidden_size"] = 40;
    writeCheckpoint(bad, c);
    window.openModel(qpath(bad));
    const QString text = takeErrorDialog();
    INFO(text.toStdString());
    CHECK(text.contains(QStringLiteral("Could not open the model")));
    CHECK(text.contains(QStringLiteral("embed_tokens.weight")));
    CHECK(session->modelSpec() == qpath(dir));
}

}  // namespace test_window_families
