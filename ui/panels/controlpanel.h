// ControlPanel: the left-hand column of the window: model picker and summary, the input (text,
// or token ids for models without a tokenizer) with Run, the map selection (block, layer, head),
// the display temperature, colours, and the model's outputs. Widgets only; MainWindow wires
// them to the session and the views, and fills the slots for other parts' rows (the lab's).
#pragma once

#include "figure/colormaps.h"

#include <QWidget>

class DeviceCombo;
class ImageInputBar;
class ModelPicker;
class OutputPanel;
class SourcePicker;
class TemperatureSlider;
class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLayout;
class QLineEdit;
class QPushButton;
class QSpinBox;

class ControlPanel : public QWidget {
    Q_OBJECT
public:
    explicit ControlPanel(QWidget* parent = nullptr);

    ModelPicker* picker() const { return picker_; }
    QLabel* modelLabel() const { return modelLabel_; }
    QLineEdit* input() const { return input_; }
    // Encoder-decoder models: the decoder's target (text, or ids in ids mode); empty = generate.
    QLineEdit* targetInput() const { return target_; }
    QCheckBox* idsCheck() const { return ids_; }
    QPushButton* runButton() const { return run_; }
    // The Show selector (what the maps show: weights or another map source), first in the
    // attention map box.
    SourcePicker* sourcePicker() const { return sourcePicker_; }
    QComboBox* blockCombo() const { return block_; }
    QSpinBox* layerSpin() const { return layer_; }
    QSpinBox* headSpin() const { return head_; }
    TemperatureSlider* temperature() const { return temperature_; }
    QComboBox* colormapCombo() const { return colormap_; }
    QComboBox* scaleCombo() const { return scale_; }
    OutputPanel* outputs() const { return outputs_; }
    DeviceCombo* device() const { return device_; }
    ImageInputBar* imageInput() const { return image_; }
    // Under the head spin box: which key/value group the head shares (grouped-query attention).
    QLabel* headGroupLabel() const { return headGroup_; }

    Colormap colormap() const;
    ColorScale colorScale() const;
    bool idsMode() const;
    // Ids-only models: the box is ticked and locked.
    void setTokenizerAvailable(bool available);
    // Encoder-decoder models get a second box for the target under the source.
    void setTargetInput(bool encoderDecoder);
    // The target box's text when it is shown, else empty (= generate).
    QString targetText() const;
    // Image models take an image (the image bar) instead of text or ids.
    // withText: an image–text model (CLIP, SigLIP) takes the image and the text box's text.
    void setImageInput(bool image, bool withText = false);
    // Shows the block row only when the model has several blocks.
    void setBlocks(const QStringList& names, const QString& keep);

    // Slots for rows other parts add (the panel takes ownership): under the temperature slider,
    // in the order added, and under the outputs.
    void addTemperatureRow(QWidget* row);
    void addOutputWidget(QWidget* widget);
    // The slider's caption: the display temperature, or (inside) the temperature in the model.
    void setTemperatureInside(bool inside);

signals:
    void coloringChanged();

private:
    ModelPicker* picker_ = nullptr;
    QLabel* modelLabel_ = nullptr;
    QLineEdit* input_ = nullptr;
    QLineEdit* target_ = nullptr;
    QLabel* sourceLabel_ = nullptr;
    QLabel* targetLabel_ = nullptr;
    void updatePlaceholders();
    QCheckBox* ids_ = nullptr;
    QPushButton* run_ = nullptr;
    SourcePicker* sourcePicker_ = nullptr;
    QLabel* blockLabel_ = nullptr;
    QComboBox* block_ = nullptr;
    QSpinBox* layer_ = nullptr;
    QSpinBox* head_ = nullptr;
    TemperatureSlider* temperature_ = nullptr;
    QLabel* temperatureCaption_ = nullptr;
    QFormLayout* viewForm_ = nullptr;  // the attention map box: rows go under the slider
    int temperatureRows_ = 0;          // rows added under the slider so far
    QComboBox* colormap_ = nullptr;
    QComboBox* scale_ = nullptr;
    OutputPanel* outputs_ = nullptr;
    QLayout* outputLayout_ = nullptr;
    DeviceCombo* device_ = nullptr;
    ImageInputBar* image_ = nullptr;
    QLabel* headGroup_ = nullptr;
};
