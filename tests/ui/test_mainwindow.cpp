// The real window, driven like a user: open a fixture GPT-2 folder, type ids, click Run, switch
// heads, hit errors. Checks what the HeatmapView holds against Trace::map cell by cell.
#include "heatmapview.h"
#include "mainwindow.h"
#include "session.h"

#include "attnscope/model.h"
#include "attnscope/trace.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>
#include <qcustomplot.h>

#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include <filesystem>

namespace fs = std::filesystem;
using namespace attnscope::testing;

namespace {

QString qpath(const fs::path& p) { return QString::fromStdString(p.string()); }

struct WindowFixture {
    fs::path good = freshDir("ui-model");
    MainWindow window;
    Session* session = window.session();
    QLineEdit* ids = window.findChild<QLineEdit*>(QStringLiteral("idsEdit"));
    QPushButton* run = window.findChild<QPushButton*>(QStringLiteral("runButton"));
    QSpinBox* layer = window.findChild<QSpinBox*>(QStringLiteral("layerSpin"));
    QSpinBox* head = window.findChild<QSpinBox*>(QStringLiteral("headSpin"));
    HeatmapView* heatmap = window.findChild<HeatmapView*>(QStringLiteral("heatmap"));

    WindowFixture() {
        Gpt2Spec spec;  // vocab 40, 24 positions, 2 layers x 4 heads
        writeGpt2Folder(good, makeGpt2(spec, 7));
        REQUIRE(ids);
        REQUIRE(run);
        REQUIRE(layer);
        REQUIRE(head);
        REQUIRE(heatmap);
        window.show();
    }
    ~WindowFixture() {
        // No worker outlives a test.
        session->cancel();
        session->waitForWorkers();
        std::error_code ec;
        fs::remove_all(good, ec);
    }

    // Opens a model folder and waits for it to load and for the example run that follows.
    void openGood() {
        QSignalSpy loaded(session, &Session::modelLoaded);
        QSignalSpy traced(session, &Session::traceReady);
        window.openModel(qpath(good));
        REQUIRE(loaded.wait(20000));
        REQUIRE(QTest::qWaitFor([&] { return traced.count() > 0; }, 20000));
        REQUIRE(session->trace());
    }

    // Waits for the error dialog, returns "text\ninformative text" and closes it.
    QString takeErrorDialog() {
        QMessageBox* box = nullptr;
        const bool shown = QTest::qWaitFor(
            [&] { return (box = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"))); }, 20000);
        REQUIRE(shown);
        CHECK(box->isVisible());
        const QString text = box->text() + QLatin1Char('\n') + box->informativeText();
        box->close();
        REQUIRE(QTest::qWaitFor([&] { return !window.findChild<QMessageBox*>(QStringLiteral("errorDialog")); }));
        return text;
    }
};

// Counts cells where the view's colour map differs from expected (exact: floats stored as doubles).
int mismatchedCells(const HeatmapView& view, const attnscope::HeadMap& expected) {
    QCPColorMapData* data = view.colorMap()->data();  // cell() is not const in QCustomPlot 2.1
    if (data->keySize() != expected.cols || data->valueSize() != expected.rows) return -1;
    int bad = 0;
    for (int q = 0; q < expected.rows; ++q)
        for (int k = 0; k < expected.cols; ++k)
            if (data->cell(k, q) != double(expected.at(q, k))) ++bad;
    return bad;
}

QStringList tickLabels(QCPAxis* axis) {
    auto ticker = axis->ticker().dynamicCast<QCPAxisTickerText>();
    return ticker ? QStringList(ticker->ticks().values()) : QStringList();
}

QStringList toQStringList(const std::vector<std::string>& v) {
    QStringList out;
    for (const auto& s : v) out << QString::fromStdString(s);
    return out;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "Opening a model runs an example and shows its map", "[ui][window]") {
    openGood();
    CHECK(ids->text() == QStringLiteral("0 1 2 3 4 5 6 7"));
    CHECK(session->trace()->ids().size() == 8);
    CHECK(layer->maximum() == 1);
    CHECK(head->maximum() == 3);
    CHECK(mismatchedCells(*heatmap, session->trace()->map(0, layer->value(), head->value())) == 0);
    CHECK(window.findChild<QLabel*>(QStringLiteral("modelLabel"))->text().contains(QStringLiteral("gpt2")));
}

TEST_CASE_METHOD(WindowFixture, "Typed ids run and the map equals Trace::map cell by cell", "[ui][window]") {
    openGood();
    layer->setValue(1);
    head->setValue(2);
    ids->clear();
    QTest::keyClicks(ids, QStringLiteral("3, 1 4 1 5"));
    REQUIRE(ids->text() == QStringLiteral("3, 1 4 1 5"));
    QSignalSpy traced(session, &Session::traceReady);
    REQUIRE(run->isEnabled());
    QTest::mouseClick(run, Qt::LeftButton);
    REQUIRE(traced.wait(20000));

    const auto trace = session->trace();
    REQUIRE(trace->ids() == std::vector<std::int64_t>{3, 1, 4, 1, 5});
    CHECK(layer->value() == 1);  // the chosen head survives a re-run
    CHECK(head->value() == 2);
    const attnscope::HeadMap expected = trace->map(0, 1, 2);
    CHECK(mismatchedCells(*heatmap, expected) == 0);

    // The same map as an independent load and forward of the same ids.
    const auto model = attnscope::Model::load(good);
    const attnscope::HeadMap reference = model->forward({3, 1, 4, 1, 5})->map(0, 1, 2);
    REQUIRE(reference.values.size() == expected.values.size());
    for (std::size_t i = 0; i < reference.values.size(); ++i)
        CHECK(expected.values[i] == Approx(reference.values[i]).margin(1e-6));

    const QStringList tokens = toQStringList(trace->tokens());
    CHECK(tokens == QStringList({"t3", "t1", "t4", "t1", "t5"}));
    CHECK(tickLabels(heatmap->plot()->xAxis) == tokens);
    CHECK(tickLabels(heatmap->plot()->yAxis) == tokens);
    CHECK(heatmap->plot()->xAxis->label() == QStringLiteral("key"));
    CHECK(heatmap->plot()->yAxis->label() == QStringLiteral("query"));

    // Hovering a cell names its tokens and value.
    QTest::qWait(50);  // let the queued replot lay the plot out
    const QPointF at = heatmap->cellGeometry().cellCenter({3, 2});
    QMouseEvent move(QEvent::MouseMove, at, heatmap->plot()->mapToGlobal(at), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(heatmap->plot(), &move);
    const QString hover = window.findChild<QLabel*>(QStringLiteral("hoverLabel"))->text();
    CHECK(hover.contains(QStringLiteral("query 3 't1'")));
    CHECK(hover.contains(QStringLiteral("key 2 't4'")));
    CHECK(hover.contains(QString::number(double(expected.at(3, 2)), 'f', 4)));
}

TEST_CASE_METHOD(WindowFixture, "Changing head or layer re-renders from the same trace", "[ui][window]") {
    openGood();
    const auto trace = session->trace();
    QSignalSpy traced(session, &Session::traceReady);
    REQUIRE(layer->value() == 0);
    REQUIRE(head->value() == 0);
    const auto before = heatmap->map().values;

    head->setFocus();
    QTest::keyClick(head, Qt::Key_Up);
    REQUIRE(head->value() == 1);
    CHECK(mismatchedCells(*heatmap, trace->map(0, 0, 1)) == 0);
    CHECK(heatmap->map().values != before);

    layer->setValue(1);
    head->setValue(3);
    CHECK(mismatchedCells(*heatmap, trace->map(0, 1, 3)) == 0);

    QTest::qWait(20);
    CHECK(traced.count() == 0);        // no forward pass ran
    CHECK(session->trace() == trace);  // the very same trace
}

TEST_CASE_METHOD(WindowFixture, "Bad folders and ids show an error and the window stays usable", "[ui][window]") {
    openGood();
    const auto goodTrace = session->trace();

    SECTION("a folder that is not a model") {
        const fs::path empty = freshDir("ui-empty");
        QSignalSpy failed(session, &Session::failed);
        window.openModel(qpath(empty));
        REQUIRE(failed.wait(20000));
        const QString text = takeErrorDialog();
        CHECK(text.contains(qpath(empty)));
        CHECK(text.contains(QStringLiteral("config.json")));
        fs::remove_all(empty);
    }
    SECTION("a folder with a broken config.json") {
        const fs::path broken = freshDir("ui-broken");
        writeGpt2Folder(broken, makeGpt2(Gpt2Spec{}, 3));
        writeText(broken / "config.json", "{\"model_type\": \"gpt2\", \"n_layer\": ");
        QSignalSpy failed(session, &Session::failed);
        window.openModel(qpath(broken));
        REQUIRE(failed.wait(20000));
        CHECK(takeErrorDialog().contains(QStringLiteral("config.json")));
        fs::remove_all(broken);
    }
    SECTION("ids outside the vocabulary") {
        ids->clear();
        QTest::keyClicks(ids, QStringLiteral("1 99"));
        QTest::mouseClick(run, Qt::LeftButton);
        CHECK(takeErrorDialog().contains(QStringLiteral("'99'")));
    }
    SECTION("letters cannot be typed into the ids") {
        ids->clear();
        QTest::keyClicks(ids, QStringLiteral("1 a2"));
        CHECK(ids->text() == QStringLiteral("1 2"));
    }

    // The failed attempt changed nothing, and a good model opens and runs again.
    CHECK(session->trace() == goodTrace);
    CHECK(mismatchedCells(*heatmap, goodTrace->map(0, layer->value(), head->value())) == 0);
    ids->clear();
    QTest::keyClicks(ids, QStringLiteral("2 2 7"));
    openGood();
    CHECK(session->trace()->ids() == std::vector<std::int64_t>{2, 2, 7});
    CHECK(run->isEnabled());
}

TEST_CASE_METHOD(WindowFixture, "Cancel drops the running job's result", "[ui][window]") {
    openGood();
    const auto trace = session->trace();
    QSignalSpy traced(session, &Session::traceReady);
    QSignalSpy busy(session, &Session::busyChanged);
    ids->clear();
    QTest::keyClicks(ids, QStringLiteral("5 6"));
    QTest::mouseClick(run, Qt::LeftButton);
    REQUIRE(session->isBusy());
    QPushButton* cancel = window.findChild<QPushButton*>(QStringLiteral("cancelButton"));
    REQUIRE(cancel);
    QTest::mouseClick(cancel, Qt::LeftButton);
    CHECK_FALSE(session->isBusy());
    session->waitForWorkers();
    QTest::qWait(50);
    CHECK(traced.count() == 0);
    CHECK(session->trace() == trace);
    REQUIRE(busy.count() == 2);
    CHECK(busy.at(1).at(0).toBool() == false);
    CHECK(run->isEnabled());
}
