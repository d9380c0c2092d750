// The Corpus tab: a result folder of core's runCorpus shown (importance heat map = the result's
// means / max, the pruning curve's points), a click on a head showing it on the chosen example in
// the Explore tab, and a corpus run from the tab with progress: the run is CorpusService's, on the
// shared model-run pool; Cancel stops it so that it resumes, and a model change drops it.
#include "controllers/corpuscontroller.h"
#include "panels/corpuspanel.h"
#include "services/corpusservice.h"
#include "services/pools.h"
#include "window_fixture.h"

#include "attnscope/corpus/corpus_run.h"
#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"
#include "gpt2_fixture.h"

#include <qcustomplot.h>

#include <QProgressBar>
#include <QScopeGuard>
#include <QThreadPool>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>

namespace test_corpus_panel {

using namespace uitest;

namespace {

// A labelled corpus of `lines` sentences of the built-in sentiment task in dir/c.jsonl.
void writeSentimentCorpus(const std::filesystem::path& dir, int lines) {
    attnscope::TaskData data(5, attnscope::Split::HeldOut);
    std::ofstream f(dir / "c.jsonl");
    for (int i = 0; i < lines; ++i) {
        const auto e = data.sentiment();
        f << "{\"text\": \"" << e.text << "\", \"label\": \"" << (e.positive ? "positive" : "negative") << "\"}\n";
    }
}

std::filesystem::path sentimentResult(const std::string& name) {
    const auto dir = attnscope::testing::freshDir(name);
    writeSentimentCorpus(dir, 6);
    const auto model =
            attnscope::Model::load("builtin:sentiment-dot", attnscope::LoadOptions{attnscope::DeviceChoice::Cpu, {}});
    attnscope::runCorpus(*model, dir / "c.jsonl", dir / "out", {});
    return dir;
}

// The lines of a record file (one record each).
std::size_t lineCount(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
}

// Holds a corpus run on its worker at one progress tick until the test lets it go: Cancel or a
// model change then finds the run going, with the records before that tick written and work left
// after it, in any build and at any speed. Shared with the service's hook, which the service keeps.
struct TickGate {
    std::mutex mutex;
    std::condition_variable changed;
    bool armed = true, held = false, released = false;

    bool isHeld() {
        const std::lock_guard<std::mutex> lock(mutex);
        return held;
    }
    void release() {
        const std::lock_guard<std::mutex> lock(mutex);
        released = true;
        changed.notify_all();
    }
};

// The service's hook: the first tick of `phase` at `done` waits (at most a minute) for release().
void holdAt(CorpusService* service, const std::shared_ptr<TickGate>& gate, const QString& phase, long long done) {
    service->setTickHook([gate, phase, done](const CorpusProgress& p) {
        if (p.phase != phase || p.done != done) return;
        std::unique_lock<std::mutex> lock(gate->mutex);
        if (!gate->armed) return;
        gate->armed = false;
        gate->held = true;
        gate->changed.wait_for(lock, std::chrono::minutes(1), [&] { return gate->released; });
    });
}

}  // namespace

TEST_CASE("Corpus tab shows a result folder and a clicked head on the chosen example", "[ui][corpus]") {
    const auto dir = sentimentResult("ui-corpus");
    WindowFixture f;
    f.open(QStringLiteral("builtin:sentiment-dot"));
    REQUIRE(f.window.openCorpusResult(qpath(dir / "out")));
    CorpusPanel* panel = f.window.corpus();
    REQUIRE(f.window.tabs()->currentWidget() == panel);
    const attnscope::CorpusResult& r = panel->result();
    REQUIRE(r.examples == 6);
    // The heat map: layers × heads, each the head's mean importance over the largest.
    const attnscope::HeadMap& shown = panel->importanceView()->map();
    REQUIRE(shown.rows == 2);
    REQUIRE(shown.cols == 2);
    double top = 0;
    for (const auto& h : r.heads) top = std::max(top, h.importance.mean);
    for (const auto& h : r.heads)
        CHECK(shown.at(h.head.layer, h.head.head) == Approx(std::max(0.0, h.importance.mean / top)));
    // Axes and colour bar say what they show: layers, heads, the statistic.
    CHECK(panel->importanceView()->plot()->xAxis->label() == QStringLiteral("head"));
    CHECK(panel->importanceView()->plot()->yAxis->label() == QStringLiteral("layer"));
    CHECK(panel->importanceView()->axisNames().values.contains(QStringLiteral("p(true label) drop / max")));
    // The curve: k = 0 … 4 with the result's means (third graph: the mean line over the band).
    QCPGraph* mean = panel->curvePlot()->graph(2);
    REQUIRE(mean->data()->size() == 5);
    CHECK(mean->data()->at(0)->value == r.pruning[0].metric.mean);
    CHECK(mean->data()->at(4)->value == r.pruning[4].metric.mean);
    // The examples come from the corpus beside the folder.
    REQUIRE(panel->exampleCombo()->count() == 6);
    panel->exampleCombo()->setCurrentIndex(3);
    const QString example = panel->chosenExample();

    // Click head (layer 1, head 0).
    QSignalSpy traced(f.session, &Session::traceReady);
    const CellGeometry g = panel->importanceView()->cellGeometry();
    const QPoint at = g.cellCenter({1, 0}).toPoint();
    QWidget* plot = panel->importanceView()->plot();
    QTest::mousePress(plot, Qt::LeftButton, {}, at);
    QTest::mouseRelease(plot, Qt::LeftButton, {}, at);
    REQUIRE(traced.wait(20000));
    CHECK(f.input->text() == example);
    CHECK(f.layer->value() == 1);
    CHECK(f.head->value() == 0);
    CHECK(f.window.tabs()->currentIndex() == 0);
    f.waitForMap(f.session->trace()->map(0, 1, 0));
}

TEST_CASE("Corpus tab runs a corpus file on the open model with progress", "[ui][corpus]") {
    const auto dir = sentimentResult("ui-corpus-run");
    WindowFixture f;
    f.open(QStringLiteral("builtin:sentiment-dot"));
    CorpusPanel* panel = f.window.corpus();
    QSignalSpy done(panel, &CorpusPanel::finished);
    emit panel->runRequested(qpath(dir / "c.jsonl"), qpath(dir / "gui"));  // the file and folder chosen
    CHECK_FALSE(panel->findChild<QPushButton*>(QStringLiteral("corpusRunButton"))->isEnabled());
    REQUIRE(done.wait(60000));
    CHECK(done.at(0).at(0).toBool());
    CHECK(panel->progressBar()->value() == 1000);
    CHECK(panel->progressBar()->format().contains(QStringLiteral("pruning: 6/6")));
    // The same numbers as the run written by the library directly.
    const auto direct = attnscope::readCorpusResult(dir / "out");
    REQUIRE(panel->result().heads.size() == direct.heads.size());
    CHECK(panel->result().heads[2].importance.mean == direct.heads[2].importance.mean);
    CHECK(panel->exampleCombo()->count() == 6);
}

TEST_CASE("Corpus tab shows any statistic of the run per head: detectors as shares, entropy over its largest",
          "[ui][corpus]") {
    const auto dir = sentimentResult("ui-corpus-stats");
    WindowFixture f;
    REQUIRE(f.window.openCorpusResult(qpath(dir / "out")));
    CorpusPanel* panel = f.window.corpus();
    const attnscope::CorpusResult& r = panel->result();
    QComboBox* show = panel->quantityCombo();
    // Importance first, then the masked metric, then every statistic of the metric list.
    REQUIRE(show->count() == 2 + static_cast<int>(attnscope::corpusStatKeys().size()));
    CHECK(show->itemData(0).toString() == QStringLiteral("importance"));
    REQUIRE(show->findData(QStringLiteral("det_previous_token")) >= 0);

    show->setCurrentIndex(show->findData(QStringLiteral("det_previous_token")));
    HeatmapView* view = panel->importanceView();
    CHECK(view->axisNames().values == QStringLiteral("Previous-token det."));
    for (const auto& h : r.heads) {
        const auto st = h.stat("det_previous_token");
        REQUIRE(st.examples == 6);  // every sentence has two tokens
        CHECK(view->map().at(h.head.layer, h.head.head) == Approx(st.spread.mean).epsilon(1e-6));
    }

    CHECK(view->title() == QStringLiteral("self · mean over 6 examples"));
    // Induction counts only the sentences with a repeated token; the title says how many.
    show->setCurrentIndex(show->findData(QStringLiteral("det_induction")));
    const int withTarget = r.heads[0].stat("det_induction").examples;
    REQUIRE(withTarget < 6);  // seed 5's six sentences: not all repeat a token
    CHECK(view->title().contains(QStringLiteral("mean over %1 of 6 examples").arg(withTarget)));

    show->setCurrentIndex(show->findData(QStringLiteral("entropy")));
    double top = 0;
    for (const auto& h : r.heads) top = std::max(top, h.stat("entropy").spread.mean);
    CHECK(view->axisNames().values.startsWith(QStringLiteral("Entropy / max (max")));
    CHECK(view->axisNames().values.endsWith(QStringLiteral("nats)")));
    for (const auto& h : r.heads)
        CHECK(view->map().at(h.head.layer, h.head.head) == Approx(h.stat("entropy").spread.mean / top).epsilon(1e-6));
    // Hover gives the raw mean, named by layer and head.
    const auto& h1 = r.heads[1];
    const QString hover = view->describeCell({h1.head.layer, h1.head.head});
    CHECK(hover.startsWith(QStringLiteral("layer %1").arg(h1.head.layer)));
    CHECK(hover.contains(QStringLiteral("head %1").arg(h1.head.head)));
    CHECK(hover.section(QStringLiteral(": "), -1).toDouble() == Approx(h1.stat("entropy").spread.mean).epsilon(1e-3));
}

// Issue 29, "services own every job": the run is CorpusService's, on the shared model-run pool
// (not a thread of the panel's); Cancel ends it with the folder resumable, and it resumes; a
// model change drops the old model's run, and nothing of it arrives afterwards.
TEST_CASE("Corpus tab's run is a service job: Cancel stops it resumably, a model change drops it",
          "[ui][corpus][jobs]") {
    const auto dir = attnscope::testing::freshDir("ui-corpus-jobs");
    writeSentimentCorpus(dir, 8);  // held at its fourth example (holdAt), so caught running
    WindowFixture f;
    f.open(QStringLiteral("builtin:sentiment-dot"));
    CorpusPanel* panel = f.window.corpus();
    CorpusService* service = f.window.corpusTab()->service();
    const auto gate = std::make_shared<TickGate>();
    holdAt(service, gate, QStringLiteral("importance"), 3);
    const auto releaseAtEnd = qScopeGuard([gate] { gate->release(); });  // before f waits for the worker
    QPushButton* runButton = panel->findChild<QPushButton*>(QStringLiteral("corpusRunButton"));
    QSignalSpy done(panel, &CorpusPanel::finished);
    const auto startAndWaitForProgress = [&](const std::string& out) {
        REQUIRE(modelRunPool()->activeThreadCount() == 0);
        emit panel->runRequested(qpath(dir / "c.jsonl"), qpath(dir / out));
        REQUIRE(service->isRunning());
        REQUIRE(QTest::qWaitFor([&] { return gate->isHeld(); }, 20000));
        REQUIRE(QTest::qWaitFor(
                [&] { return panel->progressBar()->format().startsWith(QStringLiteral("importance: 3/8")); }, 20000));
        CHECK(modelRunPool()->activeThreadCount() >= 1);  // the job runs on the shared pool
        REQUIRE(service->isRunning());
        CHECK(panel->cancelButton()->isEnabled());
        CHECK_FALSE(runButton->isEnabled());
    };

    SECTION("Cancel stops the run; the same folder resumes it") {
        startAndWaitForProgress("cancelled");
        QTest::mouseClick(panel->cancelButton(), Qt::LeftButton);
        gate->release();  // the held tick now sees the Cancel
        REQUIRE(done.wait(20000));
        CHECK_FALSE(done.at(0).at(0).toBool());
        CHECK(panel->statusLabel()->text() == QStringLiteral("Cancelled; run again on the same folder to resume."));
        CHECK_FALSE(service->isRunning());
        CHECK(runButton->isEnabled());
        CHECK_FALSE(panel->cancelButton()->isEnabled());
        CHECK_FALSE(std::filesystem::exists(dir / "cancelled" / "heads.json"));
        CHECK(lineCount(dir / "cancelled" / "importance.jsonl") == 3);  // kept to resume
        emit panel->runRequested(qpath(dir / "c.jsonl"), qpath(dir / "cancelled"));
        REQUIRE(done.wait(120000));
        CHECK(done.at(1).at(0).toBool());
        CHECK(panel->result().examples == 8);
    }
    SECTION("another model drops the old model's run") {
        startAndWaitForProgress("dropped");
        f.open(QStringLiteral("builtin:sentiment-additive"));
        REQUIRE(done.count() == 1);
        CHECK_FALSE(done.at(0).at(0).toBool());
        CHECK(panel->statusLabel()->text().startsWith(QStringLiteral("The model changed")));
        CHECK_FALSE(service->isRunning());
        CHECK(runButton->isEnabled());
        gate->release();
        service->waitForWorkers();  // the old run stopped at the held tick
        const QString shown = panel->progressBar()->format();
        QTest::qWait(100);  // nothing of the dropped run arrives any more
        CHECK(done.count() == 1);
        CHECK(panel->progressBar()->format() == shown);
        CHECK_FALSE(std::filesystem::exists(dir / "dropped" / "heads.json"));
    }
}

}  // namespace test_corpus_panel
