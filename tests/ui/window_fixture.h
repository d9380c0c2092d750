// The real window for ui tests: created, shown on the offscreen platform, driven like a user.
// The destructor waits for every worker, so no job outlives a test.
#pragma once

#include "builtin_fixture.h"
#include "panels/comparepanel.h"
#include "panels/controlpanel.h"
#include "views/heatmapview.h"
#include "window/mainwindow.h"
#include "views/overviewgrid.h"
#include "services/session.h"
#include "views/temperatureslider.h"

#include "attnscope/attention/trace.h"

#include <catch2/catch.hpp>

#include <QCheckBox>
#include <QFile>
#include <QComboBox>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

class ExportDialog;

namespace uitest {

// Map options at display temperature t (the tests' "the same head at T = t").
inline attnscope::MapOptions at(double t) {
    attnscope::MapOptions o;
    o.temperature = t;
    return o;
}

inline QString qpath(const std::filesystem::path& p) { return QString::fromStdString(p.string()); }
// A written file's bytes (figures compared byte for byte).
inline QByteArray fileBytes(const std::filesystem::path& p) {
    QFile f(qpath(p));
    REQUIRE(f.open(QIODevice::ReadOnly));
    return f.readAll();
}

inline QStringList toQt(const std::vector<std::string>& v) {
    QStringList out;
    for (const auto& s : v) out << QString::fromStdString(s);
    return out;
}

// Whether two images show the same pixels, whatever their formats.
inline bool sameImage(const QImage& a, const QImage& b) {
    return a.size() == b.size() && a.convertToFormat(QImage::Format_RGB32) == b.convertToFormat(QImage::Format_RGB32);
}

// The overview's thumbnail of a pooled map, in the controls' colour map and scale.
QImage thumbnailImage(const attnscope::HeadMap& m, const ControlPanel* controls);

// Like QTest::qWaitFor, for timings: the predicate is checked every millisecond from a running
// event loop. (qWaitFor sleeps 10 ms between its checks, and while it sleeps no queued call,
// job result or replot moves on, which the window's own event loop would not do.)
bool waitTimed(const std::function<bool()>& done, int timeoutMs);

// Cells where the view's colour map differs from expected (exact: floats stored as doubles);
// -1 when the sizes differ. In window_fixture.cpp, so that the test files need not parse QCustomPlot.
int mismatchedCells(const HeatmapView& view, const attnscope::HeadMap& expected);

struct WindowFixture {
    MainWindow window;
    Session* session = window.session();
    ControlPanel* controls = window.controls();
    QLineEdit* input = controls->input();
    QPushButton* run = controls->runButton();
    QSpinBox* layer = controls->layerSpin();
    QSpinBox* head = controls->headSpin();
    QSlider* slider = controls->temperature()->slider();
    HeatmapView* heatmap = window.heatmap();
    OverviewGrid* overview = window.overview();

    WindowFixture() {
        window.show();
        REQUIRE(QTest::qWaitForWindowExposed(&window));
    }
    ~WindowFixture() {
        session->cancel();
        session->waitForWorkers();
        window.maps()->waitForWorkers();
        window.compare()->session()->waitForWorkers();
        QTest::qWait(10);  // deliver (and drop) queued results before the window goes
    }

    // Opens an image (or image–text) model and gives it `picture`: waits for the load, then for
    // the run the image starts.
    void openWithImage(const QString& model, const QString& picture, int timeoutMs = 20000) {
        QSignalSpy loaded(session, &Session::modelLoaded);
        window.openModel(model);
        REQUIRE(loaded.wait(timeoutMs));
        QSignalSpy traced(session, &Session::traceReady);
        REQUIRE(window.setImageFile(picture));
        REQUIRE(traced.wait(timeoutMs));
    }

    // Opens spec and waits for the load and the example run that follows, and its map.
    void open(const QString& spec) {
        QSignalSpy loaded(session, &Session::modelLoaded);
        QSignalSpy traced(session, &Session::traceReady);
        window.openModel(spec);
        REQUIRE(loaded.wait(20000));
        REQUIRE(QTest::qWaitFor([&] { return traced.count() > 0; }, 20000));
        REQUIRE(session->trace());
        // The block the window shows (built-in encoder-decoders start on cross-attention).
        REQUIRE(QTest::qWaitFor([&] { return controls->blockCombo()->currentIndex() >= 0; }, 20000));
        waitForMap(session->trace()->map(controls->blockCombo()->currentIndex(), layer->value(), head->value()));
    }

    // Opens the GPT-2 stand-in folder (builtin_fixture.h).
    void openStandIn() { open(qpath(attnscope::testing::standInModel())); }

    // Waits until the heat map shows exactly `expected`.
    void waitForMap(const attnscope::HeadMap& expected) {
        const bool shown = QTest::qWaitFor([&] { return mismatchedCells(*heatmap, expected) == 0; }, 20000);
        INFO("heat map " << heatmap->map().rows << "x" << heatmap->map().cols);
        REQUIRE(shown);
    }

    // Types into the input box and clicks Run; waits for the new trace.
    void runText(const QString& text) {
        input->clear();
        QTest::keyClicks(input, text);
        REQUIRE(input->text() == text);
        QSignalSpy traced(session, &Session::traceReady);
        REQUIRE(run->isEnabled());
        QTest::mouseClick(run, Qt::LeftButton);
        REQUIRE(traced.wait(20000));
    }

    // Waits for the error dialog, returns "text\ninformative text" and closes it.
    QString takeErrorDialog() {
        QMessageBox* box = nullptr;
        const bool shown = QTest::qWaitFor(
                [&] { return (box = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"))); }, 20000);
        REQUIRE(shown);
        CHECK(box->isVisible());
        CHECK(box->windowModality() == Qt::NonModal);  // the window stays usable
        const QString text = box->text() + QLatin1Char('\n') + box->informativeText();
        box->close();
        REQUIRE(QTest::qWaitFor([&] { return !window.findChild<QMessageBox*>(QStringLiteral("errorDialog")); }));
        return text;
    }
};

// File > Export figure… (Ctrl+E): the export dialog, once it shows.
ExportDialog* openExportDialog(WindowFixture& w);
// Clicks the export dialog's Save.
void clickSave(ExportDialog* dialog);
// Types an encoder-decoder's source and target and clicks Run; waits for the new trace.
void runPair(WindowFixture& w, const QString& source, const QString& target);

}  // namespace uitest
