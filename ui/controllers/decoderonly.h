#pragma once
// Why a tab that needs a decoder-only language model (the Causal and Long context tabs) cannot run
// on a model. Its info settles built-ins, encoder-decoders and image models at once; the others are
// decided by their first trace (one block of causal self-attention).

#include "attnscope/attention/trace.h"
#include "attnscope/models/model.h"

#include <QCoreApplication>
#include <QString>

#include <optional>

// builtinReason: the tab's own sentence for the built-in models; analyses: what needs the model,
// as the subject of "… need a decoder-only language model" ("the causal analyses").
// nullopt: the info does not settle it.
inline std::optional<QString> decoderOnlyRefusal(const attnscope::ModelInfo& info, const QString& builtinReason,
                                                 const QString& analyses) {
    const QString family = QString::fromStdString(info.family);
    const auto why = [&](const char* kind) {
        return QCoreApplication::translate("DecoderOnly", "%1 is %2: %3 need a decoder-only language model.")
                .arg(family, QCoreApplication::translate("DecoderOnly", kind), analyses);
    };
    if (!info.task.empty()) return builtinReason;
    if (info.encoderDecoder) return why("an encoder-decoder");
    if (info.imageInput) return why("an image model");
    return std::nullopt;
}

// The reason from a trace, or an empty string when it is one block of causal self-attention.
inline QString decoderOnlyTraceRefusal(const attnscope::Trace& trace, const std::string& family,
                                       const QString& analyses) {
    const auto& blocks = trace.blocks();
    if (blocks.size() == 1 && blocks.front().causal) return {};
    return QCoreApplication::translate("DecoderOnly",
                                       "%1 is an encoder (its attention is not causal): %2 need a decoder-only "
                                       "language model.")
            .arg(QString::fromStdString(family), analyses);
}
