// Kinds report figures (see kindsfigures.h).
#include "figure/kindsfigures.h"

#include "attnscope/runtime/error.h"

#include <QDir>

#include <algorithm>

#include <cmath>

using attnscope::KindsReport;

CurveFigure kindsAccuracyFigure(const KindsReport& report) {
    CurveFigure f;
    for (std::size_t i = 0; i < report.kinds.size(); ++i) {
        const attnscope::KindRow& k = report.kinds[i];
        CurveSeries s;
        s.name = QString::fromStdString(k.kind);
        s.color = seriesColor(static_cast<int>(i));
        const double buckets[] = {k.accuracyShort, k.accuracyMedium, k.accuracyLong};
        for (int b = 0; b < 3; ++b)
            if (buckets[b] >= 0) {
                s.x.push_back(b + 1);
                s.y.push_back(buckets[b]);
            }
        if (!s.x.empty()) f.series.push_back(s);
    }
    const QStringList buckets =
            report.kinds.empty()
                    ? QStringList()
                    : QString::fromStdString(report.kinds[0].lengthBuckets).split(QLatin1Char('|'), Qt::SkipEmptyParts);
    f.title = QStringLiteral("held-out accuracy by input length");
    f.xLabel = buckets.size() == 3
                       ? QStringLiteral("length: 1 = %1, 2 = %2, 3 = %3 tokens").arg(buckets[0], buckets[1], buckets[2])
                       : QStringLiteral("length bucket (1 short, 2 medium, 3 long)");
    f.yLabel = QStringLiteral("accuracy");
    f.integerX = true;
    f.fixedY = true;
    f.yMin = 0;
    f.yMax = 1;
    return f;
}

CurveFigure kindsScalingFigure(const KindsReport& report, bool memory) {
    CurveFigure f;
    std::vector<std::string> kinds;
    for (const auto& row : report.scaling)
        if (std::find(kinds.begin(), kinds.end(), row.kind) == kinds.end()) kinds.push_back(row.kind);
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        CurveSeries s;
        s.name = QString::fromStdString(kinds[i]);
        s.color = seriesColor(static_cast<int>(i));
        for (const auto& row : report.scaling) {
            if (row.kind != kinds[i] || !row.note.empty()) continue;
            s.x.push_back(std::log2(static_cast<double>(row.n)));
            s.y.push_back(std::log10(std::max(kScalingFloor, memory ? row.peakExtraMiB : row.seconds)));
        }
        if (!s.x.empty()) f.series.push_back(s);
    }
    f.title = memory ? QStringLiteral("one head's forward: peak extra memory")
                     : QStringLiteral("one head's forward: time");
    f.xLabel = QStringLiteral("log2 n (tokens)");
    f.integerX = true;
    f.yLabel = memory ? QStringLiteral("log10 peak extra resident MiB") : QStringLiteral("log10 seconds");
    return f;
}

QStringList writeKindsFigures(const KindsReport& report, const QString& folder, const QString& ext) {
    if (report.kinds.empty() && report.scaling.empty()) throw attnscope::Error("kinds figures: the report is empty");
    QStringList paths;
    const QDir dir(folder);
    const auto write = [&](const CurveFigure& f, const QString& name) {
        if (f.series.empty()) return;
        const QString path = dir.filePath(name + QLatin1Char('.') + ext);
        writeCurveFigure(f, path);
        paths << path;
    };
    write(kindsAccuracyFigure(report), QStringLiteral("kinds_accuracy"));
    write(kindsScalingFigure(report, false), QStringLiteral("kinds_seconds"));
    write(kindsScalingFigure(report, true), QStringLiteral("kinds_memory"));
    return paths;
}

CurveFigure hedgehogKlFigure(const attnscope::HedgehogResult& r) {
    CurveFigure f;
    const std::pair<const std::vector<double>*, const char*> rows[] = {
            {&r.klElu, "elu+1"}, {&r.klInitial, "untrained (W = I)"}, {&r.klFitted, "distilled"}};
    for (int i = 0; i < 3; ++i) {
        CurveSeries s;
        s.name = QString::fromUtf8(rows[i].second);
        s.color = seriesColor(i);
        for (std::size_t g = 0; g < rows[i].first->size(); ++g) {
            s.x.push_back(static_cast<double>(g));
            s.y.push_back(std::log10(std::max(kScalingFloor, (*rows[i].first)[g])));
        }
        if (!s.x.empty()) f.series.push_back(s);
    }
    const QString layers =
            r.layers.empty() ? QString() : QStringLiteral("layers %1-%2").arg(r.layers.front()).arg(r.layers.back());
    f.title = QStringLiteral("KL(softmax ‖ linear) per head, %1 %2 texts")
                      .arg(r.evalInputs)
                      .arg(r.heldOut ? QStringLiteral("held-out") : QStringLiteral("training"));
    f.xLabel = QStringLiteral("head: layer · %1 + head (%2)").arg(r.heads).arg(layers);
    f.integerX = true;
    f.yLabel = QStringLiteral("log10 KL (nats)");
    return f;
}

CurveFigure hedgehogLossFigure(const attnscope::HedgehogResult& r) {
    CurveFigure f;
    CurveSeries s;
    s.name = QStringLiteral("training batch");
    s.color = seriesColor(2);
    for (std::size_t i = 0; i < r.lossHistory.size(); ++i) {
        s.x.push_back(static_cast<double>(i + 1));
        s.y.push_back(r.lossHistory[i]);
    }
    if (!s.x.empty()) f.series.push_back(s);
    f.title = QStringLiteral("fit loss: mean KL over heads, rows");
    f.xLabel = QStringLiteral("step");
    f.integerX = true;
    f.yLabel = QStringLiteral("KL (nats)");
    return f;
}

QStringList writeHedgehogFigures(const attnscope::HedgehogResult& result, const QString& folder, const QString& ext) {
    if (result.klFitted.empty()) throw attnscope::Error("per-head distillation figures: the result has no heads");
    QStringList paths;
    const QDir dir(folder);
    const std::pair<CurveFigure, QString> figures[] = {{hedgehogKlFigure(result), QStringLiteral("hedgehog_kl")},
                                                       {hedgehogLossFigure(result), QStringLiteral("hedgehog_loss")}};
    for (const auto& [figure, name] : figures) {
        if (figure.series.empty()) continue;
        const QString path = dir.filePath(name + QLatin1Char('.') + ext);
        writeCurveFigure(figure, path);
        paths << path;
    }
    return paths;
}
