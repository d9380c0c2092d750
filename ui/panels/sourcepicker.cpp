#include "panels/sourcepicker.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QStandardItemModel>

using attnscope::MapSource;

SourcePicker::SourcePicker(QWidget* parent) : QWidget(parent) {
    show_ = new QComboBox;
    show_->setObjectName(QStringLiteral("showCombo"));
    show_->setToolTip(tr("What the maps show: the attention weights, or what the heads move (value-weighted), "
                         "what each token contributes (ALTI) or what the output's gradient credits (relevance). "
                         "docs/map_sources.md gives the formulas."));
    for (MapSource s : attnscope::kMapSources) show_->addItem(QString::fromUtf8(attnscope::sourceLabel(s)), int(s));
    target_ = new QComboBox;
    target_->setObjectName(QStringLiteral("targetCombo"));
    target_->setToolTip(tr("The output the gradient explains: a next token (language models) or a class"));
    targetLabel_ = new QLabel(tr("Target:"));
    note_ = new QLabel;
    note_->setObjectName(QStringLiteral("sourceNote"));
    note_->setWordWrap(true);
    note_->setVisible(false);
    for (QComboBox* c : {show_, target_}) {  // narrow docks: the combo boxes never widen them
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(10);
    }
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Show:"), show_);
    form->addRow(targetLabel_, target_);
    form->addRow(note_);
    setTargets({});
    setTargetShown(false);
    connect(show_, &QComboBox::currentIndexChanged, this, [this] { emit sourceChosen(source()); });
    connect(target_, &QComboBox::currentIndexChanged, this, [this] { emit targetChosen(target()); });
}

MapSource SourcePicker::source() const { return MapSource(show_->currentData().toInt()); }

void SourcePicker::setSource(MapSource source) {
    const QSignalBlocker block(show_);
    show_->setCurrentIndex(show_->findData(int(source)));
}

void SourcePicker::setUnavailable(const std::vector<QString>& reasons) {
    auto* model = qobject_cast<QStandardItemModel*>(show_->model());
    for (int i = 0; i < show_->count(); ++i) {
        const QString why = i < int(reasons.size()) ? reasons[std::size_t(i)] : QString();
        QStandardItem* item = model->item(i);
        item->setEnabled(why.isEmpty());
        item->setToolTip(why);
    }
}

bool SourcePicker::isAvailable(MapSource source) const { return unavailableReason(source).isEmpty(); }

QString SourcePicker::unavailableReason(MapSource source) const {
    const int i = show_->findData(int(source));
    return i < 0 ? QString() : show_->itemData(i, Qt::ToolTipRole).toString();
}

void SourcePicker::setTargets(const std::vector<std::pair<QString, std::int64_t>>& choices) {
    const std::optional<std::int64_t> keep = target();
    const QSignalBlocker block(target_);
    target_->clear();
    target_->addItem(tr("model's choice (argmax)"));
    for (const auto& [label, id] : choices) target_->addItem(label, qint64(id));
    const int i = keep ? target_->findData(qint64(*keep)) : 0;
    target_->setCurrentIndex(std::max(0, i));
}

std::optional<std::int64_t> SourcePicker::target() const {
    const QVariant v = target_->currentData();
    if (!v.isValid()) return std::nullopt;
    return std::int64_t(v.toLongLong());
}

void SourcePicker::setTarget(std::optional<std::int64_t> target) {
    const QSignalBlocker block(target_);
    if (!target) {
        target_->setCurrentIndex(0);
        return;
    }
    int i = target_->findData(qint64(*target));
    if (i < 0) {  // a saved target not among the current choices: listed by its number
        target_->addItem(tr("#%1").arg(*target), qint64(*target));
        i = target_->count() - 1;
    }
    target_->setCurrentIndex(i);
}

void SourcePicker::setTargetShown(bool shown) {
    targetLabel_->setVisible(shown);
    target_->setVisible(shown);
}

void SourcePicker::setNote(const QString& text) {
    note_->setText(text);
    note_->setVisible(!text.isEmpty());
}
