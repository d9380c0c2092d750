// The Causal tab's three figures (issue 32) made from core's results, in one place for the tab
// (CausalController, its views' Export…) and `attnscope-cli export --workspace W --figure
// lens|dla|patch`, so the window and the CLI draw the same figure for the same numbers:
//   lensFigure / dlaFigure / patchFigure  core's result -> the figure (causalfigure.h)
//   paintedLens / paintedSignedMap        the figure as it is exported (paper font, no hover)
//   workspaceCausalFigure                 the headless path: runs a workspace's Causal settings
//                                         through core and returns the painted figure
// Needs QtGui only (no widgets).
#pragma once

#include "figure/causalfigure.h"
#include "figure/paintedfigure.h"
#include "figure/workspace.h"

#include "attnscope/analysis/logit_lens.h"
#include "attnscope/analysis/patching.h"
#include "attnscope/attention/trace.h"
#include "attnscope/runtime/progress.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace attnscope {
class Model;
}

// How many top tokens the lens keeps per cell (the hover lists them; the answer boxes offer the
// last row's at the position).
constexpr int kLensTopK = 10;

// "heads", "residual stream", "attention out", "MLP out": what is patched, for titles.
QString patchWhatName(attnscope::PatchWhat what);

// Readable text of vocabulary ids (the model's tokenizer; "#id" without one).
QStringList vocabularyLabels(const attnscope::Model& model, const std::vector<std::int64_t>& ids);

// The readable tokens of ids (the tokenizer's display forms; the ids as numbers without one).
QStringList readableTokens(const attnscope::Model& model, const std::vector<std::int64_t>& ids);

// The clean run of the tab: the forward of ids with the residuals recorded and the attribution
// position P (-1: the last), then its logit lens (top kLensTopK). A decoder DLA refuses
// (post-norm) runs again without the position: the lens still applies, and dlaRefusal says why.
// Throws attnscope::Error for a P outside the input and for core's refusals.
struct CausalLensRun {
    std::shared_ptr<const attnscope::Trace> trace;
    std::int64_t position = 0;  // P, resolved
    attnscope::LogitLens lens;
    QStringList topTexts;  // readable text of lens.topIds, same order
    QString dlaRefusal;
};
CausalLensRun runCausalLens(const attnscope::Model& model, const std::vector<std::int64_t>& ids, std::int64_t position,
                            const attnscope::Progress& progress = {});

// The lens's last row at position P: the model's own top predictions, most probable first (the
// answer boxes' offers; T and T2 default to the first two).
std::vector<std::int64_t> lensPredictions(const attnscope::LogitLens& lens, std::int64_t position);

// The logit-lens grid: topTexts the readable text of lens.topIds (same order), tokens the input's.
LensFigure lensFigure(const attnscope::LogitLens& lens, const QStringList& topTexts, const QStringList& tokens,
                      const QString& modelName, Colormap colormap);
// DLA per head with the other parts as bars; answer and wrong are T's and T2's text (wrong empty:
// logit(T) alone).
SignedMapFigure dlaFigure(const attnscope::LogitAttribution& dla, const QString& answer, const QString& wrong);
// Patching scores: per head, or per position with the clean input's tokens as the columns.
SignedMapFigure patchFigure(const attnscope::PatchResult& result, attnscope::PatchWhat what, bool attribution,
                            const QStringList& tokens);

PaintedFigure paintedLens(LensFigure figure);
PaintedFigure paintedSignedMap(SignedMapFigure figure);

// The Causal figures' default export width: two columns (the export dialog's kTwoColumnIn).
constexpr double kCausalFigureWidthIn = 6.75;

enum class CausalFigureKind { Lens, Dla, Patch };

// The headless path: the model (opened from workspace.model by the caller) run as the workspace's
// Causal tab would: its clean input (the main input as run when empty), P, T and T2 (the top two
// predictions at P when not chosen), the corrupt input, what to patch and the method. Throws
// attnscope::Error with one line for models the analyses do not apply to and for core's
// refusals (DLA of a post-norm decoder, a corrupt input of another length, an undefined score).
PaintedFigure workspaceCausalFigure(const attnscope::Model& model, const Workspace& workspace, CausalFigureKind kind,
                                    const QString& title = QString());
