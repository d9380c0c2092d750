// MainWindow, continued: attention files. File > Open Attention File… (or `attnscope F.npy`)
// reads a .npy of maps, e.g. saved from Hugging Face's output_attentions, with an optional
// tokens JSON (core: attention_file.h). The maps replace the model: the overview, the heat map,
// the metrics, rollout and export work from them; what needs the model's Q and K (the lab's
// variants and fit, temperature inside the model, head masking, running an input) is switched
// off with a line saying why. The display temperature stays: softmax(log A / T) of the stored
// probabilities equals softmax(logits / T).
#include "window/mainwindow.h"

#include "state/recentfiles.h"
#include "state/viewstate.h"

#include "panels/controlpanel.h"
#include "panels/labpanel.h"
#include "services/session.h"
#include "views/heatmapview.h"
#include "views/temperatureslider.h"
#include "controllers/labcontroller.h"

#include "attnscope/attention/attention_file.h"
#include "attnscope/attention/trace.h"

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QStatusBar>

namespace {

QString whyOff(const QString& file) {
    return QObject::tr("The maps were read from %1, which holds no queries and keys: this needs the model.")
            .arg(QFileInfo(file).fileName());
}

}  // namespace

QAction* MainWindow::makeAttentionFileAction() {
    auto* action = new QAction(tr("Open &Attention File (.npy)…"), this);
    action->setObjectName(QStringLiteral("openAttentionFileAction"));
    action->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    action->setToolTip(tr("Attention maps saved from Python: [layers, heads, n, n] or [heads, n, n], "
                          "with an optional tokens JSON"));
    connect(action, &QAction::triggered, this, &MainWindow::openAttentionFileDialog);
    return action;
}

void MainWindow::buildAttentionFile() {
    connect(session_, &Session::attentionFileLoaded, this, &MainWindow::onAttentionFileLoaded);
    connect(session_, &Session::modelLoaded, this, [this] { setMapsOnly(QString()); });
}

void MainWindow::openAttentionFileDialog() {
    auto* dialog = new QFileDialog(this, tr("Open Attention File: the .npy and, optionally, its tokens JSON"));
    dialog->setObjectName(QStringLiteral("openAttentionDialog"));
    dialog->setFileMode(QFileDialog::ExistingFiles);
    dialog->setNameFilters({tr("Attention maps and tokens (*.npy *.json)"), tr("All files (*)")});
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setDirectory(recent::lastFolder(QStringLiteral("attention")));
    connect(dialog, &QFileDialog::filesSelected, this, [this](const QStringList& files) {
        if (!files.isEmpty()) recent::rememberFolder(QStringLiteral("attention"), files.first());
        QString npy, tokens;
        for (const QString& f : files) (f.endsWith(QLatin1String(".json"), Qt::CaseInsensitive) ? tokens : npy) = f;
        if (npy.isEmpty())
            showError(tr("No attention file chosen."), tr("Choose a .npy file (and, optionally, its tokens JSON)."));
        else
            openAttentionFile(npy, tokens);
    });
    dialog->open();
}

void MainWindow::openAttentionFile(const QString& npy, const QString& tokens) {
    QString labels = tokens;
    if (labels.isEmpty()) labels = QString::fromStdString(attnscope::tokensBeside(npy.toStdString()).string());
    pendingSpec_ = npy;
    statusBar()->showMessage(tr("Opening %1…").arg(QDir::toNativeSeparators(npy)));
    session_->openAttentionFile(npy, labels);
}

void MainWindow::onAttentionFileLoaded(const QString& npy) {
    pendingSpec_.clear();
    shownBlock_ = -1;
    state_->setModel(npy);  // maps only: the old model's state goes as on a model change
    const auto trace = session_->trace();
    const auto& block = trace->blocks().front();
    setWindowTitle(tr("AttnScope — %1").arg(QFileInfo(npy).fileName()));
    controls_->modelLabel()->setText(
            tr("<b>Attention file</b> %1 · %2 layers × %3 heads · %4 tokens<br>"
               "Maps only: the temperature rescales the stored probabilities, softmax(log A / T); "
               "the lab, temperature inside the model and head masking need the model's Q and K.")
                    .arg(QFileInfo(npy).fileName().toHtmlEscaped())
                    .arg(block.layers)
                    .arg(block.heads)
                    .arg(block.queryTokens.size()));
    controls_->modelLabel()->setToolTip(QDir::toNativeSeparators(npy));
    controls_->setImageInput(false);  // the previous model's image or target input goes
    controls_->setTargetInput(false);
    QStringList tokens;
    for (const auto& t : block.queryTokens) tokens << QString::fromStdString(t);
    controls_->input()->setText(tokens.join(QLatin1Char(' ')));
    exampleShown_ = controls_->input()->text();  // a model opened next replaces it with its example
    setMapsOnly(npy);
    statusBar()->showMessage(tr("Opened %1.").arg(QFileInfo(npy).fileName()), 5000);
}

// What needs Q/K goes off (mapsFile set) or comes back (empty: a model was opened).
void MainWindow::setMapsOnly(const QString& mapsFile) {
    const bool off = !mapsFile.isEmpty();
    const QString why = off ? whyOff(mapsFile) : QString();
    lab_->panel()->setEnabled(!off);
    lab_->panel()->setToolTip(why);
    if (off) lab_->propagateCheck()->setChecked(false);
    lab_->propagateCheck()->setEnabled(!off);
    lab_->propagateCheck()->setToolTip(off ? tr("Temperature inside the model re-runs the model; %1").arg(why)
                                           : QString());
    lab_->layersEdit()->setEnabled(!off);
    controls_->input()->setReadOnly(off);
    controls_->input()->setToolTip(off ? tr("The tokens of the attention file; open a model to type an input.")
                                       : QString());
    controls_->temperature()->setToolTip(
            off ? tr("Display temperature on the stored maps: softmax(log A / T), exact up to the file's precision "
                     "(cells stored as 0 stay 0).")
                : QString());
    labDock_->setWindowTitle(off ? tr("Lab — off for attention files (no Q/K)") : tr("Lab"));
    updateRunEnabled();
}
