#include "panels/devicecombo.h"

#include <QStandardItemModel>

DeviceCombo::DeviceCombo(QWidget* parent) : DeviceCombo(attnscope::cudaAvailable(), parent) {}

DeviceCombo::DeviceCombo(bool cudaUsable, QWidget* parent) : QComboBox(parent), cudaUsable_(cudaUsable) {
    setObjectName(QStringLiteral("deviceCombo"));
    addItem(tr("auto (GPU if available)"), int(attnscope::DeviceChoice::Auto));
    addItem(tr("cpu"), int(attnscope::DeviceChoice::Cpu));
    addItem(tr("cuda (GPU)"), int(attnscope::DeviceChoice::Cuda));
    setItemData(0, tr("A CUDA GPU when one is usable, otherwise the CPU."), Qt::ToolTipRole);
    setItemData(1, tr("Weights and the forward pass on the CPU."), Qt::ToolTipRole);
    if (cudaUsable_) {
        setItemData(2, tr("Weights and the forward pass on the GPU, in F16/BF16 where the checkpoint is."),
                    Qt::ToolTipRole);
        setToolTip(tr("Where models open. Changing it reopens the current model."));
    } else {
        if (auto* items = qobject_cast<QStandardItemModel*>(model())) items->item(2)->setEnabled(false);
        setItemData(2, cudaUnavailableReason(), Qt::ToolTipRole);
        setToolTip(tr("Where models open. %1").arg(cudaUnavailableReason()));
    }
    connect(this, &QComboBox::currentIndexChanged, this, [this] { emit choiceChanged(choice()); });
}

attnscope::DeviceChoice DeviceCombo::choice() const {
    return static_cast<attnscope::DeviceChoice>(currentData().toInt());
}

bool DeviceCombo::setChoice(attnscope::DeviceChoice choice) {
    if (choice == attnscope::DeviceChoice::Cuda && !cudaUsable_) return false;
    setCurrentIndex(findData(int(choice)));
    return true;
}

QString DeviceCombo::cudaUnavailableReason() {
    return tr("CUDA is not available: this build's LibTorch has no CUDA support or no GPU is visible.");
}
