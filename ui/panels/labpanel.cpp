#include "panels/labpanel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

namespace {

// A combo box that does not ask for its longest item's width (the dock stays narrow).
void compact(QComboBox* combo) {
    combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo->setMinimumContentsLength(8);
}

QLabel* wrapped(const QString& text) {
    auto* label = new QLabel(text);
    label->setWordWrap(true);
    return label;
}

}  // namespace

LabPanel::LabPanel(QWidget* parent) : QWidget(parent) {
    auto* variantBox = new QGroupBox(tr("Map variant of the shown head"));
    variantForm_ = new QFormLayout(variantBox);
    QFormLayout* form = variantForm_;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    variant_ = new QComboBox;
    variant_->setObjectName(QStringLiteral("variantCombo"));
    variant_->addItem(tr("Model's own"));
    variant_->addItem(tr("Dot product (softmax)"));
    variant_->addItem(tr("Linear (feature map)"));
    variant_->addItem(tr("Additive (fitted)"));
    variant_->addItem(tr("Hybrid (gated mix)"));
    variant_->setToolTip(tr("Recompute the shown head's map from its captured q and k"));
    compact(variant_);
    form->addRow(tr("Variant:"), variant_);
    featureMap_ = new QComboBox;
    featureMap_->setObjectName(QStringLiteral("featureMapCombo"));
    featureMap_->addItem(tr("elu + 1"));
    featureMap_->addItem(tr("relu"));
    featureMap_->addItem(tr("FAVOR+ (random features)"));
    compact(featureMap_);
    form->addRow(tr("φ:"), featureMap_);
    features_ = new QSpinBox;
    features_->setObjectName(QStringLiteral("featuresSpin"));
    features_->setRange(1, 8192);
    features_->setValue(256);
    features_->setKeyboardTracking(false);
    features_->setToolTip(
            tr("FAVOR+: the number M of positive random features (fixed seed); more = closer to softmax"));
    form->addRow(tr("FAVOR+ M:"), features_);
    fitWidth_ = new QSpinBox;
    fitWidth_->setObjectName(QStringLiteral("fitWidthSpin"));
    fitWidth_->setRange(1, 512);
    fitWidth_->setValue(32);
    fitWidth_->setToolTip(tr("Width of the additive fit's W_q, W_k and v"));
    fitSteps_ = new QSpinBox;
    fitSteps_->setObjectName(QStringLiteral("fitStepsSpin"));
    fitSteps_->setRange(1, 10000);
    fitSteps_->setValue(300);
    fitSteps_->setToolTip(tr("Adam steps of the additive fit"));
    fit_ = new QPushButton(tr("Fit additive"));
    fit_->setObjectName(QStringLiteral("fitButton"));
    fit_->setToolTip(
            tr("Fit W_q, W_k and v of additive attention to this head's dot-product map (Adam, minimises KL)"));
    auto* fitRow = new QHBoxLayout;
    fitRow->addWidget(fitWidth_);
    fitRow->addWidget(fitSteps_);
    form->addRow(tr("Fit width, steps:"), fitRow);
    form->addRow(fit_);
    fitLabel_ = wrapped(tr("<i>No additive fit yet.</i>"));
    fitLabel_->setObjectName(QStringLiteral("fitLabel"));
    form->addRow(fitLabel_);
    gate_ = new QSlider(Qt::Horizontal);
    gate_->setObjectName(QStringLiteral("gateSlider"));
    gate_->setRange(0, 100);
    gate_->setValue(50);
    gate_->setToolTip(tr("Hybrid: g · additive + (1 − g) · dot"));
    gateValue_ = new QLabel;
    gateValue_->setMinimumWidth(gateValue_->fontMetrics().horizontalAdvance(QStringLiteral("g = 0.00")));
    auto* gateRow = new QHBoxLayout;
    gateRow->addWidget(gate_, 1);
    gateRow->addWidget(gateValue_);
    gateRow_ = gateRow;
    form->addRow(tr("Gate:"), gateRow);
    variantKl_ = wrapped(QString());
    variantKl_->setObjectName(QStringLiteral("variantKlLabel"));
    variantKl_->setToolTip(tr("Mean over queries of KL(dot-product map ‖ shown map) for this head, in nats"));
    form->addRow(variantKl_);

    auto* maskBox = new QGroupBox(tr("Head masking"));
    auto* maskLayout = new QVBoxLayout(maskBox);
    auto* hint = wrapped(tr("Ctrl+click or right-click a head in the overview to mask it."));
    QFont small = hint->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    hint->setFont(small);
    masks_ = new QListWidget;
    masks_->setObjectName(QStringLiteral("maskList"));
    masks_->setMaximumHeight(84);
    masks_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    unmask_ = new QPushButton(tr("Unmask"));
    unmask_->setObjectName(QStringLiteral("unmaskButton"));
    clearMasks_ = new QPushButton(tr("Clear all"));
    clearMasks_->setObjectName(QStringLiteral("clearMasksButton"));
    auto* maskButtons = new QHBoxLayout;
    maskButtons->addWidget(unmask_);
    maskButtons->addWidget(clearMasks_);
    importance_ = new QComboBox;
    importance_->setObjectName(QStringLiteral("importanceCombo"));
    importance_->addItem(tr("lowest entropy"));
    importance_->addItem(tr("output change"));
    importance_->setToolTip(tr("Rank heads by how focused they are, or by the output change when each is masked alone "
                               "(one run per head)"));
    compact(importance_);
    pruneCount_ = new QSpinBox;
    pruneCount_->setObjectName(QStringLiteral("pruneCountSpin"));
    pruneCount_->setRange(1, 4096);
    pruneCount_->setValue(4);
    pruneCount_->setToolTip(tr("How many heads Prune and Ablate mask"));
    prune_ = new QPushButton(tr("Prune"));
    prune_->setObjectName(QStringLiteral("pruneButton"));
    prune_->setToolTip(tr("Mask the K least important heads, as the Corpus tab's pruning curve does: what the model "
                          "keeps without the heads that matter least"));
    ablate_ = new QPushButton(tr("Ablate top K"));
    ablate_->setObjectName(QStringLiteral("ablateButton"));
    ablate_->setToolTip(tr("Mask the K most important heads: what the model loses without them"));
    auto* rankForm = new QFormLayout;
    rankForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    rankForm->setContentsMargins(0, 0, 0, 0);
    rankForm->addRow(tr("Rank by:"), importance_);
    rankForm->addRow(tr("K heads:"), pruneCount_);
    auto* pruneRow = new QHBoxLayout;
    pruneRow->addWidget(prune_);
    pruneRow->addWidget(ablate_);
    maskLayout->addWidget(hint);
    maskLayout->addWidget(masks_);
    maskLayout->addLayout(maskButtons);
    maskLayout->addLayout(rankForm);
    maskLayout->addLayout(pruneRow);

    auto* knockoutBox = new QGroupBox(tr("Attention knockout"));
    auto* knockoutLayout = new QVBoxLayout(knockoutBox);
    knockout_ = new QLineEdit;
    knockout_->setObjectName(QStringLiteral("knockoutEdit"));
    knockout_->setPlaceholderText(tr("queries:keys@layers, e.g. 4,3:0,1@0-1"));
    knockout_->setToolTip(tr("Set the logits from these query positions to these key positions to −∞ in layers a…b "
                             "and re-run the model (Geva et al. 2023); several separated by ';'"));
    knockoutApply_ = new QPushButton(tr("Knock out"));
    knockoutApply_->setObjectName(QStringLiteral("knockoutApplyButton"));
    knockoutClear_ = new QPushButton(tr("Clear"));
    knockoutClear_->setObjectName(QStringLiteral("knockoutClearButton"));
    knockoutClear_->setEnabled(false);
    auto* knockoutRow = new QHBoxLayout;
    knockoutRow->addWidget(knockoutApply_);
    knockoutRow->addWidget(knockoutClear_);
    knockoutLabel_ = wrapped(QString());
    knockoutLabel_->setObjectName(QStringLiteral("knockoutLabel"));
    knockoutLayout->addWidget(knockout_);
    knockoutLayout->addLayout(knockoutRow);
    knockoutLayout->addWidget(knockoutLabel_);

    auto* jobBox = new QGroupBox(tr("Lab jobs"));
    auto* jobLayout = new QVBoxLayout(jobBox);
    job_ = wrapped(tr("Idle."));
    job_->setObjectName(QStringLiteral("labJobLabel"));
    progress_ = new QProgressBar;
    progress_->setObjectName(QStringLiteral("labProgress"));
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    progress_->setTextVisible(false);
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setObjectName(QStringLiteral("labCancelButton"));
    cancel_->setEnabled(false);
    auto* jobRow = new QHBoxLayout;
    jobRow->addWidget(progress_, 1);
    jobRow->addWidget(cancel_);
    jobLayout->addWidget(job_);
    jobLayout->addLayout(jobRow);

    auto* column = new QVBoxLayout(this);
    column->addWidget(variantBox);
    column->addWidget(maskBox);
    column->addWidget(knockoutBox);
    column->addWidget(jobBox);
    column->addStretch(1);

    const auto changed = [this] {
        updateEnabled();
        emit variantChanged();
    };
    connect(variant_, &QComboBox::currentIndexChanged, this, changed);
    connect(featureMap_, &QComboBox::currentIndexChanged, this, changed);
    connect(features_, &QSpinBox::valueChanged, this, changed);
    connect(gate_, &QSlider::valueChanged, this, changed);
    connect(masks_, &QListWidget::itemSelectionChanged, this,
            [this] { unmask_->setEnabled(!masks_->selectedItems().isEmpty()); });
    updateEnabled();
    setMaskedHeads({});
}

LabVariant LabPanel::variant() const { return LabVariant(std::max(0, variant_->currentIndex())); }
void LabPanel::setVariant(LabVariant v) { variant_->setCurrentIndex(int(v)); }

attnscope::FeatureMap LabPanel::featureMap() const {
    switch (featureMap_->currentIndex()) {
        case 1: return attnscope::FeatureMap::Relu;
        case 2: return attnscope::FeatureMap::Favor;
        default: return attnscope::FeatureMap::Elu;
    }
}

double LabPanel::gate() const { return gate_->value() / 100.0; }

attnscope::Importance LabPanel::importance() const {
    return importance_->currentIndex() == 1 ? attnscope::Importance::OutputChange : attnscope::Importance::Entropy;
}

void LabPanel::updateEnabled() {
    const LabVariant v = variant();
    featureMap_->setEnabled(v == LabVariant::Linear);
    features_->setEnabled(v == LabVariant::Linear && featureMap() == attnscope::FeatureMap::Favor);
    gate_->setEnabled(v == LabVariant::Hybrid);
    // Only the rows the variant uses show.
    variantForm_->setRowVisible(featureMap_, featureMap_->isEnabled());
    variantForm_->setRowVisible(features_, features_->isEnabled());
    variantForm_->setRowVisible(gateRow_, gate_->isEnabled());
    gateValue_->setText(QStringLiteral("g = %1").arg(gate(), 0, 'f', 2));
}

void LabPanel::setMaskedHeads(const std::vector<attnscope::HeadRef>& heads) {
    QStringList selected;
    for (auto* item : masks_->selectedItems()) selected << item->text();
    masks_->clear();
    for (const auto& h : heads) {
        const QString text =
                QStringLiteral("%1 · layer %2 · head %3").arg(QString::fromStdString(h.block)).arg(h.layer).arg(h.head);
        auto* item = new QListWidgetItem(text, masks_);
        item->setSelected(selected.contains(text));
    }
    clearMasks_->setEnabled(!heads.empty());
    unmask_->setEnabled(!masks_->selectedItems().isEmpty());
    // An empty list takes no room.
    masks_->setVisible(!heads.empty());
    unmask_->setVisible(!heads.empty());
    clearMasks_->setVisible(!heads.empty());
}

void LabPanel::setJob(const QString& text) {
    const bool busy = !text.isEmpty();
    job_->setText(busy ? text : tr("Idle."));
    cancel_->setEnabled(busy);
    progress_->setEnabled(busy);
    progress_->setRange(0, busy ? 0 : 1000);  // busy: moving until the first report
    progress_->setValue(0);
}

void LabPanel::setJobProgress(int permille) {
    if (permille < 0) {
        progress_->setRange(0, 0);
        return;
    }
    progress_->setRange(0, 1000);
    progress_->setValue(permille);
}
