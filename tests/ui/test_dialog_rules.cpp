// The GUI's dialogs under core's input and output rules (issue 37): what a file dialog picks is
// opened only when it is a regular file, and written only when it is a regular file, a link to
// one or a new path. A FIFO, a device or a folder is refused with the window's error dialog (or
// the export dialog's error line) naming the path, and is left as it was. Special files are made
// in the test's own folder only (a FIFO with mkfifo; as root a node of /dev/null's kind);
// /dev/null and /dev/zero themselves are only read.
#include "window_fixture.h"

#include "controllers/longcontroller.h"
#include "panels/corpuspanel.h"
#include "panels/exportdialog.h"
#include "panels/longpanel.h"
#include "gpt2_fixture.h"
#include "special_files.h"

#include <QFileDialog>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>

namespace test_dialog_rules {

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

QString qpath(const fs::path& p) { return QString::fromStdString(p.string()); }

// The file dialog named name, once it shows; then its choice, as a click on Open or Save would.
void chooseInDialog(WindowFixture& f, const QString& name, const fs::path& choice) {
    QFileDialog* dialog = nullptr;
    REQUIRE(QTest::qWaitFor([&] { return (dialog = f.window.findChild<QFileDialog*>(name)) != nullptr; }, 5000));
    emit dialog->fileSelected(qpath(choice));
    dialog->close();
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "GUI open dialogs refuse FIFOs, devices and folders with the error dialog",
                 "[ui][rules][dialogs]") {
    const fs::path dir = freshDir("ui-dialog-rules-in");
    const fs::path pipe = dir / "pipe.txt";
    REQUIRE(makeFifo(pipe));
    const FifoUnblocker unblock(pipe);  // without the rule an open would wait forever
    open(QStringLiteral("builtin:sentiment-dot"));

    // Long context > Haystack from file…: a FIFO, /dev/zero (endless) and a folder.
    LongController* longTab = window.longContext();
    QPlainTextEdit* haystack = longTab->panel()->haystackEdit();
    haystack->setPlainText(QStringLiteral("kept"));
    longTab->chooseHaystackFile();
    chooseInDialog(*this, QStringLiteral("haystackFileDialog"), pipe);
    CHECK(takeErrorDialog().contains(qpath(pipe) + QStringLiteral(": not a regular file")));
    for (const fs::path& bad : {fs::path("/dev/zero"), dir}) {
        CHECK_FALSE(longTab->loadHaystackFile(qpath(bad)));
        CHECK(takeErrorDialog().contains(qpath(bad) + QStringLiteral(": not a regular file")));
    }
    CHECK(haystack->toPlainText() == QStringLiteral("kept"));
    writeText(dir / "hay.txt", "one two three");
    CHECK(longTab->loadHaystackFile(qpath(dir / "hay.txt")));
    CHECK(haystack->toPlainText() == QStringLiteral("one two three"));

    // Corpus > Run on a file…: the corpus file a FIFO or /dev/null, the results folder a file.
    CorpusPanel* corpus = window.corpus();
    for (const fs::path& bad : {pipe, fs::path("/dev/null")}) {
        emit corpus->runRequested(qpath(bad), qpath(dir / "out"));
        CHECK(takeErrorDialog().contains(qpath(bad) + QStringLiteral(": not a regular file")));
        CHECK(corpus->findChild<QPushButton*>(QStringLiteral("corpusRunButton"))->isEnabled());  // nothing started
        CHECK_FALSE(fs::exists(dir / "out"));
    }
    writeText(dir / "c.txt", "good\n");
    emit corpus->runRequested(qpath(dir / "c.txt"), qpath(dir / "hay.txt"));
    CHECK(takeErrorDialog().contains(qpath(dir / "hay.txt") + QStringLiteral(": not a folder")));
    CHECK(corpus->findChild<QPushButton*>(QStringLiteral("corpusRunButton"))->isEnabled());

    // File > Open Workspace…: a FIFO and a device.
    window.findChild<QAction*>(QStringLiteral("openWorkspaceAction"))->trigger();
    chooseInDialog(*this, QStringLiteral("openWorkspaceDialog"), pipe);
    CHECK(takeErrorDialog().contains(qpath(pipe) + QStringLiteral(": not a regular file")));
    CHECK_FALSE(window.openWorkspaceFile(QStringLiteral("/dev/null")));
    CHECK(takeErrorDialog().contains(QStringLiteral("/dev/null: not a regular file")));

    // Image > Open Image…: a FIFO.
    CHECK_FALSE(window.setImageFile(qpath(pipe)));
    const QString imageError = takeErrorDialog();
    CHECK(imageError.contains(qpath(pipe)));
    CHECK(imageError.contains(QStringLiteral("not a regular file")));
    CHECK(isFifo(pipe));
    fs::remove_all(dir);
}

TEST_CASE_METHOD(WindowFixture, "GUI save dialogs refuse FIFOs, devices and folders and leave them as they were",
                 "[ui][rules][dialogs]") {
    const fs::path dir = freshDir("ui-dialog-rules-out");
    REQUIRE(makeFifo(dir / "pipe.attnscope"));
    REQUIRE(makeFifo(dir / "pipe.csv"));
    REQUIRE(makeFifo(dir / "pipe.png"));
    fs::create_directories(dir / "folder.attnscope");
    const bool root = makeCharDevice(dir / "null.attnscope", 1, 3);  // what replaced /dev/null itself
    open(QStringLiteral("builtin:sentiment-dot"));

    // File > Save Workspace…
    window.findChild<QAction*>(QStringLiteral("saveWorkspaceAction"))->trigger();
    chooseInDialog(*this, QStringLiteral("saveWorkspaceDialog"), dir / "pipe.attnscope");
    CHECK(takeErrorDialog().contains(qpath(dir / "pipe.attnscope") + QStringLiteral(": not a regular file")));
    CHECK(isFifo(dir / "pipe.attnscope"));
    CHECK_FALSE(window.saveWorkspaceFile(qpath(dir / "folder.attnscope")));
    CHECK(takeErrorDialog().contains(qpath(dir / "folder.attnscope") + QStringLiteral(": not a regular file")));
    CHECK(fs::is_directory(dir / "folder.attnscope"));
    if (root) {
        CHECK_FALSE(window.saveWorkspaceFile(qpath(dir / "null.attnscope")));
        CHECK(takeErrorDialog().contains(qpath(dir / "null.attnscope") + QStringLiteral(": not a regular file")));
        CHECK(isCharDevice(dir / "null.attnscope"));
    }

    // File > Export map data…
    window.exportMapData();
    chooseInDialog(*this, QStringLiteral("exportDataDialog"), dir / "pipe.csv");
    CHECK(takeErrorDialog().contains(qpath(dir / "pipe.csv") + QStringLiteral(": not a regular file")));
    CHECK(isFifo(dir / "pipe.csv"));

    // File > Export figure…: the dialog's own error line, the dialog stays open.
    window.findChild<QAction*>(QStringLiteral("exportFigureAction"))->trigger();
    ExportDialog* exportDialog = nullptr;
    REQUIRE(QTest::qWaitFor(
            [&] { return (exportDialog = window.findChild<ExportDialog*>(QStringLiteral("exportDialog"))) != nullptr; },
            5000));
    exportDialog->setPath(qpath(dir / "pipe.png"));
    clickSave(exportDialog);
    auto* error = exportDialog->findChild<QLabel*>(QStringLiteral("exportError"));
    REQUIRE(error);
    CHECK(error->text() == qpath(dir / "pipe.png") + QStringLiteral(": not a regular file"));
    CHECK(isFifo(dir / "pipe.png"));
    exportDialog->close();
    fs::remove_all(dir);
}

}  // namespace test_dialog_rules
