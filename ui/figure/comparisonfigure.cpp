#include "figure/comparisonfigure.h"

#include "figure/colormaps.h"

Figure modelComparisonFigure(const attnscope::BlockComparison& block, const QString& nameA, const QString& nameB) {
    Figure f;
    FigurePanel p;
    p.map.rows = block.layers;
    p.map.cols = block.heads;
    p.map.values.reserve(block.kl.size());
    for (double v : block.kl) p.map.values.push_back(static_cast<float>(v));
    for (int l = 0; l < block.layers; ++l) p.queryLabels << QString::number(l);
    for (int h = 0; h < block.heads; ++h) p.keyLabels << QString::number(h);
    p.title = block.block == "self" ? QString() : QString::fromStdString(block.block);
    f.panels.push_back(p);
    f.title = QStringLiteral("%1 vs %2").arg(nameA, nameB);
    f.queryAxis = QStringLiteral("layer");
    f.keyAxis = QStringLiteral("head");
    f.colorbarLabel = QStringLiteral("map KL (nats)");
    f.scale = rangedScale(ColorScaleType::Log, 0.0, block.maxKl);
    f.colormap = Colormap::Viridis;
    return f;
}

namespace {

QString top1(const std::vector<attnscope::TokenProbability>& top) {
    if (top.empty()) return QStringLiteral("-");
    return QStringLiteral("'%1' %2%")
            .arg(QString::fromStdString(top[0].label))
            .arg(top[0].probability * 100, 0, 'f', 1);
}

}  // namespace

QString modelComparisonSummary(const attnscope::ModelComparison& c) {
    QStringList parts;
    const auto& o = c.output;
    if (o.kind == "next-token") {
        parts << QStringLiteral("output KL %1 nats").arg(o.kl, 0, 'g', 3);
        parts << (o.sameTop ? QStringLiteral("same top token") : QStringLiteral("top token differs")) +
                         QStringLiteral(" (%1 / %2)").arg(top1(o.originalTop), top1(o.changedTop));
    } else if (o.kind != "none") {
        parts << QStringLiteral("output change %1 (%2)")
                         .arg(o.magnitude(), 0, 'g', 3)
                         .arg(QString::fromStdString(o.kind));
    }
    for (const auto& b : c.blocks)
        parts << QStringLiteral("%1mean head KL %2, largest %3 at layer %4 head %5")
                         .arg(c.blocks.size() > 1 ? QString::fromStdString(b.block) + QStringLiteral(": ") : QString())
                         .arg(b.meanKl, 0, 'g', 3)
                         .arg(b.maxKl, 0, 'g', 3)
                         .arg(b.worstLayer)
                         .arg(b.worstHead);
    return parts.join(QStringLiteral(" · "));
}
