// MainWindow, continued: the Corpus tab. The panel shows corpus results and runs corpora on the
// open model; the window answers its requests (file dialogs, the model) and shows a clicked head
// on the chosen example in the Explore tab.
#include "window/mainwindow.h"

#include "panels/controlpanel.h"
#include "panels/corpuspanel.h"
#include "services/session.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QStatusBar>
#include <QTabWidget>

void MainWindow::buildCorpus() {
    corpus_ = new CorpusPanel;
    tabs_->addTab(corpus_, tr("C&orpus"));
    connect(corpus_, &CorpusPanel::openRequested, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open corpus result folder"));
        if (!dir.isEmpty()) openCorpusResult(dir);
    });
    connect(corpus_, &CorpusPanel::runRequested, this, [this] {
        if (!session_->model()) {
            showError(tr("No model is open."), tr("Open the model to run the corpus through first."));
            return;
        }
        const QString data = QFileDialog::getOpenFileName(this, tr("Corpus file (one example per line)"), QString(),
                                                          tr("Corpus files (*.txt *.jsonl *.json);;All files (*)"));
        if (data.isEmpty()) return;
        // The result goes beside the file, named after it: running the same file again resumes.
        const QFileInfo info(data);
        const QString out = info.dir().filePath(info.completeBaseName() + QStringLiteral("-corpus"));
        corpus_->runCorpus(session_->model(), session_->modelSpec(), data, out);
        statusBar()->showMessage(tr("Corpus results go to %1").arg(out), 8000);
    });
    connect(corpus_, &CorpusPanel::headChosen, this,
            [this](const QString& block, int layer, int head, const QString& text) {
                if (!text.isEmpty() && session_->model()) {
                    controls_->input()->setText(text);
                    runInput();
                }
                selectHead(block, layer, head);
                tabs_->setCurrentIndex(0);
            });
}

bool MainWindow::openCorpusResult(const QString& dir) {
    const bool ok = corpus_->openResult(dir);
    if (ok) tabs_->setCurrentWidget(corpus_);
    return ok;
}
