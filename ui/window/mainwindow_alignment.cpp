// MainWindow's alignment figures for encoder-decoder models: File > Export figure… offers, next
// to the map on screen, the cross-attention alignment (source along the top, target down the
// side, argmax marks) of the shown cross head and of every head of the last layer. The maps and
// the argmax come from core (analysis/alignment.h) through figure/alignment.h.
#include "window/mainwindow.h"

#include "figure/alignment.h"
#include "panels/controlpanel.h"
#include "panels/exportdialog.h"
#include "services/session.h"
#include "state/viewstate.h"

#include "attnscope/attention/trace.h"

#include <QComboBox>
#include <QSpinBox>

void MainWindow::offerAlignmentFigures(ExportDialog& dialog) const {
    const auto trace = session_->trace();
    if (!trace) return;
    const auto& blocks = trace->blocks();
    const auto cross = std::find_if(blocks.begin(), blocks.end(), [](const auto& b) { return b.name == "cross"; });
    if (cross == blocks.end()) return;
    const Figure shown = currentFigure();
    auto styled = [&](Figure f) {
        f.colormap = shown.colormap;
        f.scale = shown.scale;
        return f;
    };
    if (state_->blockName() == QLatin1String("cross")) {
        attnscope::AlignmentOptions one;
        one.heads = {{state_->layer(), state_->head()}};
        dialog.addFigure(tr("Alignment: this head (layer %1, head %2)").arg(one.heads[0].layer).arg(one.heads[0].head),
                         styled(alignmentFigure(*trace, one, modelName())), QStringLiteral("_alignment"));
    }
    dialog.addFigure(tr("Alignment: mean of the last layer's %1 heads").arg(cross->heads),
                     styled(alignmentFigure(*trace, {}, modelName())), QStringLiteral("_alignment_mean"));
}
