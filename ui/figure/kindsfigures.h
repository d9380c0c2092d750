// Figures of a kinds report (core's lab/kinds_report.h; `attnscope-cli kinds-report`): each built
// here once, shown by the Compare tab's Kinds panel and written by its Export (and docs/kinds.md).
#pragma once

#include "figure/curvefigure.h"

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
