// Small conversions and widgets the ui views share.
#pragma once

#include <QLabel>
#include <QString>
#include <QStringList>

#include <string>
#include <vector>

// Core's UTF-8 labels as Qt strings, in order.
inline QStringList toQtStrings(const std::vector<std::string>& labels) {
    QStringList out;
    for (const auto& s : labels) out << QString::fromStdString(s);
    return out;
}

// A word-wrapped, selectable rich-text label, named for tests.
inline QLabel* richTextLabel(const QString& objectName) {
    auto* label = new QLabel;
    label->setObjectName(objectName);
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}
