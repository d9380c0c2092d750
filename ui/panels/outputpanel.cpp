#include "panels/outputpanel.h"

#include "views/richtextlabel.h"

#include "attnscope/attention/image_text.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "attnscope/attention/trace.h"

#include <QLabel>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace {

QString bar(double p) { return QString(int(std::lround(p * 10)), QChar(0x2588)); }  // 10 blocks = 1

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

// Single characters (the built-in models' symbols) run together, longer tokens with spaces.
QString joined(const std::vector<std::string>& out) {
    const bool chars = std::all_of(out.begin(), out.end(), [](const std::string& s) { return s.size() == 1; });
    QString text;
    for (std::size_t i = 0; i < out.size(); ++i)
        text += (chars || i == 0 ? QString() : QStringLiteral(" ")) + esc(out[i]);
    return text;
}

// A token's label: the readable form, the raw vocabulary string in brackets where it differs.
QString tokenLabel(std::int64_t id, const std::string& raw, const attnscope::Tokenizer* tokenizer) {
    QString label = esc(raw);
    if (tokenizer && tokenizer->idToToken(id)) {
        const std::string readable = tokenizer->displayToken(id);
        if (readable != raw) label = esc(readable) + QStringLiteral(" <small>[%1]</small>").arg(label);
    }
    return label;
}

QString row(const QString& label, double p, bool bold = false) {
    const QString cell =
            bold ? QStringLiteral("<b><tt>%1</tt></b>").arg(label) : QStringLiteral("<tt>%1</tt>").arg(label);
    return QStringLiteral("<tr><td>%1</td><td align=right>&nbsp;%2&nbsp;</td><td>%3</td></tr>")
            .arg(cell, QString::number(p, 'f', 3), bar(p));
}

}  // namespace

OutputPanel::OutputPanel(QWidget* parent) : QWidget(parent) {
    label_ = richTextLabel(QStringLiteral("outputLabel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(label_);
    clear();
}

void OutputPanel::clear() { label_->setText(tr("<i>Run an input to see the model's output.</i>")); }

QString OutputPanel::text() const {
    QTextDocument doc;
    doc.setHtml(label_->text());
    return doc.toPlainText();
}

void OutputPanel::showOutputs(const attnscope::Trace& trace, const attnscope::Model& model,
                              const attnscope::Tokenizer* tokenizer, bool forcedTarget) {
    QString html;
    if (!trace.outputTokens().empty()) {
        if (forcedTarget) {
            // The rows the decoder read (after the start token) and what it predicts at each.
            std::vector<std::string> target;
            for (const auto& b : trace.blocks())
                if (b.name == "cross" && !b.queryTokens.empty())
                    target.assign(b.queryTokens.begin() + 1, b.queryTokens.end());
            html = tr("Target (forced): <b><tt>%1</tt></b> (%2 tokens)<br>Model's choice per row: <tt>%3</tt>")
                           .arg(joined(target))
                           .arg(target.size())
                           .arg(joined(trace.outputTokens()));
        } else {
            html = tr("Generated: <b><tt>%1</tt></b> (%2 tokens)")
                           .arg(joined(trace.outputTokens()))
                           .arg(trace.outputTokens().size());
        }
    } else if (!trace.classLabels().empty()) {
        const auto& labels = trace.classLabels();
        const auto& p = trace.classProbabilities();
        const auto best = std::size_t(std::max_element(p.begin(), p.end()) - p.begin());
        html = tr("Class: <b>%1</b><table>").arg(esc(labels[best]));
        for (std::size_t i = 0; i < labels.size() && i < p.size(); ++i)
            html += QStringLiteral("<tr><td>%1</td><td align=right>&nbsp;%2&nbsp;</td><td>%3</td></tr>")
                            .arg(esc(labels[i]), QString::number(p[i], 'f', 3), bar(p[i]));
        html += QStringLiteral("</table>");
    } else if (!trace.nextTokenLogits().empty()) {
        // The next-token distribution, from core.
        const auto top = attnscope::nextTokenTop(trace, model, kTopK);
        html = tr("Next token (top %1):<table>").arg(top.size());
        for (const auto& t : top) html += row(tokenLabel(t.id, t.label, tokenizer), t.probability);
        html += QStringLiteral("</table>");
    } else if (const attnscope::ImageTextScore& s = attnscope::traceImageText(trace); s.present) {
        html = tr("Image–text match: cosine <b>%1</b> · logit <b>%2</b><br><small>logit = %3 × cosine%4</small>")
                       .arg(s.cosine, 0, 'g', 4)
                       .arg(s.logit, 0, 'g', 4)
                       .arg(s.logitScale, 0, 'g', 4)
                       .arg(s.logitBias != 0 ? QStringLiteral(" %1 %2")
                                                       .arg(s.logitBias < 0 ? QStringLiteral("−") : QStringLiteral("+"))
                                                       .arg(std::abs(s.logitBias), 0, 'g', 4)
                                             : QString());
    } else if (trace.finalHiddenWidth() > 0) {
        html = tr("Final hidden states: %1 tokens × %2 (no task head; interventions compare them by cosine distance)")
                       .arg(trace.finalHidden().size() / std::size_t(trace.finalHiddenWidth()))
                       .arg(trace.finalHiddenWidth());
    } else {
        html = tr("<i>This model reports no outputs.</i>");
    }
    label_->setText(html);
}

void OutputPanel::showGenerationStep(const attnscope::Generation& g, int step, const attnscope::Model& model,
                                     const attnscope::Tokenizer* tokenizer, bool sampled) {
    if (step < 0 || std::size_t(step) >= g.generated.size() || std::size_t(step) >= g.steps.size()) {
        clear();
        return;
    }
    const attnscope::StepOutput& out = g.steps[std::size_t(step)];
    const std::int64_t chosen = g.generated[std::size_t(step)];
    std::vector<std::int64_t> ids{chosen};
    for (const auto& [id, p] : out.top) ids.push_back(id);
    const std::vector<std::string> labels = model.tokenLabels(ids);
    QString html = tr("Step %1 of %2 chose <b><tt>%3</tt></b>: p = %4 under the model")
                           .arg(step + 1)
                           .arg(g.generated.size())
                           .arg(tokenLabel(chosen, labels[0], tokenizer))
                           .arg(out.chosenProbability, 0, 'f', 3);
    if (sampled) html += tr(", %1 under the sampling distribution").arg(out.samplingProbability, 0, 'f', 3);
    html += tr("<br>Next token at this step (top %1):<table>").arg(out.top.size());
    for (std::size_t i = 0; i < out.top.size(); ++i)
        html += row(tokenLabel(out.top[i].first, labels[i + 1], tokenizer), out.top[i].second,
                    out.top[i].first == chosen);
    html += QStringLiteral("</table>");
    label_->setText(html);
}
