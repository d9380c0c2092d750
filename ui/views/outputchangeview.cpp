#include "views/outputchangeview.h"

#include "figure/labels.h"
#include "views/richtextlabel.h"

#include <QLabel>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace {

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }
QString prob(double p) { return QString::number(p, 'f', 3); }

// A signed change in probability, coloured (green up, red down).
QString delta(double d) {
    if (std::abs(d) < 5e-4) return QStringLiteral("<span style='color:gray'>±0</span>");
    return QStringLiteral("<span style='color:%1'>%2%3</span>")
            .arg(d > 0 ? QStringLiteral("#2a8a2a") : QStringLiteral("#c03030"), d > 0 ? QStringLiteral("+") : QString(),
                 QString::number(d, 'f', 3));
}

QString joined(const std::vector<std::string>& tokens) {
    const bool chars = std::all_of(tokens.begin(), tokens.end(), [](const std::string& s) { return s.size() == 1; });
    QString out;
    for (std::size_t i = 0; i < tokens.size(); ++i)
        out += (chars || i == 0 ? QString() : QStringLiteral(" ")) + esc(tokens[i]);
    return out;
}

}  // namespace

OutputChangeView::OutputChangeView(QWidget* parent) : QWidget(parent) {
    label_ = richTextLabel(QStringLiteral("outputChangeLabel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(label_);
    clear();
}

void OutputChangeView::clear() {
    hasChange_ = false;
    change_ = {};
    label_->clear();
    setVisible(false);
}

void OutputChangeView::showPending(const QString& what) {
    setVisible(true);
    label_->setText(tr("<hr><b>Re-running</b> with %1…").arg(what.toHtmlEscaped()));
}

QString OutputChangeView::text() const {
    QTextDocument doc;
    doc.setHtml(label_->text());
    return doc.toPlainText();
}

void OutputChangeView::showChange(const attnscope::OutputChange& c, const QString& what, double ms) {
    change_ = c;
    hasChange_ = true;
    setVisible(true);
    QString html =
            tr("<hr><b>After intervention</b> (%1; re-run %2)<br>").arg(what.toHtmlEscaped(), formatDuration(ms));
    if (c.kind == "next-token") {
        html += tr("KL(original ‖ changed) = <b>%1 nats</b> · top token %2<table>")
                        .arg(c.kl, 0, 'g', 4)
                        .arg(c.sameTop ? tr("unchanged") : tr("<b>changed</b>"));
        html += tr(
                "<tr><th align=left>original</th><th></th><th>&nbsp;&nbsp;</th><th align=left>changed</th><th></th></tr>");
        const std::size_t n = std::max(c.originalTop.size(), c.changedTop.size());
        for (std::size_t i = 0; i < n; ++i) {
            html += QStringLiteral("<tr>");
            if (i < c.originalTop.size())
                html += QStringLiteral("<td><tt>%1</tt></td><td align=right>%2</td>")
                                .arg(esc(c.originalTop[i].label), prob(c.originalTop[i].probability));
            else
                html += QStringLiteral("<td></td><td></td>");
            html += QStringLiteral("<td></td>");
            if (i < c.changedTop.size())
                html += QStringLiteral("<td><tt>%1</tt></td><td align=right>%2</td>")
                                .arg(esc(c.changedTop[i].label), prob(c.changedTop[i].probability));
            html += QStringLiteral("</tr>");
        }
        html += QStringLiteral("</table>");
    } else if (c.kind == "class") {
        html += tr("KL(original ‖ changed) = <b>%1 nats</b> · class %2<table>")
                        .arg(c.kl, 0, 'g', 4)
                        .arg(c.sameTop ? tr("unchanged") : tr("<b>changed</b>"));
        html += tr("<tr><th align=left>class</th><th>before</th><th>after</th><th>change</th></tr>");
        for (std::size_t i = 0; i < c.classLabels.size(); ++i) {
            const double a = i < c.originalProbabilities.size() ? c.originalProbabilities[i] : 0;
            const double b = i < c.changedProbabilities.size() ? c.changedProbabilities[i] : 0;
            html += QStringLiteral(
                            "<tr><td>%1</td><td align=right>&nbsp;%2</td><td align=right>&nbsp;%3</td><td align=right>&nbsp;%4</td></tr>")
                            .arg(esc(c.classLabels[i]), prob(a), prob(b), delta(b - a));
        }
        html += QStringLiteral("</table>");
    } else if (c.kind == "sequence") {
        html += tr("Original: <b><tt>%1</tt></b><br>Changed: <b><tt>%2</tt></b><br>%3 of %4 positions differ")
                        .arg(joined(c.originalOutput), joined(c.changedOutput))
                        .arg(c.changedPositions)
                        .arg(std::max(c.originalOutput.size(), c.changedOutput.size()));
    } else if (c.kind == "similarity") {
        html += tr("Image–text logit: %1 → %2 (<b>%3</b>)")
                        .arg(c.originalLogit, 0, 'g', 4)
                        .arg(c.changedLogit, 0, 'g', 4)
                        .arg(delta(c.changedLogit - c.originalLogit));
    } else if (c.kind == "hidden") {
        html += tr("Final hidden states: mean cosine distance <b>%1</b> · max %2")
                        .arg(c.meanCosineDistance, 0, 'g', 4)
                        .arg(c.maxCosineDistance, 0, 'g', 4);
        if (c.mostChangedToken >= 0)
            html += tr(" at token %1 <tt>%2</tt>").arg(c.mostChangedToken).arg(esc(c.mostChangedLabel));
        html += tr("<br><small>1 − cos(original, changed) per token; 0 = unchanged direction, 2 = reversed</small>");
    } else {
        html += tr("<i>This model reports no outputs to compare.</i>");
    }
    label_->setText(html);
}
