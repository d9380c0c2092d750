// A rich-text label the views and panels share.
#pragma once

#include <QLabel>
#include <QString>

// A word-wrapped, selectable rich-text label, named for tests.
inline QLabel* richTextLabel(const QString& objectName) {
    auto* label = new QLabel;
    label->setObjectName(objectName);
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}
