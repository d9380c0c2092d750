#include "panels/generatepanel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace {

// A readable label as running text: the "·" and "↵" marks back to a space and a line break.
QString asText(const QString& label) {
    QString t = label.toHtmlEscaped();
    t.replace(QChar(0x00B7), QChar(' '));
    t.replace(QChar(0x21B5), QStringLiteral("<br>"));
    return t;
}

// A generated token as a chip's text: its readable label, with spaces kept visible (a chip of
// a space would otherwise look empty).
QString chipText(const QString& label) {
    QString t = label.toHtmlEscaped();
    t.replace(QChar(' '), QChar(0x00B7));
    t.replace(QChar(0x21B5), QStringLiteral("\\n"));
    return t;
}

}  // namespace

GeneratePanel::GeneratePanel(QWidget* parent) : QWidget(parent) {
    tokens_ = new QSpinBox;
    tokens_->setObjectName(QStringLiteral("generateTokens"));
    tokens_->setRange(1, 4096);
    tokens_->setValue(12);
    sample_ = new QCheckBox(tr("Sample (else greedy)"));
    sample_->setObjectName(QStringLiteral("generateSample"));
    temperature_ = new QDoubleSpinBox;
    temperature_->setObjectName(QStringLiteral("samplingTemperature"));
    temperature_->setRange(0.01, 100.0);
    temperature_->setDecimals(2);
    temperature_->setSingleStep(0.1);
    temperature_->setValue(1.0);
    temperature_->setToolTip(tr("Divides the next-token logits before sampling. Not the attention temperature "
                                "(the slider in Controls), which changes what the maps show."));
    topK_ = new QSpinBox;
    topK_->setObjectName(QStringLiteral("samplingTopK"));
    topK_->setRange(0, 1000000);
    topK_->setSpecialValueText(tr("all"));
    topK_->setToolTip(tr("Sample among the K most likely tokens (all: no cut)"));
    topP_ = new QDoubleSpinBox;
    topP_->setObjectName(QStringLiteral("samplingTopP"));
    topP_->setRange(0.01, 1.0);
    topP_->setDecimals(2);
    topP_->setSingleStep(0.05);
    topP_->setValue(1.0);
    topP_->setToolTip(tr("Nucleus: sample among the most likely tokens whose mass reaches P (1: no cut)"));
    seed_ = new QSpinBox;
    seed_->setObjectName(QStringLiteral("samplingSeed"));
    seed_->setRange(0, 2147483647);
    seed_->setToolTip(tr("The same seed, model and prompt give the same tokens"));
    generate_ = new QPushButton(tr("&Generate"));
    generate_->setObjectName(QStringLiteral("generateButton"));
    generate_->setToolTip(tr("Generate tokens after the input last run, then step through them"));

    auto* form = new QFormLayout;
    form->addRow(tr("New tokens:"), tokens_);
    form->addRow(sample_);
    form->addRow(tr("Sampling temperature:"), temperature_);
    form->addRow(tr("Top-k:"), topK_);
    form->addRow(tr("Top-p:"), topP_);
    form->addRow(tr("Seed:"), seed_);

    slider_ = new QSlider(Qt::Horizontal);
    slider_->setObjectName(QStringLiteral("generateStep"));
    slider_->setRange(0, 0);
    slider_->setPageStep(1);
    slider_->setEnabled(false);
    slider_->setToolTip(tr("Generated token to show (← → step)"));
    stepLabel_ = new QLabel(tr("No generation yet."));
    stepLabel_->setObjectName(QStringLiteral("generateStepLabel"));
    stepLabel_->setWordWrap(true);
    rowOnly_ = new QCheckBox(tr("Only the step's query row"));
    rowOnly_->setObjectName(QStringLiteral("generateRowOnly"));
    rowOnly_->setChecked(true);
    rowOnly_->setToolTip(tr("Maps show the query that chose the current token (one row over the prompt and the "
                            "tokens before it); off: every row up to it"));
    text_ = new QTextBrowser;
    text_->setObjectName(QStringLiteral("generateText"));
    text_->setMinimumHeight(90);
    text_->installEventFilter(this);
    status_ = new QLabel;
    status_->setObjectName(QStringLiteral("generateStatus"));
    status_->setWordWrap(true);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(generate_);
    layout->addWidget(status_);
    layout->addWidget(new QLabel(tr("Step:")));
    layout->addWidget(slider_);
    layout->addWidget(stepLabel_);
    layout->addWidget(rowOnly_);
    layout->addWidget(text_, 1);

    connect(sample_, &QCheckBox::toggled, this, &GeneratePanel::updateSamplingEnabled);
    connect(slider_, &QSlider::valueChanged, this, [this](int s) {
        markStep(s);
        emit stepChanged(s);
    });
    connect(rowOnly_, &QCheckBox::toggled, this, &GeneratePanel::queryRowOnlyChanged);
    updateSamplingEnabled();
}

void GeneratePanel::updateSamplingEnabled() {
    for (QWidget* w : {static_cast<QWidget*>(temperature_), static_cast<QWidget*>(topK_), static_cast<QWidget*>(topP_),
                       static_cast<QWidget*>(seed_)})
        w->setEnabled(sample_->isChecked());
}

int GeneratePanel::tokens() const { return tokens_->value(); }
bool GeneratePanel::queryRowOnly() const { return rowOnly_->isChecked(); }
int GeneratePanel::step() const { return slider_->value(); }

attnscope::SamplingOptions GeneratePanel::sampling() const {
    attnscope::SamplingOptions o;
    o.sample = sample_->isChecked();
    o.temperature = temperature_->value();
    o.topK = topK_->value();
    o.topP = topP_->value();
    o.seed = static_cast<std::uint64_t>(seed_->value());
    return o;
}

void GeneratePanel::showGeneration(const QStringList& prompt, const QStringList& generated, int step) {
    prompt_ = prompt;
    generated_ = generated;
    const QSignalBlocker block(slider_);
    slider_->setRange(0, std::max(0, int(generated.size()) - 1));
    slider_->setEnabled(!generated.isEmpty());
    slider_->setValue(step);
    markStep(step);
}

void GeneratePanel::clearGeneration(const QString& message) {
    prompt_.clear();
    generated_.clear();
    slider_->setRange(0, 0);
    slider_->setEnabled(false);
    stepLabel_->setText(message);
    text_->clear();
}

void GeneratePanel::setStatus(const QString& text) { status_->setText(text); }

void GeneratePanel::markStep(int step) {
    if (generated_.isEmpty()) return;
    step = std::clamp(step, 0, int(generated_.size()) - 1);
    QString html = QStringLiteral("<span style='color:palette(text)'>");
    for (const QString& p : prompt_) html += asText(p);
    html += QStringLiteral("</span>");
    // Generated tokens as chips: each on its own tint, apart from its neighbours, so tokens that
    // do not decode to text (shown as their ids) never run together into one number.
    for (int s = 0; s < generated_.size(); ++s) {
        const QString t = chipText(generated_[s]);
        const QString style = s == step  ? QStringLiteral("background-color:#ffd54f; color:#000; font-weight:bold")
                              : s < step ? QStringLiteral("background-color:#e3f2fd; color:#1565c0")
                                         : QStringLiteral("background-color:#eeeeee; color:#757575");
        html += QStringLiteral("%1<span style='%2'>&nbsp;%3&nbsp;</span>")
                        .arg(s == 0 ? QStringLiteral(" ") : QStringLiteral("&#8202;"), style, t);
    }
    text_->setHtml(html);
    const int row = int(prompt_.size()) + step - 1;
    stepLabel_->setText(
            tr("Step %1 of %2: “%3”, chosen by query row %4 over %5 keys (prompt %6 + %7 generated before it).")
                    .arg(step + 1)
                    .arg(generated_.size())
                    .arg(generated_[step])
                    .arg(row)
                    .arg(row + 1)
                    .arg(prompt_.size())
                    .arg(step));
}

// Left / Right in the text step too, as they do on the focused slider.
bool GeneratePanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == text_ && event->type() == QEvent::KeyPress && slider_->isEnabled()) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if (key == Qt::Key_Left || key == Qt::Key_Right) {
            slider_->setValue(slider_->value() + (key == Qt::Key_Right ? 1 : -1));
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}
