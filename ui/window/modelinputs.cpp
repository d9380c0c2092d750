// ModelInputs (modelinputs.h): a model just loaded (its description, and the typed input kept
// when its tokenizer takes it), the device models open on, runs of text, ids or images, and the
// session's progress and failures.
#include "window/modelinputs.h"

#include "controllers/generatecontroller.h"
#include "figure/headfigure.h"
#include "figure/imagefile.h"
#include "figure/labels.h"
#include "panels/comparepanel.h"
#include "services/comparesession.h"
#include "panels/controlpanel.h"
#include "panels/devicecombo.h"
#include "panels/imageinput.h"
#include "panels/modelpicker.h"
#include "panels/outputpanel.h"
#include "services/session.h"
#include "services/tokenids.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "views/overviewgrid.h"
#include "window/mainwindow.h"
#include "window/mappresenter.h"
#include "window/modelbrowsing.h"
#include "window/windowparts.h"
#include "window/workspaceio.h"

#include "attnscope/io/gguf.h"
#include "attnscope/io/model_location.h"
#include "attnscope/models/model.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>

#include <algorithm>
#include <utility>

namespace {

QString formatCount(std::int64_t n) {
    if (n >= 1'000'000'000) return QString::number(n / 1e9, 'f', 2) + QStringLiteral(" B");
    if (n >= 1'000'000) return QString::number(n / 1e6, 'f', 1) + QStringLiteral(" M");
    if (n >= 10'000) return QString::number(n / 1e3, 'f', 1) + QStringLiteral(" k");
    return QString::number(n);
}

// A dropped or given path: the folder itself, or the folder of a dropped config.json; a model id
// not on disk (org/name) as given, for the session to find in the Hugging Face cache.
QString modelFolderOf(const QString& path) {
    const QFileInfo info(path);
    if (!info.exists() && attnscope::isModelId(path.toStdString())) return path;
    // A model in one file (GGUF, by content) or in Ollama's store is opened as it is.
    if (path.startsWith(QLatin1String("ollama:")) || attnscope::looksLikeGguf(path.toStdString()))
        return info.exists() ? info.absoluteFilePath() : path;
    return info.isFile() ? info.absolutePath() : info.absoluteFilePath();
}

}  // namespace

ModelInputs::ModelInputs(WindowParts& parts, QObject* parent) : QObject(parent), p_(parts) {
    connectSession();
    buildFamilyInputs();
}

void ModelInputs::setImage(const QString& path, std::shared_ptr<const attnscope::RgbImage> image) {
    imagePath_ = path;
    image_ = std::move(image);
}

void ModelInputs::connectSession() {
    const ControlPanel* c = p_.controls;
    connect(c->picker(), &ModelPicker::modelChosen, this, &ModelInputs::openModel);
    connect(c->picker(), &ModelPicker::openFolderRequested, this, &ModelInputs::chooseModelFolder);
    connect(c->picker(), &ModelPicker::browseRequested, this,
            [this] { browseModels(*qobject_cast<MainWindow*>(p_.window)); });
    connect(c->runButton(), &QPushButton::clicked, this, &ModelInputs::runInput);
    connect(c->input(), &QLineEdit::returnPressed, this, &ModelInputs::runInput);
    connect(c->targetInput(), &QLineEdit::returnPressed, this, &ModelInputs::runInput);
    connect(p_.compare, &ComparePanel::taskChosen, this, [this](const QString& task) {
        Workspace::View v = p_.state->view();
        v.compareTask = task;
        p_.state->setView(v);  // the presenter runs the comparison
    });
    connect(p_.compare, &ComparePanel::failed, this,
            [this](const QString& message) { p_.showError(tr("The comparison could not run."), message); });

    connect(p_.session, &Session::modelLoaded, this, &ModelInputs::onModelLoaded);
    // After the presenter's: a model just opened on its example input shows nothing the user
    // made yet, so there is nothing to save.
    connect(p_.session, &Session::traceReady, this, [this] {
        if (std::exchange(freshModel_, false) && p_.controls->input()->text() == exampleShown_)
            p_.workspace->setUnmodifiedUnlessOpening();
    });
    connect(p_.session, &Session::busyChanged, this, &ModelInputs::onBusyChanged);
    connect(p_.session, &Session::progress, this, &ModelInputs::onProgress);
    connect(p_.session, &Session::progressText, p_.progressBar, &QProgressBar::setFormat);
    connect(p_.session, &Session::failed, this, [this](const QString& message) {
        const QString headline =
                pendingSpec_.isEmpty() ? tr("The model could not run this input.")
                : pendingSpec_.endsWith(QLatin1String(".npy"), Qt::CaseInsensitive)
                        ? tr("Could not open the attention file %1.").arg(QDir::toNativeSeparators(pendingSpec_))
                        : tr("Could not open the model %1.").arg(QDir::toNativeSeparators(pendingSpec_));
        pendingSpec_.clear();
        p_.statusBar->showMessage(tr("Failed: %1").arg(message), 10000);
        p_.showError(headline, message);
    });
    connect(p_.cancelButton, &QPushButton::clicked, this, [this] {
        p_.session->cancel();
        pendingSpec_.clear();
        p_.statusBar->showMessage(tr("Cancelled."), 5000);
    });
}

void ModelInputs::chooseModelFolder() {
    auto* dialog = new QFileDialog(p_.window, tr("Open Model Folder (config.json + model.safetensors)"));
    dialog->setObjectName(QStringLiteral("openFolderDialog"));
    dialog->setFileMode(QFileDialog::Directory);
    dialog->setOption(QFileDialog::ShowDirsOnly);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setDirectory(recent::lastFolder(QStringLiteral("model")));
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& folder) {
        // The folder above the model: the next model is likely its sibling.
        recent::rememberFolder(QStringLiteral("model"), QFileInfo(folder).absolutePath());
        openModel(folder);
    });
    dialog->open();
}

void ModelInputs::openModel(const QString& spec) {
    const QString target = spec.startsWith(QLatin1String("builtin:")) ? spec : modelFolderOf(spec);
    pendingSpec_ = target;
    p_.statusBar->showMessage(tr("Opening %1…").arg(QDir::toNativeSeparators(target)));
    p_.session->openModel(target, p_.controls->device()->choice());
}

QString ModelInputs::modelName() const { return modelDisplayName(p_.session->modelSpec()); }

void ModelInputs::runInput() {
    if (!p_.session->model()) {
        p_.showError(tr("No model is open."), tr("Pick a built-in model or open a model folder first."));
        return;
    }
    if (p_.session->model()->info().imageInput) {
        runImageInput();
        return;
    }
    if (p_.session->isBusy()) return;
    p_.statusBar->showMessage(tr("Running…"));
    p_.state->setInput({p_.controls->input()->text(), p_.controls->idsMode(), p_.controls->targetText(), QString()});
    p_.session->runInput(p_.controls->input()->text(), p_.controls->idsMode(), p_.controls->targetText());
    p_.presenter->updateCompare(true);
}

void ModelInputs::onBusyChanged(bool busy) {
    p_.progressBar->setVisible(busy);
    p_.cancelButton->setVisible(busy);
    if (busy) p_.progressBar->setRange(0, 0);  // a busy bar until the first report
    updateRunEnabled();
}

void ModelInputs::onProgress(int permille) {
    if (permille < 0) {
        p_.progressBar->setRange(0, 0);
        return;
    }
    p_.progressBar->setRange(0, 1000);
    p_.progressBar->setValue(permille);
}

void ModelInputs::updateRunEnabled() {
    p_.controls->runButton()->setEnabled(p_.session->model() && !p_.session->isBusy());
}

QString ModelInputs::exampleInput(const QString& spec, bool hasTokenizer, int vocabSize, int maxPositions) {
    if (!hasTokenizer) {
        int n = std::min(8, vocabSize);
        if (maxPositions > 0) n = std::min(n, maxPositions);
        QStringList ids;
        for (int i = 0; i < n; ++i) ids << QString::number(i);
        return ids.join(QLatin1Char(' '));
    }
    if (spec.startsWith(QLatin1String("builtin:reverse"))) return QStringLiteral("attention2026");
    if (spec.startsWith(QLatin1String("builtin:sentiment")))
        return QStringLiteral("the acting was not good but the plot was great");
    return QStringLiteral("The quick brown fox jumps over the lazy dog");
}

void ModelInputs::onModelLoaded(const attnscope::ModelInfo& info) {
    const QString spec = pendingSpec_.isEmpty() ? p_.session->modelSpec() : pendingSpec_;
    pendingSpec_.clear();
    p_.controls->picker()->setCurrentSpec(spec);
    // The family's notes (windows, soft-cap, ALiBi, partial rotary, kv groups) say what shapes its maps.
    QStringList notes;
    for (const std::string& note : info.notes) notes << QString::fromStdString(note).toHtmlEscaped();
    if (!info.weights.empty())
        notes.prepend(tr("weights: %1").arg(QString::fromStdString(info.weights).toHtmlEscaped()));
    p_.controls->modelLabel()->setText(
            tr("<b>%1</b> · %2 layers × %3 heads<br>%4 parameters · %5 · %6")
                    .arg(QString::fromStdString(info.family).toHtmlEscaped())
                    .arg(info.layers)
                    .arg(info.heads)
                    .arg(formatCount(info.parameters))
                    .arg(QString::fromStdString(info.dtype))
                    .arg(QString::fromStdString(info.device)) +
            (notes.isEmpty() ? QString() : QStringLiteral("<br>") + notes.join(QStringLiteral(" · "))));
    p_.controls->modelLabel()->setToolTip(QDir::toNativeSeparators(QString::fromStdString(info.path.string())));
    p_.window->setWindowTitle(tr("AttnScope — %1").arg(modelName()));
    // Every part of what is shown that belonged to the old model is reset in the state (blocks,
    // selection, masks, tokens, zoom); the old model's map jobs are dropped.
    p_.presenter->resetShownBlock();
    freshModel_ = true;
    p_.state->setModel(spec);
    p_.controls->outputs()->clear();
    p_.maps->cancelAll();
    p_.heatmap->clear(tr("Type an input and press Run."));
    p_.overview->setShape(0, 0);
    p_.overview->setCaption(QString());
    p_.presenter->updateHeadGroup();  // no trace yet: the previous model's key/value group line goes
    updateRunEnabled();

    // Keep what the user typed when this model's tokenizer takes it (same input mode, every
    // token known, within its positions); otherwise put an example in.
    const bool hadIds = p_.controls->idsMode();
    p_.controls->setTokenizerAvailable(p_.session->hasTokenizer());
    p_.controls->setImageInput(info.imageInput, info.imageText);
    p_.controls->setTargetInput(info.encoderDecoder);
    QLineEdit* input = p_.controls->input();
    if (!p_.workspace->applyWorkspaceInput() && (input->text() == exampleShown_ || hadIds != p_.controls->idsMode() ||
                                                 !inputFits(input->text(), p_.controls->idsMode()))) {
        exampleShown_ = exampleInput(spec, p_.session->hasTokenizer(), info.vocabSize, info.maxPositions);
        // Image–text models: a caption to match, the longest that fits the text tower.
        for (const QString& caption : {QStringLiteral("a photo of a flower"), QStringLiteral("a flower")})
            if (info.imageText && p_.session->hasTokenizer() && inputFits(caption, false)) {
                exampleShown_ = caption;
                break;
            }
        input->setText(exampleShown_);
        p_.controls->targetInput()->clear();  // a target belongs to its source
    }
    p_.statusBar->showMessage(tr("Loaded %1.").arg(modelName()), 5000);
    if (const auto task = compareTaskOf(spec)) {  // compare this model's task
        Workspace::View v = p_.state->view();
        v.compareTask = *task;
        p_.state->setView(v);
    }
    runInput();
}

bool ModelInputs::inputFits(const QString& text, bool ids) const {
    const auto model = p_.session->model();
    if (!model || text.trimmed().isEmpty()) return false;
    try {
        const auto encoded = encodeInput(*model, text, ids);
        const int most = model->info().maxPositions;
        return !encoded.empty() && (most <= 0 || int(encoded.size()) <= most);
    } catch (const std::exception&) {
        return false;
    }
}

void ModelInputs::buildFamilyInputs() {
    openImageAction_ = new QAction(tr("Open &Image…"), this);
    openImageAction_->setObjectName(QStringLiteral("openImageAction"));
    openImageAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    openImageAction_->setToolTip(tr("The image an image model (ViT) runs on"));
    connect(openImageAction_, &QAction::triggered, this, &ModelInputs::openImage);
    p_.rawTokensAction = new QAction(tr("&Raw Tokens on the Axes"), this);
    p_.rawTokensAction->setObjectName(QStringLiteral("rawTokensAction"));
    p_.rawTokensAction->setCheckable(true);
    p_.rawTokensAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    p_.rawTokensAction->setToolTip(tr("Show the vocabulary's own strings (Ġ, ##, ▁) instead of the readable forms"));

    connect(p_.controls->imageInput(), &ImageInputBar::openRequested, this, &ModelInputs::openImage);
    connect(p_.controls->device(), &DeviceCombo::choiceChanged, this, [this] {
        if (p_.session->model() && !p_.session->modelSpec().isEmpty()) openModel(p_.session->modelSpec());
        p_.presenter->updateCompare(true);  // the Compare tab's models open on the new device too
    });
}

void ModelInputs::openImage() {
    auto* dialog = new QFileDialog(p_.window, tr("Open Image"),
                                   imagePath_.isEmpty() ? recent::lastFolder(QStringLiteral("image"))
                                                        : QFileInfo(imagePath_).absolutePath(),
                                   imageFileFilter());
    dialog->setObjectName(QStringLiteral("openImageDialog"));
    dialog->setFileMode(QFileDialog::ExistingFile);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
        recent::rememberFolder(QStringLiteral("image"), path);
        setImageFile(path);
    });
    dialog->open();
}

bool ModelInputs::setImageFile(const QString& path) {
    QString error;
    const QImage image = readImageFile(path, &error);
    if (image.isNull()) {
        p_.showError(tr("Could not open the image."), error);
        return false;
    }
    imagePath_ = path;
    image_ = std::make_shared<const attnscope::RgbImage>(toRgbImage(image));
    p_.controls->imageInput()->setImage(path, image);
    const auto model = p_.session->model();
    if (model && model->info().imageInput) {
        runImageInput();
    } else {
        p_.statusBar->showMessage(tr("Image %1 is ready for an image model (ViT).").arg(QFileInfo(path).fileName()),
                                  5000);
    }
    return true;
}

// Runs the chosen image through the current image model; false (with a hint in place of the
// map) when no image has been chosen yet.
bool ModelInputs::runImageInput() {
    if (!image_) {
        p_.heatmap->clear(tr("This model looks at images: open one (Ctrl+I) or drop it on the window."));
        p_.statusBar->showMessage(tr("Open an image to run %1.").arg(modelName()), 5000);
        return false;
    }
    if (p_.session->isBusy()) return false;
    p_.statusBar->showMessage(tr("Running on %1…").arg(QFileInfo(imagePath_).fileName()));
    if (p_.session->model()->info().imageText) {  // CLIP, SigLIP: the image and the text box's text
        const QString text = p_.controls->input()->text();
        p_.state->setInput({text, p_.controls->idsMode(), QString(), imagePath_});
        p_.session->runImageText(*image_, text, p_.controls->idsMode());
        return true;
    }
    p_.state->setInput({QString(), false, QString(), imagePath_});
    p_.session->runImage(*image_);
    return true;
}
