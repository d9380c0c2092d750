// The figure of one head as the window shows it, from its settings: in one place for the
// window's File > Export figure…, its heat map title and `attnscope-cli export --workspace`, so
// a workspace's figure is the same picture whichever of them draws it.
//
//   axisLabels      the block's readable labels, or the raw vocabulary strings (View > Raw Tokens)
//   labMapTitle     "cross · layer 1 · head 2 · T = 0.5 · dot · 2 masked", the heat map's title
//   headFigure      the (zoomed part of the) map with the model's name over it, in the colours
//   workspaceFigure runs a model as a workspace says (input, inside-model temperature, masked
//                   heads, additive fit, lab variant) and draws its figure: the headless path
#pragma once

#include "figure/figure.h"
#include "figure/workspace.h"

#include "attnscope/lab/lab.h"

#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace attnscope {
class Model;
class Trace;
struct BlockInfo;
}  // namespace attnscope

// "reverse-dot" for builtin:reverse-dot, the folder's name for a folder.
QString modelDisplayName(const QString& spec);

// A block's axis labels: readable (the block's), or with raw the vocabulary strings where the
// block's labels are the input tokens' readable forms (Trace::tokens() parallel to displayTokens()).
QStringList axisLabels(const attnscope::Trace& trace, const attnscope::BlockInfo& block, bool queries, bool raw);

// What re-ran the model, for the title (only when the map comes from a re-run).
struct RerunNote {
    bool insideModel = false;
    double temperature = 1.0;
    int masked = 0;
};

// The title of a head's map in the lab's variant: block (when the trace has several), layer,
// head, the display temperature where it applies, the variant, and the re-run's note.
QString labMapTitle(const attnscope::Trace& trace, int block, int layer, int head, const attnscope::VariantSpec& spec,
                    bool fitted, const std::optional<RerunNote>& rerun);

// The cells a zoom shows (Workspace::View::Zoom, as HeatmapView's MapZoom): rows [rowBegin,
// rowEnd) x keys [colBegin, colEnd), clamped to the map.
struct CellRange {
    int rowBegin = 0, rowEnd = 0, colBegin = 0, colEnd = 0;
};
CellRange zoomCells(const Workspace::View::Zoom& zoom, int rows, int cols);

// The figure of one map as the window exports it: the cells in range (all without one), their
// labels, "model · title" above, the colours.
Figure headFigure(const QString& modelName, const attnscope::HeadMap& map, const QStringList& queryLabels,
                  const QStringList& keyLabels, const QString& title, const std::optional<Workspace::View::Zoom>& zoom,
                  Colormap colormap, ColorScaleType scale);

// The headless path: the model (opened from workspace.model by the caller) run on the
// workspace's input, re-run with its inside-model temperature and masked heads, the selected
// head's map in its lab variant (with its additive fit re-made when it applies), as headFigure
// draws it at the workspace's figure width. Throws attnscope::Error naming the problem (an
// image that cannot be read, a block the model lacks, a head out of range, a variant that needs
// a fit the workspace has none of).
Figure workspaceFigure(const attnscope::Model& model, const Workspace& workspace);
// The map of a workspace's source (not the weights) for its selection, on its trace: a
// Trace-based source from the trace (recorded with the values: workspaceTrace), a gradient
// source through the model's backward pass for the workspace's target. Throws attnscope::Error.
attnscope::HeadMap workspaceSourceMap(const attnscope::Model& model, const attnscope::Trace& trace,
                                      const Workspace& workspace, int block);

// Ids typed in one of the window's ids boxes (any spaces, commas), by core's rules, each checked
// against the vocabulary when vocabSize > 0; errors name the box ("workspace: input has no token ids").
std::vector<std::int64_t> workspaceTypedIds(const QString& text, int vocabSize, const char* what);

// The trace a workspace's view shows: the input run (or the saved generation's ids), re-run when it
// asks for it, then cut to the generation step's prefix when one is saved.
std::shared_ptr<const attnscope::Trace> workspaceTrace(const attnscope::Model& model, const Workspace& workspace);
