// Two models compared head by head (core's lab/model_comparison.h) as a layer × head figure: each
// cell the head's mean row KL(A ‖ B) in nats, on a log colour scale over the four decades below
// the largest. Shared by `attnscope-cli compare-models` and the window's Compare Models dialog.
#pragma once

#include "figure/figure.h"

#include "attnscope/lab/model_comparison.h"

#include <QString>

Figure modelComparisonFigure(const attnscope::BlockComparison& block, const QString& nameA, const QString& nameB);

// "output KL 0.0012 nats · same top token (' the' 41.2% / 40.9%) · mean head KL 3.1e-4, largest
// 2.2e-3 at layer 5 head 3": the comparison in one line.
QString modelComparisonSummary(const attnscope::ModelComparison& c);
