#include "services/tokenids.h"

#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"

#include <QRegularExpression>
#include <QStringList>

TokenIdsParse parseTokenIds(const QString& text, int vocabSize, int maxCount) {
    TokenIdsParse out;
    static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
    const QStringList parts = text.split(separators, Qt::SkipEmptyParts);
    if (parts.isEmpty()) {
        out.error = QStringLiteral("Enter at least one token id.");
        return out;
    }
    if (maxCount > 0 && parts.size() > maxCount) {
        out.error = QStringLiteral("%1 token ids given; this model takes at most %2.")
                        .arg(parts.size())
                        .arg(maxCount);
        return out;
    }
    out.ids.reserve(static_cast<std::size_t>(parts.size()));
    for (const QString& part : parts) {
        bool ok = false;
        const qlonglong id = part.toLongLong(&ok);
        if (!ok || id < 0 || (vocabSize > 0 && id >= vocabSize)) {
            out.ids.clear();
            out.error = vocabSize > 0
                            ? QStringLiteral("'%1' is not a token id: expected a whole number from 0 to %2.")
                                  .arg(part)
                                  .arg(vocabSize - 1)
                            : QStringLiteral("'%1' is not a token id: expected a whole number >= 0.").arg(part);
            return out;
        }
        out.ids.push_back(id);
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
