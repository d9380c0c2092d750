// The helpers of window_fixture.h that need QCustomPlot's or the dialogs' headers.
#include "window_fixture.h"

#include "figure/colormaps.h"
#include "panels/exportdialog.h"

#include <qcustomplot.h>

#include <QDialogButtonBox>
#include <QEventLoop>
#include <QTimer>

namespace uitest {

QImage thumbnailImage(const attnscope::HeadMap& m, const ControlPanel* controls) {
    return pooledImage({m.cols, m.rows, std::vector<double>(m.values.begin(), m.values.end())}, controls->colormap(),
                       controls->colorScale());
}

bool waitTimed(const std::function<bool()>& done, int timeoutMs) {
    if (done()) return true;
    QEventLoop loop;
    QTimer tick, deadline;
    QObject::connect(&tick, &QTimer::timeout, &loop, [&] {
        if (done()) loop.quit();
    });
    QObject::connect(&deadline, &QTimer::timeout, &loop, &QEventLoop::quit);
    tick.start(1);
    deadline.setSingleShot(true);
    deadline.start(timeoutMs);
    loop.exec();
    return done();
}

ExportDialog* openExportDialog(WindowFixture& w) {
    QTest::keyClick(&w.window, Qt::Key_E, Qt::ControlModifier);  // File > Export figure…
    ExportDialog* dialog = nullptr;
    REQUIRE(QTest::qWaitFor(
            [&] { return (dialog = w.window.findChild<ExportDialog*>(QStringLiteral("exportDialog"))); }, 5000));
    return dialog;
}

void clickSave(ExportDialog* dialog) {
    auto* buttons = dialog->findChild<QDialogButtonBox*>(QStringLiteral("exportButtons"));
    QTest::mouseClick(buttons->button(QDialogButtonBox::Save), Qt::LeftButton);
}

void runPair(WindowFixture& w, const QString& source, const QString& target) {
    w.input->clear();
    QTest::keyClicks(w.input, source);
    w.controls->targetInput()->clear();
    QTest::keyClicks(w.controls->targetInput(), target);
    QSignalSpy traced(w.session, &Session::traceReady);
    QTest::mouseClick(w.run, Qt::LeftButton);
    REQUIRE(traced.wait(20000));
}

int mismatchedCells(const HeatmapView& view, const attnscope::HeadMap& expected) {
    QCPColorMapData* data = view.colorMap()->data();
    if (view.map().rows != expected.rows || view.map().cols != expected.cols) return -1;
    // A long map draws level-of-detail bins (test_long_map.cpp checks them); its cells are the map's.
    if (view.usesLevelOfDetail()) return view.map().values == expected.values ? 0 : 1;
    if (data->keySize() != expected.cols || data->valueSize() != expected.rows) return -1;
    int bad = 0;
    for (int q = 0; q < expected.rows; ++q)
        for (int k = 0; k < expected.cols; ++k)
            if (data->cell(k, q) != double(expected.at(q, k)) || view.map().at(q, k) != expected.at(q, k)) ++bad;
    return bad;
}

}  // namespace uitest
