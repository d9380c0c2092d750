// Core's labels as Qt strings, shared by the views and the figures.
#pragma once

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

// Token i as an axis tick of a map, the same in the views and the figures: its index when
// labels has none; byte-level BPE's leading-space mark 'Ġ' as '␣' and newline mark 'Ċ' as "\n";
// longer than 14 characters elided with '…'.
inline QString tickText(const QStringList& labels, int i) {
    constexpr int kMaxChars = 14;
    QString t = i < labels.size() ? labels[i] : QString::number(i);
    t.replace(QChar(0x0120), QChar(0x2423)).replace(QChar(0x010A), QStringLiteral("\\n"));
    return t.size() > kMaxChars ? t.left(kMaxChars - 1) + QChar(0x2026) : t;
}

// Every how many cells of `pitch` pixels an axis label `labelWidth` wide can go without touching
// its neighbour: 1 when a label fits in a cell.
inline int labelStep(int pitch, int labelWidth) {
    return pitch >= labelWidth ? 1 : labelWidth / (pitch > 0 ? pitch : 1) + 1;
}

// A duration as the window shows it everywhere: "850 ms" (one decimal under 10 ms), "22.0 s"
// from 1 s, "3 min 05 s" from a minute.
inline QString formatDuration(double ms) {
    if (!(ms >= 0)) ms = 0;
    if (ms < 1000) return QString::number(ms, 'f', ms < 10 ? 1 : 0) + QStringLiteral(" ms");
    const double s = ms / 1000;
    if (s < 60) return QString::number(s, 'f', 1) + QStringLiteral(" s");
    const long long whole = static_cast<long long>(s + 0.5);
    return QStringLiteral("%1 min %2 s").arg(whole / 60).arg(whole % 60, 2, 10, QLatin1Char('0'));
}
