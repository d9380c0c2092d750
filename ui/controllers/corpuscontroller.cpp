#include "controllers/corpuscontroller.h"

#include "panels/corpuspanel.h"
#include "services/corpusservice.h"
#include "services/session.h"
#include "state/recentfiles.h"

#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"

#include <QFile>
#include <QFileInfo>

CorpusController::CorpusController(Session* session, QObject* parent)
    : QObject(parent), session_(session), panel_(new CorpusPanel), service_(new CorpusService(this)) {
    connect(panel_, &CorpusPanel::runRequested, this, &CorpusController::run);
    connect(panel_, &CorpusPanel::cancelRequested, service_, &CorpusService::stop);
    connect(service_, &CorpusService::progress, panel_,
            [this](const CorpusProgress& p) { panel_->showProgress(p.phase, p.done, p.total, p.rate); });
    connect(service_, &CorpusService::finished, panel_, [this](const CorpusRunResult& r) {
        panel_->endRun(r.cancelled ? tr("Cancelled; run again on the same folder to resume.") : r.error);
    });
    connect(session_, &Session::modelLoaded, this, &CorpusController::onModelChanged);
    connect(session_, &Session::attentionFileLoaded, this, &CorpusController::onModelChanged);
}

CorpusController::~CorpusController() { shutdown(); }

void CorpusController::shutdown() {
    service_->cancelAll();
    service_->waitForWorkers();
}

void CorpusController::run(const QString& data, const QString& outDir) {
    if (!session_->model()) {
        emit failed(tr("No model is open."), tr("Open the model to run the corpus through first."));
        return;
    }
    if (service_->isRunning()) return;
    // The dialogs' choices under core's input rule, before anything starts: a FIFO would hang the
    // examples' read, /dev/zero read without end; the results folder must be a folder.
    try {
        attnscope::refuseNonRegularFile(QFile::encodeName(data).toStdString());
    } catch (const attnscope::Error& e) {
        emit failed(tr("Cannot run the corpus."), QString::fromUtf8(e.what()));
        return;
    }
    if (QFileInfo(outDir).exists() && !QFileInfo(outDir).isDir()) {
        emit failed(tr("Cannot run the corpus."), tr("%1: not a folder (the results go into a folder)").arg(outDir));
        return;
    }
    recent::rememberFolder(QStringLiteral("corpus"), data);
    panel_->beginRun(session_->modelSpec(), data, outDir);
    service_->run(session_->model(), data, outDir);
    emit status(tr("Corpus results go to %1").arg(outDir), 8000);
}

// The old model's run is dropped (the folder keeps what it wrote, and resumes on that model).
void CorpusController::onModelChanged() {
    if (!service_->isRunning()) return;
    service_->cancelAll();
    panel_->endRun(tr("The model changed, so the corpus run stopped; open that model and run again on the same "
                      "folder to resume."));
}
