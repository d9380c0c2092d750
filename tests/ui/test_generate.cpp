// Generation and the head detectors in the real window: Generate continues the input, the step
// slider and ← → show each step's query row (the heat map holds core's prefixTrace map), the
// text marks the current token, and the Metrics table's detector columns are core's scores.
#include "window_fixture.h"

#include "panels/generatepanel.h"
#include "panels/metricspanel.h"
#include "controllers/generatecontroller.h"
#include "controllers/labcontroller.h"

#include "attnscope/analysis/detectors.h"
#include "attnscope/models/generation.h"

#include <QDoubleSpinBox>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>

namespace test_generate {

using namespace uitest;

namespace {

struct GenerateFixture : WindowFixture {
    GenerateController* gen = window.generation();
    GeneratePanel* panel = gen->panel();
    ~GenerateFixture() {
        gen->waitForWorkers();
        window.lab()->shutdown();
    }

    attnscope::HeadMap expectedStep(const attnscope::Generation& g, int step, bool rowOnly) const {
        return attnscope::prefixTrace(*g.trace, int(g.prompt.size()) + step, rowOnly)
                ->map(0, layer->value(), head->value());
    }
};

}  // namespace

TEST_CASE_METHOD(GenerateFixture, "Generate, then step through the tokens: every step shows its query row",
                 "[ui][generation]") {
    openStandIn();
    const auto prompt = session->trace()->ids();
    panel->tokensSpin()->setValue(5);
    QSignalSpy done(gen, &GenerateController::finished);
    QTest::mouseClick(panel->generateButton(), Qt::LeftButton);
    REQUIRE(done.wait(30000));
    REQUIRE(gen->generation());
    const attnscope::Generation& g = *gen->generation();
    attnscope::GenerateOptions o;
    o.tokens = 5;
    CHECK(g.prompt == prompt);
    CHECK(g.generated == attnscope::generate(*session->model(), prompt, o).generated);

    // Step 0: the last prompt position's row over the prompt.
    CHECK(panel->stepSlider()->maximum() == 4);
    waitForMap(expectedStep(g, 0, true));
    CHECK(heatmap->map().rows == 1);
    CHECK(heatmap->map().cols == int(prompt.size()));
    // The slider, then → in the text.
    panel->stepSlider()->setValue(2);
    waitForMap(expectedStep(g, 2, true));
    CHECK(heatmap->map().cols == int(prompt.size()) + 2);
    panel->text()->setFocus();
    QTest::keyClick(panel->text(), Qt::Key_Right);
    CHECK(panel->step() == 3);
    waitForMap(expectedStep(g, 3, true));
    QTest::keyClick(panel->stepSlider(), Qt::Key_Left);
    CHECK(panel->step() == 2);
    // The text marks the current token (generated token 2) and the label names its query row.
    CHECK(panel->text()->toHtml().contains(QStringLiteral("#ffd54f")));
    CHECK(panel->findChild<QLabel*>(QStringLiteral("generateStepLabel"))
                  ->text()
                  .contains(QStringLiteral("query row %1").arg(prompt.size() + 1)));
    // Every row up to the step.
    panel->queryRowCheck()->setChecked(false);
    waitForMap(expectedStep(g, 2, false));
    CHECK(heatmap->map().rows == int(prompt.size()) + 2);
    // Another head follows the step too.
    head->setValue(1);
    waitForMap(expectedStep(g, 2, false));

    // Sampling is reproducible by seed.
    panel->sampleCheck()->setChecked(true);
    panel->samplingTemperatureSpin()->setValue(1.5);
    panel->seedSpin()->setValue(3);
    QTest::mouseClick(panel->generateButton(), Qt::LeftButton);
    REQUIRE(done.wait(30000));
    o.sampling = panel->sampling();
    CHECK(o.sampling.sample);
    CHECK(gen->generation()->prompt == prompt);  // the same prompt, though a step was shown
    CHECK(gen->generation()->generated == attnscope::generate(*session->model(), prompt, o).generated);

    // A new run ends the generation.
    runText(QStringLiteral("3 4 5"));
    CHECK_FALSE(gen->generation());
    CHECK_FALSE(panel->stepSlider()->isEnabled());
}

namespace {

// The texts of the text's fragments that have a background: the generated tokens' chips.
QStringList chipTexts(const QTextDocument& doc) {
    QStringList chips;
    for (QTextBlock block = doc.begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it)
            if (it.fragment().charFormat().background().style() != Qt::NoBrush)
                chips << it.fragment().text().remove(QChar(0x00A0));  // the chip's padding
    return chips;
}

}  // namespace

TEST_CASE_METHOD(GenerateFixture, "Generated tokens are shown as separate chips, never glued together",
                 "[ui][generation]") {
    openStandIn();
    panel->tokensSpin()->setValue(4);
    QSignalSpy done(gen, &GenerateController::finished);
    QTest::mouseClick(panel->generateButton(), Qt::LeftButton);
    REQUIRE(done.wait(30000));
    const attnscope::Generation& g = *gen->generation();
    const auto& labels = g.trace->displayTokens();
    QStringList generated;
    for (std::size_t i = g.prompt.size(); i < labels.size(); ++i) generated << QString::fromStdString(labels[i]);
    REQUIRE(generated.size() == 4);
    CHECK(chipTexts(*panel->text()->document()) == generated);

    // Tokens that do not decode show as their ids: "17", "3", "42" stay three chips, not "17342".
    panel->showGeneration({QStringLiteral("5"), QStringLiteral("6")},
                          {QStringLiteral("17"), QStringLiteral("3"), QStringLiteral("42")}, 1);
    CHECK(chipTexts(*panel->text()->document()) ==
          QStringList{QStringLiteral("17"), QStringLiteral("3"), QStringLiteral("42")});
    CHECK_FALSE(panel->text()->toPlainText().contains(QStringLiteral("17342")));
    CHECK_FALSE(panel->text()->toPlainText().contains(QStringLiteral("173")));
}

TEST_CASE_METHOD(GenerateFixture, "Generation refuses an encoder-decoder in words", "[ui][generation]") {
    open(QStringLiteral("builtin:reverse-dot"));
    QTest::mouseClick(panel->generateButton(), Qt::LeftButton);
    CHECK(panel->findChild<QLabel*>(QStringLiteral("generateStatus"))->text().contains(QStringLiteral("decoder-only")));
    CHECK_FALSE(gen->generation());
}

TEST_CASE_METHOD(GenerateFixture, "Head detectors fill the Metrics table with core's scores", "[ui][detectors]") {
    openStandIn();
    window.tabs()->setCurrentWidget(window.lab()->metrics());
    MetricsPanel* metrics = window.lab()->metrics();
    HeadMetricsModel* model = metrics->model();
    REQUIRE(QTest::qWaitFor([&] { return model->rowCount() > 0; }, 30000));
    CHECK(model->index(0, HeadMetricsModel::DetInduction).data().toString() == QStringLiteral("–"));
    QSignalSpy ready(gen, &GenerateController::detectorsReady);
    QTest::mouseClick(metrics->detectorsButton(), Qt::LeftButton);
    REQUIRE(ready.wait(30000));
    const attnscope::DetectorReport expected = attnscope::headDetectors(*session->model(), {}, {});
    REQUIRE(model->rowCount() == int(expected.heads.size()));
    for (int r = 0; r < model->rowCount(); ++r) {
        const auto& m = model->metrics()[std::size_t(r)];
        const auto& e = expected.heads[std::size_t(r)];
        REQUIRE((m.layer == e.layer && m.head == e.head));
        CHECK(model->index(r, HeadMetricsModel::DetPreviousToken).data(Qt::UserRole).toDouble() ==
              Approx(e.scores.previousToken).margin(1e-9));
        CHECK(model->index(r, HeadMetricsModel::DetDuplicateToken).data(Qt::UserRole).toDouble() ==
              Approx(e.scores.duplicateToken).margin(1e-9));
        CHECK(model->index(r, HeadMetricsModel::DetInduction).data(Qt::UserRole).toDouble() ==
              Approx(e.scores.induction).margin(1e-9));
        CHECK(model->index(r, HeadMetricsModel::DetFirstToken).data(Qt::UserRole).toDouble() ==
              Approx(e.scores.firstToken).margin(1e-9));
    }
    CHECK(model->headerData(HeadMetricsModel::DetInduction, Qt::Horizontal, Qt::ToolTipRole)
                  .toString()
                  .contains(QStringLiteral("TransformerLens")));
}

}  // namespace test_generate
