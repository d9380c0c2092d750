// MainWindow's inputs for the model families: the device models open on, images for image
// models (ViT), readable or raw token labels, and the key/value group of a grouped-query head.
#include "window/mainwindow.h"

#include "panels/controlpanel.h"
#include "panels/devicecombo.h"
#include "views/heatmapview.h"
#include "panels/imageinput.h"
#include "controllers/labcontroller.h"
#include "figure/headfigure.h"
#include "figure/labels.h"
#include "services/session.h"
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
#include <QMenuBar>
#include <QSpinBox>
#include <QStatusBar>

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
