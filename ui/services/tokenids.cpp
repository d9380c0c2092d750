#include "services/tokenids.h"

#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/tokenizer/token_ids.h"

#include <QStringList>

TokenIdsParse parseTokenIds(const QString& text, int vocabSize, int maxCount) {
    TokenIdsParse out;
    // simplified(): any Unicode space (a pasted no-break space, say) becomes the ASCII one core reads.
    const QString spaced = text.simplified();
    if (spaced.isEmpty()) {
        out.error = QStringLiteral("Enter at least one token id.");
        return out;
    }
    try {
        out.ids = attnscope::parseTokenIds(spaced.toStdString());  // core's rules, as the CLI's --ids
    } catch (const attnscope::Error& e) {
        out.error = QString::fromStdString(e.what());
        return out;
    }
    // What the model allows, said in the ui's words before a run is started.
    if (maxCount > 0 && out.ids.size() > static_cast<std::size_t>(maxCount)) {
        out.error = QStringLiteral("%1 token ids given; this model takes at most %2.")
                            .arg(static_cast<qulonglong>(out.ids.size()))
                            .arg(maxCount);
        out.ids.clear();
        return out;
    }
    for (const std::int64_t id : out.ids) {
        if (vocabSize > 0 && id >= vocabSize) {
            out.error = QStringLiteral("'%1' is not a token id: expected a whole number from 0 to %2.")
                                .arg(static_cast<qlonglong>(id))
                                .arg(vocabSize - 1);
            out.ids.clear();
            return out;
        }
    }
    return out;
}

QString formatTokenIds(const std::vector<std::int64_t>& ids) {
    QStringList parts;
    for (auto id : ids) parts << QString::number(id);
    return parts.join(QLatin1Char(' '));
}

std::vector<std::int64_t> encodeInput(const attnscope::Model& model, const QString& text, bool asIds) {
    if (asIds) {
        const auto& info = model.info();
        const TokenIdsParse parsed = parseTokenIds(text, info.vocabSize, 0);  // length: forward() says
        if (!parsed.ok()) throw attnscope::Error(parsed.error.toStdString());
        return parsed.ids;
    }
    if (text.trimmed().isEmpty()) throw attnscope::Error("Type a text to run.");
    return model.encodeText(text.toStdString());
}

std::vector<std::int64_t> encodeTargetInput(const attnscope::Model& model, const QString& text, bool asIds) {
    if (asIds) {
        const TokenIdsParse parsed = parseTokenIds(text, model.info().vocabSize, 0);  // length: the model says
        if (!parsed.ok()) throw attnscope::Error("Target: " + parsed.error.toStdString());
        return parsed.ids;
    }
    return model.encodeTarget(text.toStdString());
}
