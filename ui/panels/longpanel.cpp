#include "panels/longpanel.h"

#include "views/figurecanvas.h"
#include "views/headmetricmap.h"
#include "views/heatmapview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

namespace {

QSpinBox* spin(const QString& name, int lo, int hi, int value, const QString& tip) {
    auto* s = new QSpinBox;
    s->setObjectName(name);
    s->setRange(lo, hi);
    s->setValue(value);
    s->setToolTip(tip);
    return s;
}

QLineEdit* edit(const QString& name, const QString& text, const QString& placeholder, const QString& tip) {
    auto* e = new QLineEdit(text);
    e->setObjectName(name);
    e->setPlaceholderText(placeholder);
    e->setToolTip(tip);
    return e;
}

// Run, Cancel, the bar and the status line of a job.
QWidget* jobRow(QPushButton* run, QPushButton* cancel, QProgressBar* bar, QLabel* status) {
    auto* w = new QWidget;
    auto* v = new QVBoxLayout(w);
    v->setContentsMargins(0, 0, 0, 0);
    auto* row = new QHBoxLayout;
    row->addWidget(run);
    row->addWidget(cancel);
    row->addStretch(1);
    v->addLayout(row);
    v->addWidget(bar);  // under the buttons: the column stays narrow
    status->setWordWrap(true);
    v->addWidget(status);
    cancel->setEnabled(false);
    bar->setRange(0, 1000);
    bar->setValue(0);
    bar->setTextVisible(false);
    bar->setMaximumHeight(12);
    return w;
}

// The settings column's width at start (the splitter moves it): the forms wrap their labels
// above their fields when narrower than a label and a field side by side.
constexpr int kSettingsWidth = 250;

// A settings page: its form at the top, scrolled when the tab is short, never sideways.
QScrollArea* scrolled(QWidget* page) {
    auto* scroll = new QScrollArea;
    scroll->setWidget(page);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(kSettingsWidth * 4 / 5);
    return scroll;
}

// A form whose rows put the field under its label when the column is too narrow for both.
QFormLayout* narrowForm(QWidget* parent) {
    auto* form = new QFormLayout(parent);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    return form;
}

// The workspace's names of the policy combo's items, in its order.
const QStringList kPolicyKeys = {QStringLiteral("h2o"), QStringLiteral("snapkv"), QStringLiteral("streaming")};

}  // namespace

LongPanel::LongPanel(QWidget* parent) : QWidget(parent) {
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    reason_ = new QLabel;
    reason_->setObjectName(QStringLiteral("longReason"));
    reason_->setWordWrap(true);
    reason_->setStyleSheet(QStringLiteral("color: #a04000;"));
    reason_->hide();
    column->addWidget(reason_);

    // The two analyses' settings as two pages of a narrow column (the what-if's figure on its
    // page), so that the maps get the tab's width: at 1366 x 768 with every dock open the stacked
    // boxes took 360 of its 680 px and cut the figures' titles.
    settingsTabs_ = new QTabWidget;
    settingsTabs_->setObjectName(QStringLiteral("longSettingsTabs"));
    settingsTabs_->setDocumentMode(true);
    settingsTabs_->addTab(scrolled(buildScanBox()), tr("Needle scan"));
    settingsTabs_->addTab(scrolled(buildEvictBox()), tr("KV eviction"));
    auto* split = new QSplitter(Qt::Horizontal);
    split->setObjectName(QStringLiteral("longSplit"));
    split->addWidget(settingsTabs_);
    split->addWidget(buildResults());
    split->setStretchFactor(0, 1);  // a quarter of what the window adds, for the what-if's figure
    split->setStretchFactor(1, 3);
    split->setChildrenCollapsible(false);
    split->setSizes({kSettingsWidth, 3 * kSettingsWidth});
    column->addWidget(split, 1);
    connect(mapWhat_, &QComboBox::activated, this, &LongPanel::showPage);  // its items are the pages
    syncPolicyOptions();
}

QWidget* LongPanel::buildScanBox() {
    auto* box = new QWidget;
    auto* form = narrowForm(box);
    haystack_ = new QPlainTextEdit;
    haystack_->setObjectName(QStringLiteral("longHaystack"));
    haystack_->setPlaceholderText(tr("Filler text (or ids), at least as long as the longest context"));
    haystack_->setToolTip(tr("The context's filler: its first L − |needle| tokens make a context of length L"));
    haystack_->setFixedHeight(64);
    haystackFile_ = new QPushButton(tr("From file…"));
    haystackFile_->setObjectName(QStringLiteral("longHaystackFile"));
    haystackFile_->setToolTip(tr("Read the haystack from a text file"));
    auto* hay = new QVBoxLayout;
    hay->addWidget(haystack_);
    hay->addWidget(haystackFile_, 0, Qt::AlignLeft);
    form->addRow(tr("Haystack"), hay);
    needle_ = edit(QStringLiteral("longNeedle"), {}, tr("The fact hidden in the context"),
                   tr("Inserted after ⌊d · (L − |needle|)⌋ haystack tokens"));
    form->addRow(tr("Needle"), needle_);
    question_ = edit(QStringLiteral("longQuestion"), {}, tr("Asked after the context"),
                     tr("Appended after the context; the answer is generated after it"));
    form->addRow(tr("Question"), question_);
    answer_ = edit(QStringLiteral("longAnswer"), {}, tr("(the needle)"),
                   tr("A run succeeds when these tokens appear in the generated ones (empty: the needle's)"));
    form->addRow(tr("Answer"), answer_);
    ids_ = new QCheckBox(tr("Token ids"));
    ids_->setObjectName(QStringLiteral("longIds"));
    ids_->setToolTip(tr("The four boxes hold token ids (\"3 17 0\") instead of text"));
    form->addRow(QString(), ids_);
    lengths_ = edit(QStringLiteral("longLengths"), QStringLiteral("256,512,1024"), tr("e.g. 1024,2048,4096"),
                    tr("Context lengths L, comma-separated (needle included, question not)"));
    form->addRow(tr("Lengths"), lengths_);
    depths_ = edit(QStringLiteral("longDepths"), QStringLiteral("0,0.25,0.5,0.75,1"), tr("in [0, 1]"),
                   tr("Needle depths d in [0, 1], comma-separated: 0 at the start, 1 at the end"));
    form->addRow(tr("Depths"), depths_);
    scanTokens_ = spin(QStringLiteral("longScanTokens"), 1, 512, 16,
                       tr("Tokens generated greedily per run (stopping early only at the model's end token)"));
    form->addRow(tr("New tokens"), scanTokens_);
    scan_ = new QPushButton(tr("Scan"));
    scan_->setObjectName(QStringLiteral("longScan"));
    scan_->setToolTip(tr("Run every length × depth and score the retrieval heads"));
    scanCancel_ = new QPushButton(tr("Cancel"));
    scanCancel_->setObjectName(QStringLiteral("longScanCancel"));
    scanProgress_ = new QProgressBar;
    scanProgress_->setObjectName(QStringLiteral("longScanProgress"));
    scanStatus_ = new QLabel;
    scanStatus_->setObjectName(QStringLiteral("longScanStatus"));
    form->addRow(jobRow(scan_, scanCancel_, scanProgress_, scanStatus_));
    for (QLineEdit* e : {needle_, question_, answer_, lengths_, depths_})
        connect(e, &QLineEdit::textEdited, this, &LongPanel::scanSettingsChanged);
    connect(haystack_, &QPlainTextEdit::textChanged, this, &LongPanel::scanSettingsChanged);
    connect(ids_, &QCheckBox::toggled, this, &LongPanel::scanSettingsChanged);
    connect(scanTokens_, &QSpinBox::valueChanged, this, &LongPanel::scanSettingsChanged);
    return box;
}

QWidget* LongPanel::buildEvictBox() {
    auto* box = new QWidget;
    auto* form = narrowForm(box);
    auto* about = new QLabel(tr("On the main input: after its prompt each kv head keeps a budget of its keys, then "
                                "both caches generate greedily."));
    about->setWordWrap(true);
    form->addRow(about);
    policy_ = new QComboBox;
    policy_->setObjectName(QStringLiteral("longPolicy"));
    policy_->addItem(tr("H2O (heavy hitters + recent)"), int(attnscope::EvictionPolicy::H2O));
    policy_->addItem(tr("SnapKV (observation window)"), int(attnscope::EvictionPolicy::SnapKV));
    policy_->addItem(tr("StreamingLLM (sinks + recent)"), int(attnscope::EvictionPolicy::Streaming));
    policy_->setToolTip(tr("How each layer's kv heads choose the prompt keys they keep"));
    policy_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    policy_->setMinimumContentsLength(12);
    form->addRow(tr("Policy"), policy_);
    budget_ = spin(QStringLiteral("longBudget"), 1, 1 << 20, 64, tr("Prompt keys each kv head keeps (B)"));
    form->addRow(tr("Budget"), budget_);
    recent_ = spin(QStringLiteral("longRecent"), -1, 1 << 20, -1, tr("H2O: the last R prompt positions always kept"));
    recent_->setSpecialValueText(tr("B/2"));
    form->addRow(tr("Recent"), recent_);
    window_ = spin(QStringLiteral("longWindow"), 1, 1 << 20, 32,
                   tr("SnapKV: the last W prompt queries score the keys before them, and are kept"));
    form->addRow(tr("Window"), window_);
    kernel_ = spin(QStringLiteral("longKernel"), 1, 101, 5, tr("SnapKV: the pooling kernel along the keys (odd)"));
    kernel_->setSingleStep(2);
    form->addRow(tr("Kernel"), kernel_);
    sinks_ = spin(QStringLiteral("longSinks"), 0, 1 << 20, 4, tr("StreamingLLM: the first S prompt positions kept"));
    form->addRow(tr("Sinks"), sinks_);
    evictTokens_ = spin(QStringLiteral("longEvictTokens"), 1, 512, 16,
                        tr("Tokens generated greedily with the full and with the evicted cache"));
    form->addRow(tr("New tokens"), evictTokens_);
    evict_ = new QPushButton(tr("Run"));
    evict_->setObjectName(QStringLiteral("longEvict"));
    evict_->setToolTip(tr("Generate with the kept keys only and compare with the full cache"));
    evictCancel_ = new QPushButton(tr("Cancel"));
    evictCancel_->setObjectName(QStringLiteral("longEvictCancel"));
    evictProgress_ = new QProgressBar;
    evictProgress_->setObjectName(QStringLiteral("longEvictProgress"));
    evictStatus_ = new QLabel;
    evictStatus_->setObjectName(QStringLiteral("longEvictStatus"));
    form->addRow(jobRow(evict_, evictCancel_, evictProgress_, evictStatus_));
    form->addRow(buildEvictionFigure());
    connect(policy_, &QComboBox::currentIndexChanged, this, [this] {
        syncPolicyOptions();
        emit evictSettingsChanged();
    });
    for (QSpinBox* s : {budget_, recent_, window_, kernel_, sinks_, evictTokens_})
        connect(s, &QSpinBox::valueChanged, this, &LongPanel::evictSettingsChanged);
    return box;
}

QPushButton* LongPanel::makeExportButton(int which, const QString& name) {
    auto* b = new QPushButton(tr("Export…"));
    b->setObjectName(name);
    b->setToolTip(tr("Write this figure as PDF, SVG or PNG"));
    exports_[std::size_t(which)] = b;
    return b;
}

namespace {

// A figure under its bold title, the title's Export button on the right; the title wraps
// rather than being cut when the column is narrow.
QWidget* titled(const QString& title, QWidget* view, QPushButton* button) {
    auto* w = new QWidget;
    auto* v = new QVBoxLayout(w);
    v->setContentsMargins(0, 0, 0, 0);
    auto* row = new QHBoxLayout;
    auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(title));
    label->setWordWrap(true);
    row->addWidget(label, 1);
    row->addWidget(button, 0, Qt::AlignTop);
    v->addLayout(row);
    v->addWidget(view, 1);
    return w;
}

}  // namespace

QWidget* LongPanel::buildEvictionFigure() {
    evictionCanvas_ = new FigureCanvas;
    evictionCanvas_->setObjectName(QStringLiteral("longEvictionCanvas"));
    evictionCanvas_->setMinimumSize(180, 200);
    evictionMessage_ = new QLabel(tr("Run the what-if to see KL and token agreement per step."));
    evictionMessage_->setObjectName(QStringLiteral("longEvictionMessage"));
    evictionMessage_->setWordWrap(true);
    evictionMessage_->setAlignment(Qt::AlignCenter);
    auto* eviction = new QWidget;
    auto* ev = new QVBoxLayout(eviction);
    ev->setContentsMargins(0, 0, 0, 0);
    ev->addWidget(evictionMessage_);
    ev->addWidget(evictionCanvas_, 1);
    evictionCanvas_->hide();
    return titled(tr("Per step: KL and agreement"), eviction,
                  makeExportButton(Eviction, QStringLiteral("longExportEviction")));
}

QWidget* LongPanel::buildResults() {
    success_ = new HeatmapView;
    success_->setObjectName(QStringLiteral("longSuccessMap"));
    success_->setLevelOfDetailEnabled(false);
    success_->setAxisNames({tr("needle depth"), tr("context length"), tr("success"), 1.0});
    success_->setPoolingShown(false);
    success_->clear(tr("Scan to see where the needle is retrieved."));
    retrieval_ = new HeadMetricMap;
    retrieval_->setObjectName(QStringLiteral("longRetrievalMap"));
    retrieval_->clear(tr("The retrieval heads show after a scan; click one to see its rows."));

    auto* top = new QSplitter(Qt::Horizontal);
    top->addWidget(titled(tr("Success"), success_, makeExportButton(Success, QStringLiteral("longExportSuccess"))));
    top->addWidget(titled(tr("Retrieval heads"), retrieval_,
                          makeExportButton(Retrieval, QStringLiteral("longExportRetrieval"))));
    top->setChildrenCollapsible(false);
    top->setStretchFactor(0, 1);
    top->setStretchFactor(1, 1);
    top->setSizes({1000, 1000});  // halves, whatever the messages' widths

    auto* mapBar = new QHBoxLayout;
    mapWhat_ = new QComboBox;
    mapWhat_->setObjectName(QStringLiteral("longMapWhat"));
    mapWhat_->addItem(tr("Needle run"));
    mapWhat_->addItem(tr("Eviction"));
    mapWhat_->setItemData(0, tr("A needle run's generated rows over its context"), Qt::ToolTipRole);
    mapWhat_->setItemData(1, tr("The eviction what-if's prompt map, evicted keys shaded"), Qt::ToolTipRole);
    mapWhat_->setToolTip(tr("What the map below shows: a needle run's generated rows, or the what-if's prompt map"));
    run_ = new QComboBox;
    run_->setObjectName(QStringLiteral("longRun"));
    run_->setToolTip(tr("Which run of the scan (context length, depth) the rows are of"));
    run_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    run_->setMinimumContentsLength(6);
    layer_ = spin(QStringLiteral("longLayer"), 0, 0, 0, tr("The head's layer"));
    head_ = spin(QStringLiteral("longHead"), 0, 0, 0, tr("The head (a click on the retrieval map picks one)"));
    layer_->setPrefix(tr("layer "));
    head_->setPrefix(tr("head "));
    mapBar->addWidget(mapWhat_);
    mapBar->addWidget(run_, 1);
    mapBar->addWidget(layer_);
    mapBar->addWidget(head_);
    mapBar->addWidget(makeExportButton(LongMap, QStringLiteral("longExportMap")));
    longMap_ = new HeatmapView;
    longMap_->setObjectName(QStringLiteral("longMap"));
    longMap_->clear(tr("Click a retrieval head after a scan, or run the eviction what-if."));
    auto* lower = new QWidget;
    auto* lv = new QVBoxLayout(lower);
    lv->setContentsMargins(0, 0, 0, 0);
    lv->addLayout(mapBar);
    lv->addWidget(longMap_, 1);

    // The long map, the one that needs the pixels, gets three fifths of the height.
    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("longResultsSplit"));
    split->addWidget(top);
    split->addWidget(lower);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({2000, 3000});
    split->setChildrenCollapsible(false);
    return split;
}

void LongPanel::showPage(int page) { settingsTabs_->setCurrentIndex(page); }

attnscope::EvictionPolicy LongPanel::policy() const {
    return attnscope::EvictionPolicy(policy_->currentData().toInt());
}

void LongPanel::syncPolicyOptions() {
    const auto p = policy();
    recent_->setEnabled(evict_->isEnabled() && p == attnscope::EvictionPolicy::H2O);
    window_->setEnabled(evict_->isEnabled() && p == attnscope::EvictionPolicy::SnapKV);
    kernel_->setEnabled(evict_->isEnabled() && p == attnscope::EvictionPolicy::SnapKV);
    sinks_->setEnabled(evict_->isEnabled() && p == attnscope::EvictionPolicy::Streaming);
}

void LongPanel::setApplicable(bool applicable, const QString& reason) {
    for (QWidget* w :
         std::initializer_list<QWidget*>{haystack_, haystackFile_, needle_, question_, answer_, ids_, lengths_, depths_,
                                         scanTokens_, scan_, policy_, budget_, evictTokens_, evict_}) {
        if (!w->property("baseTip").isValid()) w->setProperty("baseTip", w->toolTip());
        w->setEnabled(applicable);
        w->setToolTip(applicable ? w->property("baseTip").toString() : reason);
    }
    syncPolicyOptions();
    reason_->setText(reason);
    reason_->setVisible(!applicable && !reason.isEmpty());
}

namespace {

void setJob(QPushButton* cancel, QProgressBar* bar, QLabel* status, const QString& text) {
    const bool busy = !text.isEmpty();
    status->setText(text);
    cancel->setEnabled(busy);
    bar->setRange(0, busy ? 0 : 1000);
    bar->setValue(0);
}

}  // namespace

void LongPanel::setScanJob(const QString& text) { setJob(scanCancel_, scanProgress_, scanStatus_, text); }

void LongPanel::setEvictJob(const QString& text) { setJob(evictCancel_, evictProgress_, evictStatus_, text); }

void LongPanel::setJobProgress(QProgressBar* bar, int permille) {
    if (permille < 0) {
        bar->setRange(0, 0);
        return;
    }
    bar->setRange(0, 1000);
    bar->setValue(permille);
}

Workspace::LongContext LongPanel::settings() const {
    Workspace::LongContext s;
    s.haystack = haystack_->toPlainText();
    s.needle = needle_->text();
    s.question = question_->text();
    s.answer = answer_->text();
    s.ids = ids_->isChecked();
    s.lengths = lengths_->text();
    s.depths = depths_->text();
    s.scanTokens = scanTokens_->value();
    s.policy = kPolicyKeys.value(policy_->currentIndex(), kPolicyKeys.front());
    s.budget = budget_->value();
    s.recent = recent_->value();
    s.window = window_->value();
    s.kernel = kernel_->value();
    s.sinks = sinks_->value();
    s.evictTokens = evictTokens_->value();
    return s;
}

void LongPanel::setSettings(const Workspace::LongContext& s) {
    if (haystack_->toPlainText() != s.haystack) haystack_->setPlainText(s.haystack);
    const auto text = [this](QLineEdit* e, const QString& t) {
        if (e->text() == t) return;
        e->setText(t);
        emit scanSettingsChanged();  // setText is no edit: say it here
    };
    text(needle_, s.needle);
    text(question_, s.question);
    text(answer_, s.answer);
    text(lengths_, s.lengths);
    text(depths_, s.depths);
    ids_->setChecked(s.ids);
    scanTokens_->setValue(s.scanTokens);
    policy_->setCurrentIndex(std::max(0, int(kPolicyKeys.indexOf(s.policy))));
    budget_->setValue(s.budget);
    recent_->setValue(s.recent);
    window_->setValue(s.window);
    kernel_->setValue(s.kernel);
    sinks_->setValue(s.sinks);
    evictTokens_->setValue(s.evictTokens);
}
