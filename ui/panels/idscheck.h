// The "token ids" check of a tab that runs its own inputs (Causal, Long context): on a model
// without a tokenizer its inputs can only be ids, so the box is checked, locked and says why.
#pragma once

#include <QCheckBox>
#include <QSignalBlocker>
#include <QString>

inline void lockToIds(QCheckBox* ids, const QString& why) {
    const QSignalBlocker quiet(ids);
    ids->setChecked(true);
    ids->setEnabled(false);
    ids->setToolTip(why);
}
