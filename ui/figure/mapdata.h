// The current map's numbers for other tools: .npy (float32, C order, [queries, keys]; core's
// writeNpy) or .csv (a header row of key tokens, then one row per query token; RFC 4180 quoting,
// values with 9 significant digits so float32 round-trips). Written via a temporary file.
#pragma once

#include "attnscope/attention/trace.h"

#include <QString>
#include <QStringList>

// By the extension (.npy or .csv). Throws attnscope::Error naming the file and the problem.
void writeMapData(const attnscope::HeadMap& map, const QStringList& queryLabels, const QStringList& keyLabels,
                  const QString& path);

// One CSV field, quoted when it holds a comma, quote, CR or LF (or starts/ends with a space).
QString csvField(const QString& text);
