#include "panels/imageoverlaypanel.h"

#include "views/imageoverlay.h"

#include <QCheckBox>
#include <QStandardItemModel>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include <algorithm>

using attnscope::HeadFusion;
using attnscope::OverlaySource;

ImageOverlayPanel::ImageOverlayPanel(QWidget* parent) : QWidget(parent) {
    view_ = new ImageOverlayView;
    view_->setObjectName(QStringLiteral("imageOverlayView"));

    source_ = new QComboBox;
    source_->setObjectName(QStringLiteral("overlaySource"));
    source_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    source_->setMinimumContentsLength(10);
    source_->addItem(tr("Shown head"), int(OverlaySource::Head));
    source_->addItem(tr("Layer mean (all heads)"), int(OverlaySource::LayerMean));
    source_->addItem(tr("Rollout (layers 0 to the shown one)"), int(OverlaySource::Rollout));
    source_->addItem(tr("Contribution to the text match"), int(OverlaySource::Similarity));
    source_->setItemData(source_->count() - 1,
                         tr("Image–text models (CLIP, SigLIP): each patch's direct contribution to the image–text "
                            "logit through the last attention's heads (red adds, blue takes away)"),
                         Qt::ToolTipRole);
    source_->setToolTip(
            tr("Rollout: Abnar & Zuidema's attention rollout as vit-explain computes it (heads fused, the "
               "lowest weights discarded, half identity for the residual), with every row normalised by its own sum."));
    fusion_ = new QComboBox;
    fusion_->setObjectName(QStringLiteral("overlayFusion"));
    fusion_->addItem(tr("mean"), int(HeadFusion::Mean));
    fusion_->addItem(tr("max"), int(HeadFusion::Max));
    fusion_->addItem(tr("min"), int(HeadFusion::Min));
    fusion_->setToolTip(tr("How the rollout joins a layer's heads (vit-explain's head fusion)."));
    discard_ = new QDoubleSpinBox;
    discard_->setObjectName(QStringLiteral("overlayDiscard"));
    discard_->setRange(0.0, 0.99);
    discard_->setSingleStep(0.05);
    discard_->setDecimals(2);
    discard_->setValue(0.9);  // vit-explain's default
    discard_->setToolTip(
            tr("Share of each layer's lowest weights set to 0 before the rollout ([CLS] to itself is kept)."));
    opacity_ = new QSlider(Qt::Horizontal);
    opacity_->setObjectName(QStringLiteral("overlayOpacity"));
    opacity_->setRange(0, 100);
    opacity_->setValue(60);
    colormap_ = new QComboBox;
    colormap_->setObjectName(QStringLiteral("overlayColormap"));
    colormap_->addItems(colormapNames());
    colormap_->setCurrentIndex(int(Colormap::Magma));
    smooth_ = new QCheckBox(tr("Smooth"));
    smooth_->setObjectName(QStringLiteral("overlaySmooth"));
    smooth_->setToolTip(tr("Blend between patch centres (as vit-explain's upsampled mask) instead of flat patches."));
    grid_ = new QCheckBox(tr("Patch grid"));
    grid_->setObjectName(QStringLiteral("overlayGrid"));
    grid_->setToolTip(tr("Always draw the patch grid (it shows on hover anyway)."));
    patchesOnly_ = new QCheckBox(tr("Patches only"));
    patchesOnly_->setObjectName(QStringLiteral("overlayPatchesOnly"));
    patchesOnly_->setToolTip(tr("Renormalise the row over the patches: what it puts on [CLS], registers, [DIST] or "
                                "window padding no longer sets the colours (the caption still gives it)."));
    cls_ = new QPushButton(tr("[CLS] row"));
    cls_->setObjectName(QStringLiteral("overlayClsButton"));
    cls_->setToolTip(tr("Show the [CLS] token's row again."));
    rowLabel_ = new QLabel;
    rowLabel_->setObjectName(QStringLiteral("overlayRowLabel"));
    export_ = new QPushButton(tr("Export figure…"));
    export_->setObjectName(QStringLiteral("overlayExportButton"));

    auto* form = new QFormLayout;
    form->addRow(tr("Overlay"), source_);
    form->addRow(tr("Head fusion"), fusion_);
    form->addRow(tr("Discard ratio"), discard_);
    form->addRow(tr("Opacity"), opacity_);
    form->addRow(tr("Colours"), colormap_);
    auto* checks = new QHBoxLayout;
    checks->addWidget(smooth_);
    checks->addWidget(grid_);
    checks->addWidget(patchesOnly_);
    checks->addStretch();
    form->addRow(checks);
    auto* row = new QHBoxLayout;
    row->addWidget(rowLabel_, 1);
    row->addWidget(cls_);
    form->addRow(row);
    form->addRow(export_);
    auto* side = new QWidget;
    side->setLayout(form);
    side->setMaximumWidth(340);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(view_, 1);
    layout->addWidget(side, 0, Qt::AlignTop);

    for (QComboBox* c : {source_, fusion_})
        connect(c, &QComboBox::currentIndexChanged, this, [this] {
            updateEnabled();
            emit overlayWanted();
        });
    connect(discard_, &QDoubleSpinBox::valueChanged, this, &ImageOverlayPanel::overlayWanted);
    connect(patchesOnly_, &QCheckBox::toggled, this, &ImageOverlayPanel::overlayWanted);
    connect(opacity_, &QSlider::valueChanged, this, &ImageOverlayPanel::redraw);
    connect(colormap_, &QComboBox::currentIndexChanged, this, &ImageOverlayPanel::redraw);
    connect(smooth_, &QCheckBox::toggled, this, &ImageOverlayPanel::redraw);
    connect(grid_, &QCheckBox::toggled, this, &ImageOverlayPanel::redraw);
    connect(cls_, &QPushButton::clicked, this, [this] {
        // The first token that is not a patch: [CLS] in ViT.
        setQuery(overlay_.grid.others.empty() ? 0 : overlay_.grid.others.front());
        emit overlayWanted();
    });
    connect(view_, &ImageOverlayView::patchClicked, this, [this](int patch) {
        if (patch < 0 || std::size_t(patch) >= overlay_.grid.positions.size()) return;
        setQuery(overlay_.grid.positions[std::size_t(patch)]);
        emit overlayWanted();
    });
    connect(export_, &QPushButton::clicked, this, &ImageOverlayPanel::exportRequested);
    setQuery(0);
    updateEnabled();
}

OverlaySource ImageOverlayPanel::source() const { return OverlaySource(source_->currentData().toInt()); }
HeadFusion ImageOverlayPanel::fusion() const { return HeadFusion(fusion_->currentData().toInt()); }
double ImageOverlayPanel::discardRatio() const { return discard_->value(); }

void ImageOverlayPanel::setQuery(int token) {
    query_ = token;
    QString name = tr("token %1").arg(token);
    const auto& pos = overlay_.grid.positions;
    if (const auto it = std::find(pos.begin(), pos.end(), token); it != pos.end() && overlay_.grid.cols > 0) {
        const int patch = int(it - pos.begin());
        name = tr("patch r%1c%2").arg(patch / overlay_.grid.cols).arg(patch % overlay_.grid.cols);
    } else if (token >= 0 && token < int(labels_.size())) {
        name = QString::fromStdString(labels_[std::size_t(token)]);
    } else if (token == 0) {
        name = QStringLiteral("[CLS]");
    }
    rowLabel_->setText(tr("Row: %1").arg(name));
    cls_->setEnabled(token != 0);
}

void ImageOverlayPanel::setTokenLabels(const std::vector<std::string>& labels) {
    labels_ = labels;
    setQuery(query_);
}

void ImageOverlayPanel::updateEnabled() {
    const bool rollout = source() == OverlaySource::Rollout;
    fusion_->setEnabled(rollout);
    discard_->setEnabled(rollout);
    // The contributions are signed and belong to no row: no renormalising, no row to pick.
    patchesOnly_->setEnabled(source() != OverlaySource::Similarity);
    rowLabel_->setEnabled(source() != OverlaySource::Similarity);
}

void ImageOverlayPanel::setSimilarityAvailable(bool available) {
    auto* model = qobject_cast<QStandardItemModel*>(source_->model());
    const int row = source_->findData(int(OverlaySource::Similarity));
    if (model && row >= 0) model->item(row)->setEnabled(available);
    if (!available && source() == OverlaySource::Similarity)
        source_->setCurrentIndex(source_->findData(int(OverlaySource::Head)));
}

OverlayPicture ImageOverlayPanel::picture() const {
    OverlayPicture p;
    p.image = image_;
    p.gridRows = overlay_.grid.rows;
    p.gridCols = overlay_.grid.cols;
    p.values = overlay_.patches;
    p.maxValue = overlay_.maxPatch > 0 ? overlay_.maxPatch : 1.0;
    p.colormap = Colormap(colormap_->currentIndex());
    p.opacity = opacity_->value() / 100.0;
    p.smooth = smooth_->isChecked();
    p.grid = grid_->isChecked();
    const auto& pos = overlay_.grid.positions;
    const auto it = std::find(pos.begin(), pos.end(), overlay_.query);
    p.markedPatch = it == pos.end() ? -1 : int(it - pos.begin());
    p.windows = overlay_.windows;
    p.diverging = overlay_.signedValues;
    if (overlay_.signedValues) p.markedPatch = -1;  // no row: the text's match
    return p;
}

void ImageOverlayPanel::showOverlay(const attnscope::PatchOverlay& overlay, const QImage& image,
                                    const QString& caption) {
    overlay_ = overlay;
    image_ = image;
    setQuery(overlay.query);
    view_->setCaption(caption);
    export_->setEnabled(true);
    redraw();
}

void ImageOverlayPanel::showMessage(const QString& message) {
    overlay_ = {};
    image_ = {};
    view_->showMessage(message);
    export_->setEnabled(false);
}

void ImageOverlayPanel::redraw() {
    if (image_.isNull() || overlay_.patches.empty()) return;
    view_->setPicture(picture());
}
