// Long forwards in the window (issue 14): per-layer progress with the time left on the status
// bar, and Cancel mid-forward leaves the shown Trace as it was and the window usable.
#include "window_fixture.h"

#include "gpt2_fixture.h"

#include <QProgressBar>
#include <QPushButton>

namespace test_progress {

using namespace uitest;

namespace {

// A GPT-2 stand-in that takes a while at 2,000 tokens: 12 layers, so the first progress report
// arrives long before the last layer.
std::filesystem::path slowModel() {
    attnscope::testing::Gpt2Spec spec;
    spec.positions = 2048;
    spec.embd = 64;
    spec.layers = 12;
    spec.vocab = 64;
    const auto dir = attnscope::testing::freshDir("ui-slow-gpt2");
    attnscope::testing::writeGpt2Folder(dir, attnscope::testing::makeGpt2(spec, 5));
    return dir;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "Cancel mid-forward keeps the shown Trace and the window usable",
                 "[ui][progress][cancel]") {
    open(qpath(slowModel()));
    const auto before = session->trace();
    REQUIRE(before);
    auto* bar = window.findChild<QProgressBar*>(QStringLiteral("progressBar"));
    auto* cancel = window.findChild<QPushButton*>(QStringLiteral("cancelButton"));
    REQUIRE(bar);
    REQUIRE(cancel);

    QSignalSpy traced(session, &Session::traceReady);
    QStringList texts;
    bool clicked = false;
    // The first per-layer report cancels, as a user's click would.
    auto connection = QObject::connect(session, &Session::progressText, &window, [&](const QString& text) {
        texts << text;
        if (!clicked && text.contains(QStringLiteral("layer 1 of 12"))) {
            clicked = true;
            CHECK(bar->isVisible());
            CHECK(cancel->isVisible());
            QTest::mouseClick(cancel, Qt::LeftButton);
        }
    });
    std::vector<std::int64_t> ids(2000);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i % 64);
    session->run(ids);
    REQUIRE(QTest::qWaitFor([&] { return clicked; }, 60000));
    session->waitForWorkers();
    QTest::qWait(50);  // deliver (and drop) what the cancelled worker posted
    QObject::disconnect(connection);

    CHECK(traced.isEmpty());            // no half Trace arrived
    CHECK(session->trace() == before);  // the shown one stays
    CHECK_FALSE(session->isBusy());
    CHECK_FALSE(bar->isVisible());
    CHECK(run->isEnabled());
    REQUIRE(!texts.isEmpty());
    CHECK(texts.front() == QStringLiteral("Running…"));
    CHECK(texts.contains(QStringLiteral("Running: layer 1 of 12")));

    // The window goes on: a new run completes with progress up to the last layer.
    QStringList after;
    auto again = QObject::connect(session, &Session::progressText, &window, [&](const QString& t) { after << t; });
    runText(QStringLiteral("1 2 3 4"));
    QObject::disconnect(again);
    REQUIRE(session->trace());
    CHECK(session->trace() != before);
    CHECK(session->trace()->ids().size() == 4);
    CHECK(after.contains(QStringLiteral("Running: layer 12 of 12")));
    // After the first layer the bar says how long is left.
    bool withTime = false;
    for (const QString& t : after)
        withTime = withTime || (t.contains(QStringLiteral("of 12 · ")) && t.endsWith(QStringLiteral(" left")));
    CHECK(withTime);
}

}  // namespace test_progress
