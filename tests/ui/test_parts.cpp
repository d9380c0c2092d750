// The ui's plain parts, without a window: JobTracker, CellGeometry, token-id parsing.
#include "views/cellgeometry.h"
#include "services/jobtracker.h"
#include "services/tokenids.h"

#include <catch2/catch.hpp>

#include <QElapsedTimer>
#include <QObject>
#include <QThread>
#include <QTest>

#include <atomic>
#include <vector>

namespace test_parts {

TEST_CASE("JobTracker delivers only the newest job's result, on the GUI thread", "[ui][jobs]") {
    QObject context;
    std::vector<int> delivered;
    std::atomic<bool> firstSawStop{false};
    {
        JobTracker jobs(&context);
        // The first job runs until it is superseded; its result must be dropped.
        jobs.start(
                [&](const JobTracker::Stop& stop) {
                    QElapsedTimer t;
                    t.start();
                    while (!stop.requested() && t.elapsed() < 5000) QThread::msleep(1);
                    firstSawStop = stop.requested();
                    return 1;
                },
                [&](int r) { delivered.push_back(r); });
        REQUIRE(jobs.isRunning());
        QThread* gui = QThread::currentThread();
        QThread* deliveredOn = nullptr;
        jobs.start([](const JobTracker::Stop&) { return 2; },
                   [&](int r) {
                       deliveredOn = QThread::currentThread();
                       delivered.push_back(r);
                   });
        REQUIRE(QTest::qWaitFor([&] { return !delivered.empty(); }, 5000));
        jobs.waitForDone();
        QTest::qWait(20);  // let any (wrongly) queued stale delivery arrive
        CHECK(firstSawStop);
        CHECK(delivered == std::vector<int>{2});
        CHECK(deliveredOn == gui);
        CHECK_FALSE(jobs.isRunning());
    }
}

TEST_CASE("JobTracker::cancel drops the running job's result and the destructor waits", "[ui][jobs]") {
    QObject context;
    int delivered = 0;
    std::atomic<bool> finished{false};
    {
        JobTracker jobs(&context);
        jobs.start(
                [&](const JobTracker::Stop& stop) {
                    while (!stop.requested()) QThread::msleep(1);
                    QThread::msleep(50);  // still winding down when the tracker is destroyed
                    finished = true;
                    return 0;
                },
                [&](int) { ++delivered; });
        jobs.cancel();
        CHECK_FALSE(jobs.isRunning());
    }
    CHECK(finished);  // ~JobTracker waited for the worker
    QTest::qWait(20);
    CHECK(delivered == 0);
}

TEST_CASE("CellGeometry maps pixels to matrix cells, query 0 at the top", "[ui][geometry]") {
    const auto g = CellGeometry::fitted(QRectF(100, 50, 400, 300), 3, 4);  // 100 x 100 px cells
    CHECK(g.cellSize() == QPointF(100, 100));
    CHECK(g.cellCenter({0, 0}) == QPointF(150, 100));
    CHECK(g.cellCenter({2, 3}) == QPointF(450, 300));
    CHECK(g.cellAt({101, 51}) == Cell{0, 0});
    CHECK(g.cellAt({499, 349}) == Cell{2, 3});
    CHECK(g.cellAt({260, 160}) == Cell{1, 1});
    CHECK_FALSE(g.cellAt({99, 60}).has_value());
    CHECK_FALSE(g.cellAt({300, 351}).has_value());
    for (int q = 0; q < 3; ++q)
        for (int k = 0; k < 4; ++k) CHECK(g.cellAt(g.cellCenter({q, k})) == Cell{q, k});
}

TEST_CASE("Token ids parse from comma- or space-separated text", "[ui][ids]") {
    auto p = parseTokenIds(QStringLiteral(" 3, 1 4,1\t5 "));
    REQUIRE(p.ok());
    CHECK(p.ids == std::vector<std::int64_t>{3, 1, 4, 1, 5});
    CHECK(formatTokenIds(p.ids) == QStringLiteral("3 1 4 1 5"));

    CHECK_FALSE(parseTokenIds(QString()).ok());
    CHECK_FALSE(parseTokenIds(QStringLiteral(" , ")).ok());
    CHECK_FALSE(parseTokenIds(QStringLiteral("1 x")).ok());
    CHECK_FALSE(parseTokenIds(QStringLiteral("-1")).ok());
    auto range = parseTokenIds(QStringLiteral("1 40"), 40);
    CHECK_FALSE(range.ok());
    CHECK(range.error.contains(QStringLiteral("'40'")));
    CHECK(range.error.contains(QStringLiteral("39")));
    CHECK_FALSE(parseTokenIds(QStringLiteral("1 2 3"), 40, 2).ok());
    CHECK(parseTokenIds(QStringLiteral("1 2"), 40, 2).ok());
}

}  // namespace test_parts
