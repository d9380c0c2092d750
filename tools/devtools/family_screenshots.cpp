// Screenshots of issue 34's families for a person to look at (not run by ctest), the window at
// 1366 × 768:
//   ATTNSCOPE_SCREENSHOT_DIR=/tmp/shots QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1366x768x24" \
//     build/tools/attnscope-devtools "[.deberta-shots]"
// writes deberta-weights.png and deberta-c2c.png, deberta-c2p.png, deberta-p2c.png: a 6-layer
// DeBERTa-v3-shaped folder (log buckets, shared keys) with the test spm.model, on a sentence, the
// Show selector on the weights and on each score term. "[.router-shots]" writes router-mixtral.png
// and router-qwen2moe.png: a MoE decoder's router strip under the map, one hovered cell's
// probabilities, and the exported figure with the strip (router-figure.png).
#include "window_fixture.h"

#include "figure/figure.h"
#include "fixtures_deberta.h"
#include "fixtures_moe.h"
#include "panels/sourcepicker.h"
#include "views/routerstripview.h"

#include "attnscope/attention/score_terms.h"

#include <cstdlib>

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

fs::path shotDir() {
    const char* dir = std::getenv("ATTNSCOPE_SCREENSHOT_DIR");
    REQUIRE(dir);
    fs::create_directories(dir);
    return dir;
}

void saveWindow(WindowFixture& w, const fs::path& file) {
    QTest::qWait(500);
    REQUIRE(w.window.grab().save(qpath(file)));
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "save screenshots of DeBERTa's score terms", "[.deberta-shots]") {
    const fs::path out = shotDir();
    DebertaSpec spec;
    spec.vocab = 701;  // the test spm.model's pieces and [MASK]
    spec.hidden = 48;
    spec.inner = 96;
    spec.layers = 6;
    spec.heads = 6;
    spec.buckets = 8;
    spec.maxRelative = 64;
    spec.shareKey = true;
    spec.normRel = true;
    const fs::path parent = freshDir("deberta-shots");
    const fs::path model = parent / "deberta-v3-6x6";
    writeCheckpoint(model, makeDeberta(spec, 34));
    fs::copy_file(fs::path(ATTNSCOPE_TOKENIZER_DATA) / "spm" / "deberta.model", model / "spm.model");
    window.resize(1366, 768);
    open(qpath(model));
    runText(QStringLiteral("The quick brown fox jumps over the lazy dog near the river bank."));
    layer->setValue(3);
    head->setValue(2);
    saveWindow(*this, out / "deberta-weights.png");
    for (const auto& [source, file] : {std::pair{attnscope::MapSource::ScoreC2C, "deberta-c2c.png"},
                                       std::pair{attnscope::MapSource::ScoreC2P, "deberta-c2p.png"},
                                       std::pair{attnscope::MapSource::ScoreP2C, "deberta-p2c.png"}}) {
        QComboBox* combo = controls->sourcePicker()->showCombo();
        combo->setCurrentIndex(combo->findData(int(source)));
        const QString term = QString::fromUtf8(attnscope::scoreTermName(attnscope::scoreTermOf(source)));
        REQUIRE(QTest::qWaitFor(
                [&] {
                    const auto t = session->trace();
                    return t && !session->isBusy() && !attnscope::traceScoreTerms(*t).empty() &&
                           heatmap->title().contains(term);
                },
                30000));
        saveWindow(*this, out / file);
    }
    fs::remove_all(parent);
}

TEST_CASE_METHOD(WindowFixture, "save screenshots of the MoE router strip", "[.router-shots]") {
    const fs::path out = shotDir();
    for (const char* type : {"mixtral", "qwen2_moe"}) {
        MoeFamilySpec spec;
        spec.type = type;
        spec.layers = 6;
        spec.experts = 8;
        spec.vocab = 64;
        spec.positions = 128;
        if (spec.type == "qwen2_moe") spec.mlpOnly = {2};
        const fs::path dir = freshDir(std::string("router-shots-") + type);
        writeCheckpoint(dir, makeMoeFamily(spec, 34));
        window.resize(1366, 768);
        open(qpath(dir));
        runText(QStringLiteral("5 9 2 14 3 7 21 8 11 4 17 30 2 6 40 12 19 33 8 1"));
        layer->setValue(3);
        head->setValue(1);
        auto* strip = window.findChild<RouterStripView*>(QStringLiteral("routerStrip"));
        REQUIRE(strip);
        REQUIRE(QTest::qWaitFor([&] { return strip->isVisible() && strip->strip(); }, 10000));
        // Hover a routed cell of the shown layer, so that the tooltip's probabilities show.
        for (int y = strip->height() / 2, x = 0; x < strip->width(); ++x) {
            const auto cell = strip->cellAt(QPointF(x, y));
            if (cell && cell->second == 5) {
                QTest::mouseMove(strip, QPoint(x + 2, y));
                break;
            }
        }
        saveWindow(*this, out / (std::string("router-") + (spec.type == "mixtral" ? "mixtral" : "qwen2moe") + ".png"));
        if (spec.type == "mixtral")
            REQUIRE(renderFigure(window.currentFigure(), 200).save(qpath(out / "router-figure.png")));
        fs::remove_all(dir);
    }
}
