#include "figure/gridfigure.h"

#include "figure/headfigure.h"

#include "attnscope/attention/trace.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cmath>

int gridColumns(int panels, double widthIn) {
    if (panels <= 1) return 1;
    const int most = std::clamp(int(std::floor((widthIn - 0.9) / 0.75)), 1, panels);
    const int rows = (panels + most - 1) / most;
    return (panels + rows - 1) / rows;
}

namespace {

std::string blockText(const attnscope::BlockInfo& info) {
    return info.name + " block (" + std::to_string(info.layers) + " layers x " + std::to_string(info.heads) + " heads)";
}

}  // namespace

Figure headGridFigure(const attnscope::Trace& trace, int block, const std::vector<std::pair<int, int>>& heads,
                      const GridStyle& style) {
    if (heads.empty()) throw attnscope::Error("grid figure: no heads chosen");
    const auto& info = trace.blocks().at(std::size_t(block));
    const bool linear = info.kind == attnscope::AttentionKind::Linear;
    attnscope::MapOptions options;
    options.temperature = style.temperature;
    const QStringList queries = axisLabels(trace, info, true, style.rawTokens);
    const QStringList keys = axisLabels(trace, info, false, style.rawTokens);
    Figure f;
    f.colormap = style.colormap;
    f.scale.type = style.scale;
    f.widthIn = style.widthIn;
    for (const auto& [layer, head] : heads) {
        if (layer < 0 || layer >= info.layers || head < 0 || head >= info.heads)
            throw attnscope::Error("grid figure: layer " + std::to_string(layer) + " head " + std::to_string(head) +
                                   " is outside the " + blockText(info));
        FigurePanel panel;
        panel.map = trace.map(block, layer, head, options);
        panel.queryLabels = queries;
        panel.keyLabels = keys;
        panel.title = QStringLiteral("L%1 H%2").arg(layer).arg(head);
        f.panels.push_back(std::move(panel));
    }
    f.columns = gridColumns(int(f.panels.size()), style.widthIn);
    if (!style.title.isEmpty()) {
        f.title = style.title;
    } else {
        // "reverse-dot · cross · layer 3 · T = 0.5" for one layer, else "· 3 heads".
        QStringList parts;
        if (!style.modelName.isEmpty()) parts << style.modelName;
        if (trace.blocks().size() > 1) parts << QString::fromStdString(info.name);
        const bool oneLayer =
                std::all_of(heads.begin(), heads.end(), [&](const auto& h) { return h.first == heads.front().first; });
        parts << (oneLayer ? QStringLiteral("layer %1").arg(heads.front().first)
                           : QStringLiteral("%1 heads").arg(heads.size()));
        if (!linear && std::abs(style.temperature - 1.0) > 1e-9)
            parts << QStringLiteral("T = %1").arg(style.temperature, 0, 'g', 3);
        f.title = parts.join(QStringLiteral(" \u00b7 "));
    }
    return f;
}

Figure layerGridFigure(const attnscope::Trace& trace, int block, int layer, const GridStyle& style) {
    const auto& info = trace.blocks().at(std::size_t(block));
    if (layer < 0 || layer >= info.layers)
        throw attnscope::Error("grid figure: layer " + std::to_string(layer) + " is outside the " + blockText(info));
    std::vector<std::pair<int, int>> heads;
    for (int h = 0; h < info.heads; ++h) heads.emplace_back(layer, h);
    return headGridFigure(trace, block, heads, style);
}

std::vector<Figure> allLayersFigures(const attnscope::Trace& trace, int block, const GridStyle& style) {
    const auto& info = trace.blocks().at(std::size_t(block));
    std::vector<Figure> pages;
    for (int l = 0; l < info.layers; ++l) pages.push_back(layerGridFigure(trace, block, l, style));
    return pages;
}
