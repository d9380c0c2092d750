// DeviceCombo: where models open: "auto" (a CUDA GPU when there is one, else the CPU), "cpu" or
// "cuda". The cuda entry is disabled, with a tooltip saying why, when core's cudaAvailable() is
// false (LibTorch without CUDA, or no GPU visible).
#pragma once

#include "attnscope/models/model.h"

#include <QComboBox>

class DeviceCombo : public QComboBox {
    Q_OBJECT
public:
    // cudaUsable: whether a GPU can be chosen (attnscope::cudaAvailable() by default).
    explicit DeviceCombo(QWidget* parent = nullptr);
    DeviceCombo(bool cudaUsable, QWidget* parent = nullptr);

    attnscope::DeviceChoice choice() const;
    // Selects the entry; a disabled cuda entry is not selected (returns false).
    bool setChoice(attnscope::DeviceChoice choice);
    bool cudaUsable() const { return cudaUsable_; }
    // The tooltip of a disabled cuda entry: why it cannot be chosen.
    static QString cudaUnavailableReason();

signals:
    void choiceChanged(attnscope::DeviceChoice choice);

private:
    bool cudaUsable_ = false;
};
