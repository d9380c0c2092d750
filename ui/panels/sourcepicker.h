// SourcePicker: the Controls dock's Show selector: what the maps show (the weights, or one of the
// map sources of attnscope/analysis/map_source.h), and for the gradient sources the target to
// explain (one of the decoder's most likely next tokens or the classifier's labels, or the
// model's own choice). Sources that do not apply to the model are disabled, their tooltip saying
// why. Widgets only: the SourceController fills and follows it.
#pragma once

#include "attnscope/analysis/map_source.h"

#include <QString>
#include <QWidget>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

class QComboBox;
class QLabel;

class SourcePicker : public QWidget {
    Q_OBJECT
public:
    explicit SourcePicker(QWidget* parent = nullptr);

    QComboBox* showCombo() const { return show_; }      // "showCombo": one item per source
    QComboBox* targetCombo() const { return target_; }  // "targetCombo"
    QLabel* note() const { return note_; }              // "sourceNote": what the map is, or what is running

    attnscope::MapSource source() const;
    void setSource(attnscope::MapSource source);  // without emitting sourceChosen
    // Per source (kMapSources order): why it does not apply (empty = it does).
    void setUnavailable(const std::vector<QString>& reasons);
    bool isAvailable(attnscope::MapSource source) const;
    QString unavailableReason(attnscope::MapSource source) const;

    // The target choices after "the model's choice": (label, token id or class index).
    void setTargets(const std::vector<std::pair<QString, std::int64_t>>& choices);
    std::optional<std::int64_t> target() const;
    // Selects it (adding it when it is not among the choices); none = the model's choice.
    void setTarget(std::optional<std::int64_t> target);
    void setTargetShown(bool shown);
    void setNote(const QString& text);

signals:
    void sourceChosen(attnscope::MapSource source);
    void targetChosen(std::optional<std::int64_t> target);

private:
    QComboBox* show_ = nullptr;
    QComboBox* target_ = nullptr;
    QLabel* targetLabel_ = nullptr;
    QLabel* note_ = nullptr;
};
