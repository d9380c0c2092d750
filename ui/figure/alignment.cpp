#include "figure/alignment.h"

#include "figure/labels.h"

#include "attnscope/attention/trace.h"

Figure alignmentFigure(const attnscope::Trace& trace, const attnscope::AlignmentOptions& options,
                       const QString& model) {
    const attnscope::BlockInfo& cross = trace.blocks()[std::size_t(trace.blockIndex("cross"))];
    const attnscope::Alignment alignment = attnscope::alignTrace(trace, options);
    FigurePanel panel;
    panel.map = attnscope::meanCrossMap(trace, options.heads, options.map);
    panel.queryLabels = toQtStrings(cross.queryTokens);
    panel.keyLabels = toQtStrings(cross.keyTokens);
    panel.rowMarks = alignment.rowArgmax;
    panel.title = QString::fromStdString(alignment.heads);
    Figure f;
    f.panels.push_back(std::move(panel));
    f.keysOnTop = true;
    f.keyAxis = QStringLiteral("source");
    f.queryAxis = QStringLiteral("target");
    f.title = (model.isEmpty() ? QString() : model + QStringLiteral(" \u00b7 ")) +
              QStringLiteral("cross-attention alignment");
    return f;
}
