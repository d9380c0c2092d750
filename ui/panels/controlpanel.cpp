#include "panels/controlpanel.h"

#include "panels/devicecombo.h"
#include "panels/imageinput.h"
#include "panels/modelpicker.h"
#include "panels/outputpanel.h"
#include "panels/sourcepicker.h"
#include "views/temperatureslider.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

ControlPanel::ControlPanel(QWidget* parent) : QWidget(parent) {
    auto* modelBox = new QGroupBox(tr("Model"));
    auto* modelForm = new QVBoxLayout(modelBox);
    picker_ = new ModelPicker;
    modelLabel_ = new QLabel(tr("No model"));
    modelLabel_->setObjectName(QStringLiteral("modelLabel"));
    modelLabel_->setWordWrap(true);
    modelLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    modelForm->addWidget(picker_);
    device_ = new DeviceCombo;
    auto* deviceRow = new QFormLayout;
    deviceRow->addRow(tr("Device:"), device_);
    modelForm->addLayout(deviceRow);
    modelForm->addWidget(modelLabel_);

    auto* inputBox = new QGroupBox(tr("Input"));
    auto* inputForm = new QVBoxLayout(inputBox);
    input_ = new QLineEdit;
    input_->setObjectName(QStringLiteral("inputEdit"));
    input_->setClearButtonEnabled(true);
    ids_ = new QCheckBox(tr("Token ids (e.g. 3 17 42)"));
    ids_->setObjectName(QStringLiteral("idsCheck"));
    ids_->setToolTip(tr("Use the numbers as token ids exactly as given (no special tokens added)."));
    run_ = new QPushButton(tr("Run"));
    run_->setObjectName(QStringLiteral("runButton"));
    run_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
    run_->setToolTip(tr("Run the model on the input (Return or Ctrl+Return)"));
    run_->setEnabled(false);
    image_ = new ImageInputBar;
    image_->setObjectName(QStringLiteral("imageInputBar"));
    image_->setVisible(false);
    target_ = new QLineEdit;
    target_->setObjectName(QStringLiteral("targetEdit"));
    target_->setClearButtonEnabled(true);
    target_->setToolTip(
            tr("Teacher forcing: the decoder reads exactly this target. Leave it empty and the model generates "
               "its own output (greedy decoding)."));
    sourceLabel_ = new QLabel(tr("Source:"));
    targetLabel_ = new QLabel(tr("Target:"));
    auto* pair = new QFormLayout;
    pair->setContentsMargins(0, 0, 0, 0);
    pair->addRow(sourceLabel_, input_);
    pair->addRow(targetLabel_, target_);
    inputForm->addLayout(pair);
    inputForm->addWidget(ids_);
    inputForm->addWidget(image_);
    inputForm->addWidget(run_);
    connect(ids_, &QCheckBox::toggled, this, &ControlPanel::updatePlaceholders);
    setTargetInput(false);

    auto* viewBox = new QGroupBox(tr("Attention map"));
    auto* form = new QFormLayout(viewBox);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    sourcePicker_ = new SourcePicker;
    form->addRow(sourcePicker_);
    block_ = new QComboBox;
    block_->setObjectName(QStringLiteral("blockCombo"));
    blockLabel_ = new QLabel(tr("Block:"));
    form->addRow(blockLabel_, block_);
    blockLabel_->setVisible(false);
    block_->setVisible(false);
    layer_ = new QSpinBox;
    layer_->setObjectName(QStringLiteral("layerSpin"));
    head_ = new QSpinBox;
    head_->setObjectName(QStringLiteral("headSpin"));
    for (QSpinBox* spin : {layer_, head_}) {
        spin->setRange(0, 0);
        spin->setEnabled(false);
        spin->setKeyboardTracking(false);
        spin->setToolTip(tr("Arrow keys on the maps: left/right = head, up/down = layer"));
    }
    form->addRow(tr("Layer:"), layer_);
    form->addRow(tr("Head:"), head_);
    headGroup_ = new QLabel;
    headGroup_->setObjectName(QStringLiteral("headGroupLabel"));
    headGroup_->setWordWrap(true);
    headGroup_->setVisible(false);
    form->addRow(headGroup_);
    temperature_ = new TemperatureSlider;
    temperatureCaption_ = new QLabel;
    setTemperatureInside(false);
    form->addRow(temperatureCaption_);
    form->addRow(temperature_);
    viewForm_ = form;
    colormap_ = new QComboBox;
    colormap_->setObjectName(QStringLiteral("colormapCombo"));
    colormap_->addItems(colormapNames());
    scale_ = new QComboBox;
    scale_->setObjectName(QStringLiteral("scaleCombo"));
    scale_->addItem(tr("linear (0–1)"));
    scale_->addItem(tr("log (10⁻⁴–1)"));
    form->addRow(tr("Colours:"), colormap_);
    form->addRow(tr("Scale:"), scale_);
    connect(colormap_, &QComboBox::currentIndexChanged, this, &ControlPanel::coloringChanged);
    connect(scale_, &QComboBox::currentIndexChanged, this, &ControlPanel::coloringChanged);

    auto* outputBox = new QGroupBox(tr("Output"));
    auto* outputLayout = new QVBoxLayout(outputBox);
    outputs_ = new OutputPanel;
    outputLayout->addWidget(outputs_);
    outputLayout_ = outputLayout;

    auto* column = new QVBoxLayout(this);
    column->addWidget(modelBox);
    column->addWidget(inputBox);
    column->addWidget(viewBox);
    column->addWidget(outputBox);
    column->addStretch(1);
}

Colormap ControlPanel::colormap() const { return parseColormap(colormap_->currentText()).value_or(Colormap::Viridis); }

ColorScale ControlPanel::colorScale() const {
    ColorScale s;
    s.type = scale_->currentIndex() == 1 ? ColorScaleType::Log : ColorScaleType::Linear;
    return s;
}

bool ControlPanel::idsMode() const { return ids_->isChecked(); }

void ControlPanel::setTokenizerAvailable(bool available) {
    ids_->setChecked(!available);
    ids_->setEnabled(available);
    ids_->setToolTip(available ? tr("Use the numbers as token ids exactly as given (no special tokens added).")
                               : tr("This model has no tokenizer: its input is token ids."));
}

void ControlPanel::setImageInput(bool image, bool withText) {
    image_->setVisible(image);
    input_->setVisible(!image || withText);
    ids_->setVisible(!image || withText);
    if (image) setTargetInput(false);
}

void ControlPanel::setTargetInput(bool encoderDecoder) {
    for (QWidget* w : std::initializer_list<QWidget*>{target_, sourceLabel_, targetLabel_})
        w->setVisible(encoderDecoder);
    updatePlaceholders();
}

QString ControlPanel::targetText() const { return target_->isVisibleTo(this) ? target_->text() : QString(); }

void ControlPanel::updatePlaceholders() {
    const bool ids = ids_->isChecked();
    input_->setPlaceholderText(ids ? tr("token ids, e.g. 3 17 42") : tr("text to run through the model"));
    // Short enough to show whole in the narrow column; the tooltip says more.
    target_->setPlaceholderText(ids ? tr("ids from the start token (empty = generate)")
                                    : tr("empty = the model generates it"));
}

void ControlPanel::setBlocks(const QStringList& names, const QString& keep) {
    const QSignalBlocker blocker(block_);
    block_->clear();
    block_->addItems(names);
    const int found = block_->findText(keep);
    block_->setCurrentIndex(
            found >= 0 ? found
                       : (names.contains(QStringLiteral("cross")) ? names.indexOf(QStringLiteral("cross")) : 0));
    blockLabel_->setVisible(names.size() > 1);
    block_->setVisible(names.size() > 1);
}

void ControlPanel::addTemperatureRow(QWidget* row) {
    int at = -1;
    QFormLayout::ItemRole role;
    viewForm_->getWidgetPosition(temperature_, &at, &role);
    viewForm_->insertRow(at + 1 + temperatureRows_++, row);
}

void ControlPanel::addOutputWidget(QWidget* widget) { outputLayout_->addWidget(widget); }

void ControlPanel::setTemperatureInside(bool inside) {
    temperatureCaption_->setText(inside ? tr("Temperature inside the model (log scale):")
                                        : tr("Display temperature (log scale):"));
}
