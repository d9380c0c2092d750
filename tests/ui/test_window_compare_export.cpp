// The Compare tab (three attention kinds side by side, entropy and KL from core's metrics) and
// the exports (figure dialog: PDF, SVG, PNG; map data: .npy, .csv), driven through the window.
#include "window_fixture.h"

#include "panels/exportdialog.h"
#include "figure/figure.h"
#include "figure/workspace.h"
#include "state/viewstate.h"

#include "attnscope/analysis/metrics.h"
#include "attnscope/models/model.h"
#include "gpt2_fixture.h"
#include "npy_read.h"

#include <qcustomplot.h>

#include <QAction>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QRegularExpression>
#include <QTableWidget>
#include <QXmlStreamReader>

#include <array>
#include <cmath>

namespace test_window_compare_export {

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

QByteArray slurp(const QString& path) {
    QFile f(path);
    REQUIRE(f.open(QIODevice::ReadOnly));
    return f.readAll();
}

// Maps of (block, layer, head) at t from an independent load and forward of each shipped kind
// on the text, encoded by each model's own tokenizer.
std::array<attnscope::HeadMap, 3> referenceMaps(const std::string& text, const std::string& block, int layer, int head,
                                                double t, const std::string& task = "reverse") {
    std::array<attnscope::HeadMap, 3> out;
    const char* kinds[] = {"dot", "additive", "linear"};
    attnscope::MapOptions options;
    options.temperature = t;
    for (int i = 0; i < 3; ++i) {
        const auto model = attnscope::Model::load("builtin:" + task + "-" + kinds[i]);
        const auto trace = model->forward(model->encodeText(text));
        out[std::size_t(i)] = trace->map(trace->blockIndex(block), layer, head, options);
    }
    return out;
}

void checkCompare(WindowFixture& w, const std::array<attnscope::HeadMap, 3>& ref) {
    ComparePanel* compare = w.window.compare();
    for (int i = 0; i < 3; ++i) {
        const bool shown =
                QTest::qWaitFor([&] { return mismatchedCells(*compare->view(i), ref[std::size_t(i)]) == 0; }, 20000);
        INFO("compare view " << i);
        REQUIRE(shown);
        const QString entropy = compare->findChild<QLabel*>(QStringLiteral("entropyLabel%1").arg(i))->text();
        CHECK(entropy.contains(QString::number(attnscope::meanRowEntropy(ref[std::size_t(i)]), 'f', 3)));
    }
    auto* kl = compare->findChild<QTableWidget*>(QStringLiteral("klTable"));
    REQUIRE(kl);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            CHECK(kl->item(i, j)->text().toDouble() ==
                  Approx(attnscope::meanRowKl(ref[std::size_t(i)], ref[std::size_t(j)])).margin(5e-4));
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "Compare shows the three kinds with entropy and KL from core",
                 "[ui][window][compare]") {
    // The shipped reverse models: dot, additive and linear attention on the same text.
    open(QStringLiteral("builtin:reverse-dot"));
    layer->setValue(1);
    head->setValue(1);
    window.tabs()->setCurrentWidget(window.compare());
    checkCompare(*this, referenceMaps("attention2026", "cross", 1, 1, 1.0));
    CHECK(window.compare()->task() == QStringLiteral("reverse"));

    // The temperature and the arrows act on all three.
    slider->setValue(TemperatureSlider::positionOf(2.0));
    const double t = controls->temperature()->temperature();
    checkCompare(*this, referenceMaps("attention2026", "cross", 1, 1, t));
    window.compare()->view(0)->plot()->setFocus();
    QTest::keyClick(window.compare()->view(0)->plot(), Qt::Key_Left);
    CHECK(head->value() == 0);
    checkCompare(*this, referenceMaps("attention2026", "cross", 1, 0, t));

    // A new input runs through the three models again; another block follows the window's.
    window.tabs()->setCurrentIndex(0);
    runText(QStringLiteral("hello42"));
    controls->blockCombo()->setCurrentText(QStringLiteral("encoder"));
    window.tabs()->setCurrentWidget(window.compare());
    checkCompare(*this, referenceMaps("hello42", "encoder", 1, 0, t));

    // Another task from the panel's own choice: the sentiment models on their example text.
    auto* task = window.compare()->findChild<QComboBox*>(QStringLiteral("compareTaskCombo"));
    task->setCurrentText(QStringLiteral("sentiment"));
    emit task->activated(task->currentIndex());  // as a user's pick
    checkCompare(
            *this,
            referenceMaps(MainWindow::exampleInput(QStringLiteral("builtin:sentiment-dot"), true, 0, 0).toStdString(),
                          "self", 1, 0, t, "sentiment"));
    CHECK(window.compare()->lastRun().specs[2] == QStringLiteral("builtin:sentiment-linear"));

    // Its figure: three panels side by side.
    const Figure figure = window.currentFigure();
    REQUIRE(figure.panels.size() == 3);
    CHECK(figure.panels[1].title.startsWith(QStringLiteral("sentiment-additive")));
}

TEST_CASE_METHOD(WindowFixture, "Compare forces the window's target on the three decoders",
                 "[ui][window][compare][seq2seq]") {
    open(QStringLiteral("builtin:reverse-dot"));
    layer->setValue(1);
    controls->targetInput()->setText(QStringLiteral("zzz1x"));
    runText(QStringLiteral("kq83mz0a"));
    window.tabs()->setCurrentWidget(window.compare());
    // Independent forced forwards of the same pair through each kind.
    std::array<attnscope::HeadMap, 3> ref;
    const char* kinds[] = {"dot", "additive", "linear"};
    for (int i = 0; i < 3; ++i) {
        const auto model = attnscope::Model::load(std::string("builtin:reverse-") + kinds[i]);
        attnscope::TextInput in;
        in.ids = model->encodeText("kq83mz0a");
        in.targetIds = model->encodeTarget("zzz1x");
        const auto trace = model->forwardText(in);
        ref[std::size_t(i)] = trace->map(trace->blockIndex("cross"), 1, 0);
    }
    checkCompare(*this, ref);
    for (const auto& trace : window.compare()->lastRun().traces) {
        REQUIRE(trace);
        CHECK(trace->blocks()[std::size_t(trace->blockIndex("cross"))].queryTokens ==
              std::vector<std::string>{"<s>", "z", "z", "z", "1", "x"});
    }
}

TEST_CASE_METHOD(WindowFixture, "Export figure writes PDF, SVG and PNG of the shown map", "[ui][window][export]") {
    openStandIn();
    const fs::path dir = freshDir("ui-export");
    const QString pdf = qpath(dir / "map.pdf"), svg = qpath(dir / "map.svg"), png = qpath(dir / "map.png");
    const double heightPt = figureSizePoints(window.currentFigure()).height();

    SECTION("PDF, one column") {
        ExportDialog* dialog = openExportDialog(*this);
        dialog->setPath(pdf);
        dialog->setWidthInches(ExportDialog::kOneColumnIn);
        CHECK(dialog->findChild<QComboBox*>(QStringLiteral("widthPreset"))->currentIndex() == 0);
        clickSave(dialog);
        REQUIRE(QFile::exists(pdf));
        const QByteArray bytes = slurp(pdf);
        CHECK(bytes.startsWith("%PDF-"));
        const auto box = QRegularExpression(QStringLiteral("/MediaBox \\[0 0 ([0-9.]+) ([0-9.]+)\\]"))
                                 .match(QString::fromLatin1(bytes));
        REQUIRE(box.hasMatch());
        CHECK(box.captured(1).toDouble() == Approx(3.25 * 72));
        CHECK(box.captured(2).toDouble() == Approx(heightPt));
        CHECK(bytes.contains("/FontFile2"));             // the font is embedded
        CHECK(bytes.contains("/ToUnicode"));             // and the labels stay text
        CHECK_FALSE(bytes.contains("/Subtype /Image"));  // cells are vector rectangles
        CHECK(QTest::qWaitFor([&] { return !window.findChild<ExportDialog*>(QStringLiteral("exportDialog")); }));
    }
    SECTION("SVG, two columns") {
        ExportDialog* dialog = openExportDialog(*this);
        dialog->setPath(svg);
        dialog->setWidthInches(ExportDialog::kTwoColumnIn);
        clickSave(dialog);
        QFile file(svg);
        REQUIRE(file.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&file);
        REQUIRE(xml.readNextStartElement());
        CHECK(xml.name() == QLatin1String("svg"));
        CHECK(xml.attributes().value(QLatin1String("width")).toString() == QStringLiteral("171.45mm"));
        QStringList texts;
        while (!xml.atEnd()) {
            if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("text"))
                texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
        }
        CHECK_FALSE(xml.hasError());
        CHECK(texts.contains(QStringLiteral("t7")));  // token labels as text
        CHECK(texts.contains(QStringLiteral("query")));
    }
    SECTION("PNG, custom width and dpi") {
        ExportDialog* dialog = openExportDialog(*this);
        dialog->setPath(png);
        dialog->setWidthInches(4.0);
        CHECK(dialog->findChild<QComboBox*>(QStringLiteral("widthPreset"))->currentText() == QStringLiteral("Custom"));
        dialog->setDpi(200);
        clickSave(dialog);
        QImage image;
        REQUIRE(image.load(png));
        CHECK(image.width() == 800);  // 4 in x 200 dpi
        Figure four = window.currentFigure();
        four.widthIn = 4.0;
        CHECK(image.height() == std::lround(figureSizePoints(four).height() / 72 * 200));
        CHECK(image.dotsPerMeterX() == std::lround(200 / 0.0254));
        CHECK(image.dotsPerMeterY() == std::lround(200 / 0.0254));
    }
    SECTION("a folder that does not exist: the dialog says so and stays open") {
        ExportDialog* dialog = openExportDialog(*this);
        const QString bad = qpath(dir / "missing" / "map.pdf");
        dialog->setPath(bad);
        clickSave(dialog);
        auto* error = dialog->findChild<QLabel*>(QStringLiteral("exportError"));
        CHECK(error->isVisible());
        CHECK(error->text().contains(bad));
        CHECK(window.findChild<ExportDialog*>(QStringLiteral("exportDialog")) == dialog);
        dialog->close();
    }
    fs::remove_all(dir);
}

TEST_CASE_METHOD(WindowFixture, "The figure's width and dpi are the state's: a workspace's reach File > Export",
                 "[ui][window][export][workspace]") {
    openStandIn();
    const fs::path dir = freshDir("ui-export-settings");
    const QString file = qpath(dir / "w.attnscope");
    REQUIRE(window.saveWorkspaceFile(file));
    Workspace ws = readWorkspace(file);
    ws.figure = {5.0, 150};
    writeWorkspace(ws, file);
    QSignalSpy restored(&window, &MainWindow::workspaceRestored);
    REQUIRE(window.openWorkspaceFile(file));
    REQUIRE(restored.wait(30000));
    CHECK(window.state()->tabSettings().figure.widthIn == Approx(5.0));
    CHECK(window.state()->tabSettings().figure.dpi == 150);

    ExportDialog* dialog = openExportDialog(*this);  // starts at the workspace's width and dpi
    CHECK(dialog->widthInches() == Approx(5.0));
    CHECK(dialog->dpi() == 150);
    // What the user exports with becomes the state's, and a saved workspace's.
    dialog->setPath(qpath(dir / "map.png"));
    dialog->setWidthInches(4.0);
    dialog->setDpi(120);
    clickSave(dialog);
    QImage image;
    REQUIRE(image.load(qpath(dir / "map.png")));
    CHECK(image.width() == 480);  // 4 in x 120 dpi
    CHECK(window.state()->tabSettings().figure.widthIn == Approx(4.0));
    CHECK(window.state()->tabSettings().figure.dpi == 120);
    CHECK(window.currentWorkspace().figure.dpi == 120);
    fs::remove_all(dir);
}

TEST_CASE_METHOD(WindowFixture, "Export dialogs start in the folder the last export went to",
                 "[ui][window][export][recent]") {
    openStandIn();
    const fs::path dir = freshDir("ui-export-folder");
    ExportDialog* dialog = openExportDialog(*this);
    CHECK(QFileInfo(dialog->path()).absolutePath() != QFileInfo(qpath(dir)).absoluteFilePath());
    dialog->setPath(qpath(dir / "map.png"));
    clickSave(dialog);
    REQUIRE(QFile::exists(qpath(dir / "map.png")));
    REQUIRE(QTest::qWaitFor([&] { return !window.findChild<ExportDialog*>(QStringLiteral("exportDialog")); }));
    // File > Export figure… again: in that folder.
    window.findChild<QAction*>(QStringLiteral("exportFigureAction"))->trigger();
    REQUIRE(QTest::qWaitFor(
            [&] { return (dialog = window.findChild<ExportDialog*>(QStringLiteral("exportDialog"))) != nullptr; },
            5000));
    CHECK(QFileInfo(dialog->path()).absolutePath() == QFileInfo(qpath(dir)).absoluteFilePath());
    dialog->close();
    // File > Export map data…: there too, and the data's folder is remembered as well.
    QFileDialog* files = nullptr;
    window.exportMapData();
    REQUIRE(QTest::qWaitFor(
            [&] { return (files = window.findChild<QFileDialog*>(QStringLiteral("exportDataDialog"))) != nullptr; },
            5000));
    CHECK(files->directory().absolutePath() == QFileInfo(qpath(dir)).absoluteFilePath());
    files->reject();
    fs::remove_all(dir);
}

TEST_CASE_METHOD(WindowFixture, "Export map data writes the shown map as .npy and .csv", "[ui][window][export]") {
    openStandIn();
    runText(QStringLiteral("4 5 6"));
    slider->setValue(TemperatureSlider::positionOf(0.5));
    const attnscope::HeadMap expected = session->trace()->map(0, 0, 0, [] {
        attnscope::MapOptions o;
        o.temperature = TemperatureSlider::temperatureAt(TemperatureSlider::positionOf(0.5));
        return o;
    }());
    waitForMap(expected);
    const fs::path dir = freshDir("ui-data");

    // Through File > Export map data…'s file dialog.
    window.exportMapData();
    QFileDialog* files = nullptr;
    REQUIRE(QTest::qWaitFor(
            [&] { return (files = window.findChild<QFileDialog*>(QStringLiteral("exportDataDialog"))); }, 5000));
    files->selectFile(qpath(dir / "map.npy"));
    QMetaObject::invokeMethod(files, "accept");  // Save, as a click on the button would
    const NpyArray npy = readNpy(dir / "map.npy");
    CHECK(npy.shape == std::vector<std::int64_t>{3, 3});
    CHECK(npy.values == expected.values);

    REQUIRE(window.writeCurrentMapData(qpath(dir / "map.csv")));
    const QStringList lines =
            QString::fromUtf8(slurp(qpath(dir / "map.csv"))).split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == QStringLiteral("query\\key,t4,t5,t6"));
    for (int q = 0; q < 3; ++q) {
        const QStringList cells = lines[q + 1].split(QLatin1Char(','));
        REQUIRE(cells.size() == 4);
        CHECK(cells[0] == QStringLiteral("t%1").arg(4 + q));
        for (int k = 0; k < 3; ++k) CHECK(cells[k + 1].toFloat() == expected.at(q, k));
    }

    // An unknown extension is refused with a message naming it.
    CHECK_FALSE(window.writeCurrentMapData(qpath(dir / "map.xlsx")));
    CHECK(takeErrorDialog().contains(QStringLiteral("map.xlsx")));
    fs::remove_all(dir);
}

}  // namespace test_window_compare_export
