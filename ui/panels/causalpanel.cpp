#include "panels/causalpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

namespace {

QComboBox* tokenCombo(const QString& name, const QString& tip) {
    auto* combo = new QComboBox;
    combo->setObjectName(name);
    combo->setEditable(true);
    combo->setInsertPolicy(QComboBox::NoInsert);
    combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo->setMinimumContentsLength(10);
    combo->setToolTip(tip);
    return combo;
}

// The id a token box holds: the offered item's when its text is shown, else a typed number.
std::optional<std::int64_t> comboToken(const QComboBox* combo) {
    const QString text = combo->currentText().trimmed();
    const int i = combo->findText(combo->currentText());
    if (i >= 0 && combo->itemData(i).isValid()) {
        const qlonglong id = combo->itemData(i).toLongLong();
        return id < 0 ? std::nullopt : std::optional<std::int64_t>(id);
    }
    bool ok = false;
    const qlonglong id = text.toLongLong(&ok);
    return ok && id >= 0 ? std::optional<std::int64_t>(id) : std::nullopt;
}

void setComboToken(QComboBox* combo, std::optional<std::int64_t> id) {
    const int i = combo->findData(QVariant::fromValue<qlonglong>(id ? *id : -1));
    if (i >= 0)
        combo->setCurrentIndex(i);
    else
        combo->setEditText(id ? QString::number(*id) : QString());
    combo->lineEdit()->setCursorPosition(0);  // the token's text, not the end of the line, when narrow
}

}  // namespace

CausalPanel::CausalPanel(QWidget* parent) : QWidget(parent) {
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    reason_ = new QLabel;
    reason_->setObjectName(QStringLiteral("causalReason"));
    reason_->setWordWrap(true);
    reason_->setStyleSheet(QStringLiteral("color: #a04000;"));
    reason_->hide();
    column->addWidget(reason_);
    column->addWidget(buildInputs());
    column->addWidget(buildPatchRow());

    lens_ = new LensView(QStringLiteral("causalLens"));
    lens_->setObjectName(QStringLiteral("causalLensView"));
    dla_ = new SignedMapView(QStringLiteral("causalDla"));
    dla_->setObjectName(QStringLiteral("causalDlaView"));
    dla_->clear(tr("Direct logit attribution shows after Run, for the answer chosen."));
    patchView_ = new SignedMapView(QStringLiteral("causalPatch"));
    patchView_->setObjectName(QStringLiteral("causalPatchView"));
    patchView_->clear(tr("Give a corrupt input of the clean one's length and press Patch."));
    auto* lower = new QSplitter(Qt::Horizontal);
    lower->addWidget(dla_);
    lower->addWidget(patchView_);
    lower->setChildrenCollapsible(false);
    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("causalSplit"));
    split->addWidget(lens_);
    split->addWidget(lower);
    split->setChildrenCollapsible(false);
    split->setStretchFactor(0, 2);  // the maps below carry notes and bars
    split->setStretchFactor(1, 3);
    column->addWidget(split, 1);
}

QWidget* CausalPanel::buildInputs() {
    auto* box = new QWidget;
    auto* grid = new QGridLayout(box);
    grid->setContentsMargins(0, 0, 0, 0);
    clean_ = new QLineEdit;
    clean_->setObjectName(QStringLiteral("causalClean"));
    clean_->setPlaceholderText(tr("the main input"));
    clean_->setToolTip(tr("The clean input (empty: the window's input)"));
    corrupt_ = new QLineEdit;
    corrupt_->setObjectName(QStringLiteral("causalCorrupt"));
    corrupt_->setPlaceholderText(tr("same length as the clean input"));
    corrupt_->setToolTip(tr("The corrupt input for patching: as many tokens as the clean one"));
    ids_ = new QCheckBox(tr("Token ids"));
    ids_->setObjectName(QStringLiteral("causalIds"));
    ids_->setToolTip(tr("The boxes hold token ids (3,17,42) instead of text"));
    answer_ = tokenCombo(QStringLiteral("causalAnswer"),
                         tr("T: the answer, from the clean run's top predictions at P, or a typed vocabulary id"));
    wrong_ = tokenCombo(QStringLiteral("causalWrong"),
                        tr("T2: LD = logit(T) − logit(T2); (none): LD = logit(T). Or a typed vocabulary id"));
    position_ = new QSpinBox;
    position_->setObjectName(QStringLiteral("causalPosition"));
    position_->setRange(-1, 1 << 20);
    position_->setValue(-1);
    position_->setSpecialValueText(tr("last"));
    position_->setToolTip(tr("P: the position whose next-token logits are read (last: the last token)"));
    run_ = new QPushButton(tr("Run"));
    run_->setObjectName(QStringLiteral("causalRun"));
    run_->setToolTip(tr("Run the clean input: its logit lens, its top predictions and the DLA of the answer"));
    // Rows rather than one long line, so the tab fits beside the docks on a laptop screen.
    grid->addWidget(new QLabel(tr("Clean:")), 0, 0);
    grid->addWidget(clean_, 0, 1, 1, 3);
    grid->addWidget(ids_, 0, 4);
    grid->addWidget(new QLabel(tr("Corrupt:")), 1, 0);
    grid->addWidget(corrupt_, 1, 1, 1, 3);
    grid->addWidget(new QLabel(tr("Answer T:")), 2, 0);
    grid->addWidget(answer_, 2, 1);
    grid->addWidget(new QLabel(tr("minus T2:")), 2, 2);
    grid->addWidget(wrong_, 2, 3);
    auto* posRow = new QHBoxLayout;
    posRow->addWidget(new QLabel(tr("P:")));
    posRow->addWidget(position_);
    posRow->addWidget(run_);
    grid->addLayout(posRow, 2, 4);
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(3, 1);
    wrong_->addItem(tr("(none)"), QVariant::fromValue<qlonglong>(-1));

    const auto changed = [this] { emit settingsChanged(); };
    connect(clean_, &QLineEdit::editingFinished, this, changed);
    connect(ids_, &QCheckBox::toggled, this, changed);
    connect(position_, &QSpinBox::valueChanged, this, changed);
    for (QComboBox* c : {answer_, wrong_}) {
        connect(c, &QComboBox::currentIndexChanged, this, [this] { emit tokensChanged(); });
        connect(c->lineEdit(), &QLineEdit::editingFinished, this, [this] { emit tokensChanged(); });
    }
    return box;
}

QWidget* CausalPanel::buildPatchRow() {
    auto* box = new QWidget;
    auto* row = new QHBoxLayout(box);
    row->setContentsMargins(0, 0, 0, 0);
    what_ = new QComboBox;
    what_->setObjectName(QStringLiteral("causalWhat"));
    what_->addItem(tr("heads (layer × head)"));
    what_->addItem(tr("residual (layer × position)"));
    what_->addItem(tr("attention out (layer × position)"));
    what_->addItem(tr("MLP out (layer × position)"));
    what_->setToolTip(tr("What the corrupt run takes from the clean one, one site at a time"));
    what_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    what_->setMinimumContentsLength(12);
    method_ = new QComboBox;
    method_->setObjectName(QStringLiteral("causalMethod"));
    method_->addItem(tr("exact"));
    method_->addItem(tr("attribution (linear approx.)"));
    method_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    method_->setMinimumContentsLength(8);
    method_->setToolTip(tr("Exact: one run per site. Attribution: one backward pass, a linear approximation"));
    patch_ = new QPushButton(tr("Patch"));
    patch_->setObjectName(QStringLiteral("causalPatchButton"));
    patch_->setToolTip(tr("Activation patching of the corrupt run with the clean one, site by site"));
    progress_ = new QProgressBar;
    progress_->setObjectName(QStringLiteral("causalProgress"));
    progress_->setRange(0, 1000);
    progress_->setTextVisible(false);
    progress_->setMaximumWidth(120);
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setObjectName(QStringLiteral("causalCancel"));
    cancel_->setEnabled(false);
    status_ = new QLabel;
    status_->setObjectName(QStringLiteral("causalStatus"));
    row->addWidget(new QLabel(tr("Patch:")));
    row->addWidget(what_);
    row->addWidget(method_);
    row->addWidget(patch_);
    row->addWidget(progress_);
    row->addWidget(cancel_);
    row->addWidget(status_, 1);
    return box;
}

std::optional<std::int64_t> CausalPanel::answer() const { return comboToken(answer_); }
std::optional<std::int64_t> CausalPanel::wrong() const { return comboToken(wrong_); }
void CausalPanel::setAnswer(std::optional<std::int64_t> id) { setComboToken(answer_, id); }
void CausalPanel::setWrong(std::optional<std::int64_t> id) { setComboToken(wrong_, id); }

void CausalPanel::offerTokens(const std::vector<std::int64_t>& ids, const QStringList& labels,
                              const std::vector<float>& probs, std::optional<std::int64_t> answer,
                              std::optional<std::int64_t> wrong) {
    const QSignalBlocker b0(answer_), b1(wrong_);
    answer_->clear();
    wrong_->clear();
    wrong_->addItem(tr("(none)"), QVariant::fromValue<qlonglong>(-1));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const QString text = QStringLiteral("%1  (#%2, p %3)")
                                     .arg(labels.value(int(i)))
                                     .arg(ids[i])
                                     .arg(i < probs.size() ? probs[i] : 0.f, 0, 'f', 3);
        answer_->addItem(text, QVariant::fromValue<qlonglong>(ids[i]));
        wrong_->addItem(text, QVariant::fromValue<qlonglong>(ids[i]));
    }
    setAnswer(answer);
    setWrong(wrong);
}

attnscope::PatchWhat CausalPanel::what() const { return attnscope::PatchWhat(std::max(0, what_->currentIndex())); }
void CausalPanel::setWhat(attnscope::PatchWhat what) { what_->setCurrentIndex(int(what)); }
bool CausalPanel::attribution() const { return method_->currentIndex() == 1; }

void CausalPanel::setApplicable(bool applicable, const QString& reason) {
    for (QWidget* w : std::initializer_list<QWidget*>{clean_, corrupt_, ids_, answer_, wrong_, position_, run_, what_,
                                                      method_, patch_}) {
        if (!w->property("baseTip").isValid()) w->setProperty("baseTip", w->toolTip());
        w->setEnabled(applicable);
        w->setToolTip(applicable ? w->property("baseTip").toString() : reason);
    }
    reason_->setText(reason);
    reason_->setVisible(!applicable && !reason.isEmpty());
}

void CausalPanel::setJob(const QString& text) {
    const bool busy = !text.isEmpty();
    status_->setText(text);
    cancel_->setEnabled(busy);
    progress_->setRange(0, busy ? 0 : 1000);
    progress_->setValue(0);
}

void CausalPanel::setJobProgress(int permille) {
    if (permille < 0) {
        progress_->setRange(0, 0);
        return;
    }
    progress_->setRange(0, 1000);
    progress_->setValue(permille);
}
