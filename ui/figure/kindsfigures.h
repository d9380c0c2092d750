// Figures of a kinds report (core's lab/kinds_report.h; `attnscope-cli kinds-report`): each built
// here once, shown by the Compare tab's Kinds panel and written by its Export (and docs/kinds.md).
#pragma once

#include "figure/curvefigure.h"

#include "attnscope/lab/hedgehog.h"
#include "attnscope/lab/kinds_report.h"

#include <QString>
#include <QStringList>

// Held-out accuracy by input-length bucket (x: 1 short, 2 medium, 3 long; kinds.csv's
// accuracy_short/medium/long, buckets without examples left out), one series per kind.
CurveFigure kindsAccuracyFigure(const attnscope::KindsReport& report);

// scaling.csv against log2 n, one series per kind: log10 of the forward seconds (memory = false)
// or of the peak extra resident MiB (memory = true), values below kScalingFloor drawn at it (the
// kinds span five decades: a linear axis shows only the slowest). Rows that were not measured (a
// note) are left out.
inline constexpr double kScalingFloor = 1e-4;
CurveFigure kindsScalingFigure(const attnscope::KindsReport& report, bool memory);

// The three figures above written into `folder` as kinds_accuracy, kinds_seconds and kinds_memory
// with the extension `ext` (pdf, svg or png); returns the paths. Throws attnscope::Error naming the
// file when one cannot be written, or when the report has nothing to draw.
QStringList writeKindsFigures(const attnscope::KindsReport& report, const QString& folder,
                              const QString& ext = QStringLiteral("png"));

// Per-head distillation (`attnscope-cli distil --per-head`, lab/hedgehog.h): log10 of each head's
// mean row KL(softmax map ‖ linear map) on the evaluation texts, one series each for the elu+1
// map, the untrained learned map and the distilled one; x is the head's place, layer-major
// (layer index · heads + head, over the distilled layers). KLs below kScalingFloor are drawn at it.
CurveFigure hedgehogKlFigure(const attnscope::HedgehogResult& result);
// The fit's training loss (mean KL over the heads and rows of a batch, nats) against the step.
CurveFigure hedgehogLossFigure(const attnscope::HedgehogResult& result);
// Both written into `folder` as hedgehog_kl and hedgehog_loss with the extension `ext`; returns
// the paths. Throws attnscope::Error naming the file when one cannot be written, or for a result
// with no heads.
QStringList writeHedgehogFigures(const attnscope::HedgehogResult& result, const QString& folder,
                                 const QString& ext = QStringLiteral("png"));
