// Timings for docs/benchmarks.md (not run by ctest; they print milliseconds): the live temperature
// re-render of the Explore tab, and the lab's propagated-temperature re-run and additive fit.
#include "lab_fixture.h"

#include "gpt2_fixture.h"
#include "panels/metricspanel.h"

#include <QElapsedTimer>

#include <algorithm>
#include <iostream>

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

// How long the temperature slider takes to bring new maps on screen, on a larger model (not run
// by default; prints milliseconds):
//   build/tools/attnscope-devtools "[.timing]"
TEST_CASE_METHOD(WindowFixture, "time the live temperature re-render", "[.timing]") {
    const fs::path folder = freshDir("ui-timing");
    Gpt2Spec spec;
    spec.layers = 12;
    spec.heads = 12;
    spec.embd = 384;
    spec.positions = 512;
    spec.vocab = 1000;
    writeGpt2Folder(folder, makeGpt2(spec, 3));
    for (int n : {16, 128, 512}) {
        open(qpath(folder));
        QStringList ids;
        for (int i = 0; i < n; ++i) ids << QString::number((i * 7) % 1000);
        runText(ids.join(QLatin1Char(' ')));
        const auto trace = session->trace();
        layer->setValue(5);
        head->setValue(3);
        waitForMap(trace->map(0, 5, 3));
        REQUIRE(QTest::qWaitFor([&] { return overview->images().size() == 144; }, 60000));
        QElapsedTimer clock;
        double detail = 0, grid = 0, delivered = 0;
        const int moves = 10;
        for (int i = 1; i <= moves; ++i) {
            const int position = 100 - 7 * i;
            const double t = TemperatureSlider::temperatureAt(position);
            overview->setImages({});
            clock.start();
            slider->setValue(position);
            waitForMap(trace->map(0, 5, 3, at(t)));
            detail += clock.nsecsElapsed() / 1e6;
            delivered += window.maps()->lastDetailLatencyMs();
            REQUIRE(QTest::qWaitFor([&] { return overview->images().size() == 144; }, 60000));
            grid += clock.nsecsElapsed() / 1e6;
        }
        std::cout << n << " tokens, 12x12 heads: map delivered " << delivered / moves << " ms, on screen "
                  << detail / moves << " ms, all 144 thumbnails " << grid / moves << " ms after a slider move\n";
        slider->setValue(TemperatureSlider::positionOf(1.0));
    }
    fs::remove_all(folder);
}

// Latencies for docs: slider move -> re-run shown (propagated temperature), additive fit.
//   build/tools/attnscope-devtools "[.lab-timing]"
TEST_CASE_METHOD(LabFixture, "time the lab", "[.lab-timing]") {
    for (const QString spec : {QStringLiteral("builtin:reverse-dot"), QStringLiteral("builtin:sentiment-dot")}) {
        open(spec);
        lab->propagateCheck()->setChecked(true);
        std::vector<double> ms;
        for (int i = 0; i < 20; ++i) {
            QElapsedTimer clock;
            clock.start();
            slider->setValue(TemperatureSlider::positionOf(0.2 + 0.1 * i));
            const double t = controls->temperature()->temperature();
            REQUIRE(QTest::qWaitFor(
                    [&] {
                        return lab->intervention().temperature == t && lab->shownTrace() != session->trace() &&
                               lab->changeView()->hasChange() && !heatmap->title().isEmpty() &&
                               lab->panel()->jobLabel()->text().startsWith(QStringLiteral("Re-ran"));
                    },
                    20000));
            ms.push_back(clock.nsecsElapsed() / 1e6);
            if (i == 19) WARN("last " << lab->panel()->jobLabel()->text().toStdString());
        }
        std::sort(ms.begin(), ms.end());
        lab->propagateCheck()->setChecked(false);
        QElapsedTimer clock;
        clock.start();
        QTest::mouseClick(panel->fitButton(), Qt::LeftButton);
        REQUIRE(QTest::qWaitFor([&] { return lab->lastFit() != nullptr; }, 30000));
        const double fitMs = clock.nsecsElapsed() / 1e6;
        WARN(spec.toStdString() << ": propagate re-run shown, median " << ms[ms.size() / 2] << " ms, max " << ms.back()
                                << " ms; additive fit (300 steps, width 32, "
                                << session->trace()->blocks()[0].queryTokens.size() << " tokens) " << fitMs
                                << " ms, KL " << lab->lastFit()->initialKl << " -> " << lab->lastFit()->finalKl);
        panel->setVariant(LabVariant::Native);
        slider->setValue(TemperatureSlider::positionOf(1.0));
    }
}
