// AttentionFiles (attentionfiles.h): maps read from a .npy in place of a model.
#include "window/attentionfiles.h"

#include "controllers/labcontroller.h"
#include "panels/controlpanel.h"
#include "panels/labpanel.h"
#include "services/session.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "views/temperatureslider.h"
#include "window/mappresenter.h"
#include "window/modelinputs.h"
#include "window/windowparts.h"

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
#include <QMainWindow>
#include <QStatusBar>

namespace {

QString whyOff(const QString& file) {
    return QObject::tr("The maps were read from %1, which holds no queries and keys: this needs the model.")
            .arg(QFileInfo(file).fileName());
}

}  // namespace

QAction* AttentionFiles::makeAction() {
    auto* action = new QAction(tr("Open &Attention File (.npy)…"), this);
    action->setObjectName(QStringLiteral("openAttentionFileAction"));
    action->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
    action->setToolTip(tr("Attention maps saved from Python: [layers, heads, n, n] or [heads, n, n], "
                          "with an optional tokens JSON"));
    connect(action, &QAction::triggered, this, &AttentionFiles::openAttentionFileDialog);
    return action;
}

AttentionFiles::AttentionFiles(WindowParts& parts, QObject* parent) : QObject(parent), p_(parts) {
    connect(p_.session, &Session::attentionFileLoaded, this, &AttentionFiles::onAttentionFileLoaded);
    connect(p_.session, &Session::modelLoaded, this, [this] { setMapsOnly(QString()); });
}

void AttentionFiles::openAttentionFileDialog() {
    auto* dialog = new QFileDialog(p_.window, tr("Open Attention File: the .npy and, optionally, its tokens JSON"));
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
            p_.showError(tr("No attention file chosen."), tr("Choose a .npy file (and, optionally, its tokens JSON)."));
        else
            openAttentionFile(npy, tokens);
    });
    dialog->open();
}

void AttentionFiles::openAttentionFile(const QString& npy, const QString& tokens) {
    QString labels = tokens;
    if (labels.isEmpty()) labels = QString::fromStdString(attnscope::tokensBeside(npy.toStdString()).string());
    p_.inputs->setPendingSpec(npy);
    p_.statusBar->showMessage(tr("Opening %1…").arg(QDir::toNativeSeparators(npy)));
    p_.session->openAttentionFile(npy, labels);
}

void AttentionFiles::onAttentionFileLoaded(const QString& npy) {
    p_.inputs->setPendingSpec(QString());
    p_.presenter->resetShownBlock();
    p_.state->setModel(npy);  // maps only: the old model's state goes as on a model change
    const auto trace = p_.session->trace();
    const auto& block = trace->blocks().front();
    p_.window->setWindowTitle(tr("AttnScope — %1").arg(QFileInfo(npy).fileName()));
    p_.controls->modelLabel()->setText(
            tr("<b>Attention file</b> %1 · %2 layers × %3 heads · %4 tokens<br>"
               "Maps only: the temperature rescales the stored probabilities, softmax(log A / T); "
               "the lab, temperature inside the model and head masking need the model's Q and K.")
                    .arg(QFileInfo(npy).fileName().toHtmlEscaped())
                    .arg(block.layers)
                    .arg(block.heads)
                    .arg(block.queryTokens.size()));
    p_.controls->modelLabel()->setToolTip(QDir::toNativeSeparators(npy));
    p_.controls->setImageInput(false);  // the previous model's image or target input goes
    p_.controls->setTargetInput(false);
    QStringList tokens;
    for (const auto& t : block.queryTokens) tokens << QString::fromStdString(t);
    p_.controls->input()->setText(tokens.join(QLatin1Char(' ')));
    p_.inputs->setExampleShown(p_.controls->input()->text());  // a model opened next replaces it with its example
    setMapsOnly(npy);
    p_.statusBar->showMessage(tr("Opened %1.").arg(QFileInfo(npy).fileName()), 5000);
}

// What needs Q/K goes off (mapsFile set) or comes back (empty: a model was opened).
void AttentionFiles::setMapsOnly(const QString& mapsFile) {
    const bool off = !mapsFile.isEmpty();
    const QString why = off ? whyOff(mapsFile) : QString();
    p_.lab->panel()->setEnabled(!off);
    p_.lab->panel()->setToolTip(why);
    if (off) p_.lab->propagateCheck()->setChecked(false);
    p_.lab->propagateCheck()->setEnabled(!off);
    p_.lab->propagateCheck()->setToolTip(off ? tr("Temperature inside the model re-runs the model; %1").arg(why)
                                             : QString());
    p_.lab->layersEdit()->setEnabled(!off);
    p_.controls->input()->setReadOnly(off);
    p_.controls->input()->setToolTip(off ? tr("The tokens of the attention file; open a model to type an input.")
                                         : QString());
    p_.controls->temperature()->setToolTip(
            off ? tr("Display temperature on the stored maps: softmax(log A / T), exact up to the file's precision "
                     "(cells stored as 0 stay 0).")
                : QString());
    p_.labDock->setWindowTitle(off ? tr("Lab — off for attention files (no Q/K)") : tr("Lab"));
    p_.inputs->updateRunEnabled();
}
