// Corpus result figures (see corpusfigures.h).
#include "figure/corpusfigures.h"

#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <limits>

std::vector<std::string> resultBlocks(const attnscope::CorpusResult& r) {
    std::vector<std::string> blocks;
    for (const auto& h : r.heads)
        if (std::find(blocks.begin(), blocks.end(), h.head.block) == blocks.end()) blocks.push_back(h.head.block);
    return blocks;
}

std::vector<CorpusQuantity> corpusQuantities(const attnscope::CorpusResult& r) {
    std::vector<CorpusQuantity> out;
    if (r.heads.empty()) return out;
    if (r.heads[0].hasImportance) {
        out.push_back({"importance", QStringLiteral("importance: %1").arg(QString::fromStdString(r.importanceName)),
                       QString()});
        out.push_back({"masked_metric",
                       QStringLiteral("%1 with the head masked").arg(QString::fromStdString(r.metricName)), QString()});
    }
    if (r.heads[0].hasStats)
        for (const std::string& key : attnscope::corpusStatKeys()) {
            const attnscope::HeadMetricInfo& m = attnscope::headMetric(key);
            out.push_back({key, QString::fromUtf8(m.title), QString::fromUtf8(m.unit)});
        }
    return out;
}

double headValue(const attnscope::HeadSummary& h, const std::string& key) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (key == "importance") return h.hasImportance ? h.importance.mean : nan;
    if (key == "masked_metric") return h.hasImportance ? h.maskedMetric : nan;
    const attnscope::StatSpread s = h.stat(key);
    return s.examples > 0 ? s.spread.mean : nan;
}

attnscope::HeadMap headGrid(const attnscope::CorpusResult& r, const std::string& block, const std::string& key) {
    attnscope::HeadMap m;
    for (const auto& h : r.heads)
        if (h.head.block == block)
            m.rows = std::max(m.rows, h.head.layer + 1), m.cols = std::max(m.cols, h.head.head + 1);
    m.values.assign(static_cast<std::size_t>(m.rows) * m.cols, std::numeric_limits<float>::quiet_NaN());
    for (const auto& h : r.heads)
        if (h.head.block == block)
            m.values[static_cast<std::size_t>(h.head.layer) * m.cols + h.head.head] =
                    static_cast<float>(headValue(h, key));
    return m;
}

attnscope::HeadMap importanceGrid(const attnscope::CorpusResult& r, const std::string& block) {
    return headGrid(r, block, "importance");
}

std::optional<Figure> importanceFigure(const attnscope::CorpusResult& r) {
    if (r.heads.empty() || !r.heads[0].hasImportance) return std::nullopt;
    double top = 0;
    for (const auto& h : r.heads) top = std::max(top, h.importance.mean);
    Figure f;
    for (const std::string& block : resultBlocks(r)) {
        FigurePanel p;
        p.map = importanceGrid(r, block);
        for (float& v : p.map.values) v = top > 0 ? std::max(0.0f, static_cast<float>(v / top)) : 0.0f;
        for (int l = 0; l < p.map.rows; ++l) p.queryLabels << QStringLiteral("L%1").arg(l);
        for (int h = 0; h < p.map.cols; ++h) p.keyLabels << QStringLiteral("H%1").arg(h);
        p.title = QString::fromStdString(block);
        f.panels.push_back(p);
    }
    f.title = QStringLiteral("%1 · head importance (%2 examples)")
                      .arg(QString::fromStdString(r.model).section(QLatin1Char('/'), -1))
                      .arg(r.examples);
    f.queryAxis = QStringLiteral("layer");
    f.keyAxis = QStringLiteral("head");
    f.colorbarLabel =
            QStringLiteral("%1 / max (max %2)").arg(QString::fromStdString(r.importanceName)).arg(top, 0, 'g', 3);
    f.widthIn = std::clamp(1.6 * static_cast<double>(f.panels.size()) + 1.2, 3.25, 6.75);
    return f;
}

CurveFigure pruningFigure(const std::vector<attnscope::CorpusResult>& results, const std::vector<QString>& names) {
    CurveFigure f;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        if (r.pruning.empty()) throw attnscope::Error("pruning figure: a result has no pruning curve");
        CurveSeries s;
        s.name = i < names.size() ? names[i] : QString();
        s.color = seriesColor(static_cast<int>(i));
        for (const auto& step : r.pruning) {
            s.x.push_back(step.k);
            s.y.push_back(step.metric.mean);
            if (results.size() == 1) s.spread.push_back(step.metric.std);
        }
        f.series.push_back(s);
    }
    const auto& r0 = results.front();
    f.xLabel = QStringLiteral("heads pruned (%1 order)").arg(QString::fromStdString(r0.orderKind));
    f.integerX = true;
    f.yLabel = QString::fromStdString(r0.metricName);
    if (results.size() == 1)
        f.title = QStringLiteral("%1 · pruning (%2 examples)")
                          .arg(QString::fromStdString(r0.model).section(QLatin1Char('/'), -1))
                          .arg(r0.examples);
    if (r0.metricName != "hidden cosine") {
        f.fixedY = true;
        f.yMin = 0;
        f.yMax = 1;
    }
    return f;
}
