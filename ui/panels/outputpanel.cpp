#include "panels/outputpanel.h"

#include "views/richtextlabel.h"

#include "attnscope/lab/interventions.h"
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
    for (std::size_t i = 0; i < out.size(); ++i) text += (chars || i == 0 ? QString() : QStringLiteral(" ")) + esc(out[i]);
    return text;
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
                if (b.name == "cross" && !b.queryTokens.empty()) target.assign(b.queryTokens.begin() + 1, b.queryTokens.end());
            html = tr("Target (forced): <b><tt>%1</tt></b> (%2 tokens)<br>Model's choice per row: <tt>%3</tt>")
                       .arg(joined(target))
                       .arg(target.size())
                       .arg(joined(trace.outputTokens()));
        } else {
            html = tr("Generated: <b><tt>%1</tt></b> (%2 tokens)").arg(joined(trace.outputTokens())).arg(trace.outputTokens().size());
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
        for (const auto& t : top) {
            QString label = esc(t.label);
            if (tokenizer && tokenizer->idToToken(t.id)) {
                const std::string readable = tokenizer->displayToken(t.id);
                if (readable != t.label) label = esc(readable) + QStringLiteral(" <small>[%1]</small>").arg(label);
            }
            html += QStringLiteral("<tr><td><tt>%1</tt></td><td align=right>&nbsp;%2&nbsp;</td><td>%3</td></tr>")
                        .arg(label, QString::number(t.probability, 'f', 3), bar(t.probability));
        }
        html += QStringLiteral("</table>");
    } else if (trace.finalHiddenWidth() > 0) {
        html = tr("Final hidden states: %1 tokens × %2 (no task head; interventions compare them by cosine distance)")
                   .arg(trace.finalHidden().size() / std::size_t(trace.finalHiddenWidth()))
                   .arg(trace.finalHiddenWidth());
    } else {
        html = tr("<i>This model reports no outputs.</i>");
    }
    label_->setText(html);
}
