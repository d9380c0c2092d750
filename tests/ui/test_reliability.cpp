// The window's background work under stress (issue 15, faults 1, 2, 6): a prune never overwrites
// a newer re-run, the Compare tab shows progress, can be cancelled and opens its models on the
// chosen device, and malformed maps are refused instead of read past their values.
#include "window_fixture.h"

#include "figure/colormaps.h"
#include "figure/imagefile.h"
#include "gpt2_fixture.h"
#include "png_write.h"
#include "services/comparesession.h"
#include "services/labservice.h"

#include "attnscope/models/model.h"
#include "attnscope/runtime/device.h"
#include "attnscope/runtime/error.h"

#include <QProgressBar>

#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace test_reliability {

using namespace uitest;

TEST_CASE("A prune that finishes after a newer re-run is dropped (fault 1)", "[ui][reliability]") {
    attnscope::LoadOptions cpu;
    cpu.device = attnscope::DeviceChoice::Cpu;
    const ModelPtr model = attnscope::Model::load(attnscope::testing::standInModel(), cpu);
    const TracePtr base = model->forward({1, 2, 3, 4, 5, 6});
    LabService service;
    QSignalSpy reruns(&service, &LabService::rerunReady);
    Intervention masked;
    masked.masked = {{"self", 0, 1}};
    // Output-change importance runs the model once per head: the slowest prune, still running
    // when the re-run (a slider move, a mask toggle) is requested.
    service.requestPrune(model, base, Intervention{}, attnscope::Importance::OutputChange, 2);
    service.requestRerun(model, base, masked);
    service.waitForWorkers();
    QTest::qWait(50);  // deliver every queued result
    REQUIRE(reruns.count() == 1);
    const auto r = reruns.at(0).at(0).value<RerunResult>();
    CHECK(r.error.isEmpty());
    CHECK(r.ranking.empty());  // the re-run's result, not the prune's
    REQUIRE(r.intervention.masked.size() == 1);
    CHECK(r.intervention.masked[0].layer == 0);
    CHECK(r.intervention.masked[0].head == 1);
    CHECK_FALSE(service.isRunning(LabJob::Prune));
}

TEST_CASE("The comparison reports progress and opens its models on the chosen device (fault 2)", "[ui][reliability]") {
    CompareSession session;
    QSignalSpy progress(&session, &CompareSession::progress);
    QSignalSpy finished(&session, &CompareSession::finished);
    session.run(QStringLiteral("reverse"), QStringLiteral("abc12"), false, attnscope::DeviceChoice::Cpu);
    REQUIRE(finished.wait(60000));
    const auto run = finished.at(0).at(0).value<CompareRun>();
    for (std::size_t i = 0; i < 3; ++i) {
        INFO(run.specs[i].toStdString() << ": " << run.errors[i].toStdString());
        REQUIRE(run.errors[i].isEmpty());
        CHECK(run.models[i]->info().device == "cpu");
    }
    QList<int> values;
    for (const auto& args : progress) values << args.at(0).toInt();
    REQUIRE(values.size() >= 2);
    CHECK(values.front() == -1);
    for (int v : values.mid(1)) CHECK((v >= 0 && v <= 1000));
    CHECK(*std::max_element(values.begin(), values.end()) > 5 * 1000 / 6);  // into the last run

    // cuda where there is none: the device choice is honoured, so the load says why it fails.
    if (!attnscope::cudaAvailable()) {
        finished.clear();
        session.run(QStringLiteral("reverse"), QStringLiteral("abc12"), false, attnscope::DeviceChoice::Cuda);
        REQUIRE(finished.wait(60000));
        const auto gpu = finished.at(0).at(0).value<CompareRun>();
        for (std::size_t i = 0; i < 3; ++i) CHECK(gpu.errors[i].contains(QStringLiteral("cuda")));
    }
}

TEST_CASE_METHOD(WindowFixture, "The Compare tab's Cancel stops the run; its result never shows (fault 2)",
                 "[ui][reliability]") {
    open(QStringLiteral("builtin:reverse-dot"));
    ComparePanel* compare = window.compare();
    QSignalSpy finished(compare->session(), &CompareSession::finished);
    window.tabs()->setCurrentWidget(compare);  // starts loading the three models
    REQUIRE(compare->session()->isBusy());
    CHECK(compare->progressBar()->isVisible());
    REQUIRE(compare->cancelButton()->isVisible());
    QTest::mouseClick(compare->cancelButton(), Qt::LeftButton);
    CHECK_FALSE(compare->session()->isBusy());
    CHECK_FALSE(compare->cancelButton()->isVisible());
    CHECK_FALSE(compare->progressBar()->isVisible());
    CHECK(compare->statusText() == QStringLiteral("Cancelled."));
    compare->session()->waitForWorkers();
    QTest::qWait(50);
    CHECK(finished.count() == 0);
    CHECK_FALSE(compare->hasMaps());

    // Coming back to the tab runs the same input again, to the end.
    window.tabs()->setCurrentIndex(0);
    window.tabs()->setCurrentWidget(compare);
    REQUIRE(finished.wait(60000));
    REQUIRE(QTest::qWaitFor([&] { return compare->hasMaps(); }, 20000));
    CHECK_FALSE(compare->cancelButton()->isVisible());
}

TEST_CASE("Thumbnails refuse maps whose values do not match their size (fault 6)", "[ui][reliability]") {
    const attnscope::HeadMap bad{3, 3, std::vector<float>(4, 0.25f)};
    CHECK_THROWS_WITH(poolMap(bad, 8), Catch::Contains("a map of 3x3 needs 9 values, it holds 4"));
    CHECK_THROWS_AS(mapImage(bad, Colormap::Viridis, ColorScale{}), attnscope::Error);
    const PooledMap pooled{4, 4, std::vector<double>(3, 0.5)};
    CHECK_THROWS_WITH(pooledImage(pooled, Colormap::Viridis, ColorScale{}), Catch::Contains("holds 3 values"));
    const PooledMap fine{2, 1, {0.0, 1.0}};
    CHECK(pooledImage(fine, Colormap::Viridis, ColorScale{}).size() == QSize(2, 1));
}

TEST_CASE("Decoding a damaged PNG writes nothing to stderr; libpng's reason is in the error (fault 11)",
          "[ui][reliability]") {
    const auto dir = attnscope::testing::freshDir("ui-reliability-png");
    std::vector<std::uint8_t> pixels(8 * 8 * 3, 200);
    attnscope::testing::writePng(dir / "whole.png", 8, 8, pixels);
    std::ifstream in(dir / "whole.png", std::ios::binary);
    const std::string png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(dir / "cut.png", std::ios::binary) << png.substr(0, png.size() - 20);
    // fd 2 itself, as libpng writes it, not Qt's message handler.
    std::fflush(stderr);
    std::FILE* sink = std::tmpfile();
    REQUIRE(sink);
    const int saved = ::dup(2);
    ::dup2(::fileno(sink), 2);
    std::string error;
    try {
        decodeImageFile(qpath(dir / "cut.png"));
    } catch (const ImageFileError& e) {
        error = e.what();
    }
    std::fprintf(stderr, "marker\n");  // the test's own line still reaches fd 2 afterwards
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::rewind(sink);
    char buffer[4096] = {};
    const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, sink);
    std::fclose(sink);
    CHECK(std::string(buffer, n) == "marker\n");
    CHECK_THAT(error, Catch::Contains("cut.png: cannot be read as an image (damaged PNG: "));
    CHECK(error.find('\n') == std::string::npos);
}

}  // namespace test_reliability
