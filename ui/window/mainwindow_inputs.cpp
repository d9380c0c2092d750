// MainWindow's inputs for the model families: a model just loaded (its description, and the typed
// input kept when its tokenizer takes it), the device models open on, images for image models
// (ViT), readable or raw token labels, and the key/value group of a grouped-query head.
#include "window/mainwindow.h"

#include "panels/controlpanel.h"
#include "panels/devicecombo.h"
#include "views/heatmapview.h"
#include "panels/imageinput.h"
#include "controllers/labcontroller.h"
#include "figure/headfigure.h"
#include "figure/labels.h"
#include "services/session.h"
#include "services/tokenids.h"
#include "panels/modelpicker.h"
#include "panels/outputpanel.h"
#include "panels/comparepanel.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"
#include "views/temperatureslider.h"

#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QSpinBox>
#include <QStatusBar>

namespace {

QString formatCount(std::int64_t n) {
    if (n >= 1'000'000'000) return QString::number(n / 1e9, 'f', 2) + QStringLiteral(" B");
    if (n >= 1'000'000) return QString::number(n / 1e6, 'f', 1) + QStringLiteral(" M");
    if (n >= 10'000) return QString::number(n / 1e3, 'f', 1) + QStringLiteral(" k");
    return QString::number(n);
}

}  // namespace

QString MainWindow::exampleInput(const QString& spec, bool hasTokenizer, int vocabSize, int maxPositions) {
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

void MainWindow::onModelLoaded(const attnscope::ModelInfo& info) {
    const QString spec = pendingSpec_.isEmpty() ? session_->modelSpec() : pendingSpec_;
    pendingSpec_.clear();
    controls_->picker()->setCurrentSpec(spec);
    // The family's notes (windows, soft-cap, ALiBi, partial rotary, kv groups) say what shapes its maps.
    QStringList notes;
    for (const std::string& note : info.notes) notes << QString::fromStdString(note).toHtmlEscaped();
    if (!info.weights.empty())
        notes.prepend(tr("weights: %1").arg(QString::fromStdString(info.weights).toHtmlEscaped()));
    controls_->modelLabel()->setText(
            tr("<b>%1</b> · %2 layers × %3 heads<br>%4 parameters · %5 · %6")
                    .arg(QString::fromStdString(info.family).toHtmlEscaped())
                    .arg(info.layers)
                    .arg(info.heads)
                    .arg(formatCount(info.parameters))
                    .arg(QString::fromStdString(info.dtype))
                    .arg(QString::fromStdString(info.device)) +
            (notes.isEmpty() ? QString() : QStringLiteral("<br>") + notes.join(QStringLiteral(" · "))));
    controls_->modelLabel()->setToolTip(QDir::toNativeSeparators(QString::fromStdString(info.path.string())));
    setWindowTitle(tr("AttnScope — %1").arg(modelName()));
    // Every part of what is shown that belonged to the old model is reset in the state (blocks,
    // selection, masks, tokens, zoom); the old model's map jobs are dropped.
    shownBlock_ = -1;
    freshModel_ = true;
    state_->setModel(spec);
    controls_->outputs()->clear();
    maps_->cancelAll();
    heatmap_->clear(tr("Type an input and press Run."));
    overview_->setShape(0, 0);
    overview_->setCaption(QString());
    updateHeadGroup();  // no trace yet: the previous model's key/value group line goes
    updateRunEnabled();

    // Keep what the user typed when this model's tokenizer takes it (same input mode, every
    // token known, within its positions); otherwise put an example in.
    const bool hadIds = controls_->idsMode();
    controls_->setTokenizerAvailable(session_->hasTokenizer());
    controls_->setImageInput(info.imageInput);
    controls_->setTargetInput(info.encoderDecoder);
    QLineEdit* input = controls_->input();
    if (!applyWorkspaceInput() && (input->text() == exampleShown_ || hadIds != controls_->idsMode() ||
                                   !inputFits(input->text(), controls_->idsMode()))) {
        exampleShown_ = exampleInput(spec, session_->hasTokenizer(), info.vocabSize, info.maxPositions);
        input->setText(exampleShown_);
        controls_->targetInput()->clear();  // a target belongs to its source
    }
    statusBar()->showMessage(tr("Loaded %1.").arg(modelName()), 5000);
    if (const auto task = compareTaskOf(spec)) compareTask_ = *task;  // compare this model's task
    runInput();
}

bool MainWindow::inputFits(const QString& text, bool ids) const {
    const auto model = session_->model();
    if (!model || text.trimmed().isEmpty()) return false;
    try {
        const auto encoded = encodeInput(*model, text, ids);
        const int most = model->info().maxPositions;
        return !encoded.empty() && (most <= 0 || int(encoded.size()) <= most);
    } catch (const std::exception&) {
        return false;
    }
}

QAction* MainWindow::makeOpenImageAction() {
    auto* openImageAction = new QAction(tr("Open &Image…"), this);
    openImageAction->setObjectName(QStringLiteral("openImageAction"));
    openImageAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    openImageAction->setToolTip(tr("The image an image model (ViT) runs on"));
    connect(openImageAction, &QAction::triggered, this, &MainWindow::openImage);
    return openImageAction;
}

void MainWindow::buildFamilyInputs() {
    rawTokensAction_ = new QAction(tr("&Raw Tokens on the Axes"), this);
    rawTokensAction_->setObjectName(QStringLiteral("rawTokensAction"));
    rawTokensAction_->setCheckable(true);
    rawTokensAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    rawTokensAction_->setToolTip(tr("Show the vocabulary's own strings (Ġ, ##, ▁) instead of the readable forms"));

    connect(controls_->imageInput(), &ImageInputBar::openRequested, this, &MainWindow::openImage);
    connect(controls_->device(), &DeviceCombo::choiceChanged, this, [this] {
        if (session_->model() && !session_->modelSpec().isEmpty()) openModel(session_->modelSpec());
        updateCompare(true);  // the Compare tab's models open on the new device too
    });
}

void MainWindow::openImage() {
    auto* dialog = new QFileDialog(this, tr("Open Image"),
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

bool MainWindow::setImageFile(const QString& path) {
    QString error;
    const QImage image = readImageFile(path, &error);
    if (image.isNull()) {
        showError(tr("Could not open the image."), error);
        return false;
    }
    imagePath_ = path;
    image_ = std::make_shared<const attnscope::RgbImage>(toRgbImage(image));
    controls_->imageInput()->setImage(path, image);
    const auto model = session_->model();
    if (model && model->info().imageInput) {
        runImageInput();
    } else {
        statusBar()->showMessage(tr("Image %1 is ready for an image model (ViT).").arg(QFileInfo(path).fileName()),
                                 5000);
    }
    return true;
}

// Runs the chosen image through the current image model; false (with a hint in place of the
// map) when no image has been chosen yet.
bool MainWindow::runImageInput() {
    if (!image_) {
        heatmap_->clear(tr("This model looks at images: open one (Ctrl+I) or drop it on the window."));
        statusBar()->showMessage(tr("Open an image to run %1.").arg(modelName()), 5000);
        return false;
    }
    if (session_->isBusy()) return false;
    statusBar()->showMessage(tr("Running on %1…").arg(QFileInfo(imagePath_).fileName()));
    state_->setInput({QString(), false, QString(), imagePath_});
    session_->runImage(*image_);
    return true;
}

// View > Raw Tokens: only the labels change, so the map on screen is drawn again with them
// rather than computed again (unless the lab draws it, or another map is on its way).
void MainWindow::onRawTokensToggled() {
    const bool current = shownDetail_.trace && shownDetail_.trace == session_->trace() &&
                         shownDetail_.key == currentKey() && shownDetail_.temperature == state_->temperature();
    if (current && !lab_->takesDetail())
        showDetail(shownDetail_);
    else
        requestDetail();
}

// Readable labels (the block's), or with raw the vocabulary strings where the block's labels are
// the input tokens' readable forms (Trace::tokens() parallel to Trace::displayTokens()).
QStringList MainWindow::axisLabels(const attnscope::Trace& trace, const attnscope::BlockInfo& block, bool queries,
                                   bool raw) const {
    return ::axisLabels(trace, block, queries, raw);  // the figures' own (headfigure.h)
}

void MainWindow::updateHeadGroup() {
    QLabel* label = controls_->headGroupLabel();
    QSpinBox* headSpin = controls_->headSpin();
    if (const attnscope::MapSource source = state_->mapSource(); !attnscope::perHeadSource(source)) {
        label->setVisible(false);  // a per-layer map source: no head, so no key/value group either
        headSpin->setToolTip(tr("%1 is one map per layer (its heads combined): the head does not apply.")
                                     .arg(QString::fromUtf8(attnscope::sourceLabel(source))));
        return;
    }
    const auto trace = session_->trace();
    const int b = state_->block();
    if (!trace || b < 0 || std::size_t(b) >= trace->blocks().size()) {
        label->setVisible(false);
        return;
    }
    const auto& block = trace->blocks()[std::size_t(b)];
    if (block.kvHeads <= 0 || block.kvHeads >= block.heads) {
        label->setVisible(false);
        headSpin->setToolTip(tr("Arrow keys on the maps: left/right = head, up/down = layer"));
        return;
    }
    const int head = state_->head();
    const int group = block.kvGroup(head);
    const int perGroup = block.heads / block.kvHeads;
    const QString text = tr("Head %1 shares key/value group %2 of %3 with heads %4–%5 (grouped-query attention).")
                                 .arg(head)
                                 .arg(group)
                                 .arg(block.kvHeads)
                                 .arg(group * perGroup)
                                 .arg(group * perGroup + perGroup - 1);
    label->setText(text);
    label->setVisible(true);
    headSpin->setToolTip(text);
}
