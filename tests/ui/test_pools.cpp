// The shared thread pools (services/pools.h): trackers share a pool, yet each waits only for its
// own jobs, and a model change's cancel drops every result of the old model.
#include "services/jobtracker.h"
#include "services/pools.h"

#include <catch2/catch.hpp>

#include <QSignalSpy>
#include <QTest>
#include <QThreadPool>

#include <atomic>

namespace test_pools {

TEST_CASE("JobTrackers share one pool; each waits only for its own jobs", "[ui][jobs]") {
    REQUIRE(modelRunPool() != mapPool());
    CHECK(modelRunPool()->maxThreadCount() == 3);
    CHECK(mapPool()->maxThreadCount() >= 2);
    QObject context;
    std::atomic<bool> release{false}, slowDone{false};
    {
        JobTracker slow(&context, mapPool());
        JobTracker fast(&context, mapPool());
        slow.start(
                [&](const JobTracker::Stop&) {
                    while (!release) QThread::msleep(1);
                    slowDone = true;
                    return 0;
                },
                [](int) {});
        int got = 0;
        fast.start([](const JobTracker::Stop&) { return 7; }, [&](int v) { got = v; });
        fast.waitForDone();  // returns although the other tracker's job still runs
        CHECK_FALSE(slowDone);
        REQUIRE(QTest::qWaitFor([&] { return got == 7; }));
        release = true;
    }  // ~JobTracker of `slow` waited for its job
    CHECK(slowDone);
}

}  // namespace test_pools
