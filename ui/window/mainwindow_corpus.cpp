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
    connect(corpus_, &CorpusPanel::runRequested, this, [this](const QString& data, const QString& out) {
        if (!session_->model()) {
            showError(tr("No model is open."), tr("Open the model to run the corpus through first."));
            return;
        }
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
