// attnscope-cli export: one head's attention map as a figure for papers (PDF, SVG, PNG), drawn by
// the same renderer as the GUI's File > Export figure… (ui/figure.h); batch figures (a grid of
// chosen heads, a layer's heads, every layer as PDF pages, ui/figure/gridfigure.h); or the figure
// a workspace file describes (ui/figure/headfigure.h, the window's own path). Built only with the
// Qt UI; without it the command says so.
#include "commands.h"
#include "common.h"
#include "model_input.h"

#include "attnscope/runtime/error.h"
#include "attnscope/io/model_location.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>

#ifdef ATTNSCOPE_CLI_EXPORT
#include "figure/alignment.h"
#include "figure/causalresults.h"
#include "figure/figure.h"
#include "figure/gridfigure.h"
#include "figure/headfigure.h"
#include "figure/workspace.h"
#include "headless_qt.h"

#include "attnscope/lab/interventions.h"

#include <QFileInfo>
#endif

namespace attnscope::cli {

namespace {

#ifdef ATTNSCOPE_CLI_EXPORT

QStringList toQt(const std::vector<std::string>& labels) {
    QStringList out;
    for (const auto& s : labels) out << QString::fromStdString(s);
    return out;
}

// "builtin:reverse-dot" -> "reverse-dot", "/models/gpt2/" -> "gpt2".
QString modelName(const std::string& spec) {
    const std::string prefix = "builtin:";
    if (spec.compare(0, prefix.size(), prefix) == 0) return QString::fromStdString(spec.substr(prefix.size()));
    return QFileInfo(QString::fromStdString(spec)).canonicalFilePath().section(QLatin1Char('/'), -1);
}

void wrote(const QString& out, const Figure& figure, int pages = 1) {
    const QSizeF size = figureSizePoints(figure);
    std::cerr << "wrote " << out.toStdString() << " (" << size.width() << " x " << size.height() << " pt"
              << (pages > 1 ? ", " + std::to_string(pages) + " pages" : std::string()) << ")\n";
}

// --heads 3:0,3:5 (or BLOCK:L:H naming the drawn block) as (layer, head) pairs of `block`.
std::vector<std::pair<int, int>> headPairs(const std::string& text, const BlockInfo& block) {
    std::vector<std::pair<int, int>> pairs;
    for (const HeadRef& h : parseHeadList(text)) {
        if (!h.block.empty() && h.block != block.name)
            throw Error("--heads " + h.block + ":" + std::to_string(h.layer) + ":" + std::to_string(h.head) +
                        ": the figure draws the " + block.name + " block");
        pairs.emplace_back(h.layer, h.head);
    }
    return pairs;
}

// Which batch figure the flags ask for (none: one head). Checked before the model loads.
enum class Batch { None, Heads, LayerHeads, AllLayers };

Batch batchOf(const Args& args, const QString& out) {
    const int asked = int(args.value("heads").has_value()) + int(args.flag("all-heads")) + int(args.flag("all-layers"));
    if (asked > 1) throw UsageError("give one of --heads, --all-heads and --all-layers");
    if (asked == 0) return Batch::None;
    if (args.value("figure").value_or("map") != "map")
        throw UsageError("--figure alignment draws one figure; leave out the batch options");
    if (args.value("head")) throw UsageError("batch figures choose their heads; leave out --head");
    if (args.flag("all-heads") && !args.value("layer") && !args.value("workspace"))
        throw UsageError("--all-heads needs --layer L");
    if (!args.flag("all-heads") && args.value("layer"))
        throw UsageError("--layer goes with --all-heads; --heads takes L:H pairs");
    if (args.flag("all-layers") && figureFormatFor(out) != FigureFormat::Pdf)
        throw Error("--all-layers writes one page per layer: --out must be a .pdf");
    return args.value("heads") ? Batch::Heads : args.flag("all-heads") ? Batch::LayerHeads : Batch::AllLayers;
}

// The batch figure of `block` in trace; layer for --all-heads.
int writeBatch(Batch batch, const Args& args, const Trace& trace, int block, int layer, GridStyle style,
               const QString& out, int dpi) {
    if (auto title = args.value("title")) style.title = QString::fromStdString(*title);
    const BlockInfo& info = trace.blocks().at(std::size_t(block));
    if (batch == Batch::AllLayers) {
        const std::vector<Figure> pages = allLayersFigures(trace, block, style);
        writeFigurePages(pages, out);
        wrote(out, pages.front(), int(pages.size()));
        return 0;
    }
    const Figure figure = batch == Batch::Heads
                                  ? headGridFigure(trace, block, headPairs(*args.value("heads"), info), style)
                                  : layerGridFigure(trace, block, layer, style);
    writeFigure(figure, out, dpi);
    wrote(out, figure);
    return 0;
}

// --figure with --workspace: one of the Causal tab's figures (none: the workspace's head map).
std::optional<CausalFigureKind> causalKindOf(const Args& args) {
    const auto kind = args.value("figure");
    if (!kind) return std::nullopt;
    if (args.value("heads") || args.flag("all-heads") || args.flag("all-layers") || args.value("layer"))
        throw UsageError("--figure " + *kind + " draws one Causal figure; leave out the batch options");
    if (*kind == "lens") return CausalFigureKind::Lens;
    if (*kind == "dla") return CausalFigureKind::Dla;
    if (*kind == "patch") return CausalFigureKind::Patch;
    throw Error("--figure " + *kind +
                ": with --workspace, use lens, dla or patch (the Causal tab's figures; leave it out for the "
                "workspace's map)");
}

// export --workspace FILE: the model, input, selection, lab settings and colours come from the
// file, and the figure is the one the window shows for it (headfigure.h).
int runWorkspaceExport(const Args& args, const QString& out) {
    args.expectPositionals(0);
    for (const char* given : {"ids", "text", "image", "target-ids", "target-text", "type-ids", "attend", "temperature",
                              "block", "colormap", "scale", "head"})
        if (args.value(given))
            throw UsageError(std::string("--workspace gives the model, input and view; leave out --") + given);
    const std::optional<CausalFigureKind> causal = causalKindOf(args);
    const Batch batch = causal ? Batch::None : batchOf(args, out);
    if (batch == Batch::None && args.value("layer"))
        throw UsageError("--workspace gives the model, input and view; leave out --layer");
    const long long dpi = args.integer("dpi", kMinFigureDpi, kMaxFigureDpi).value_or(-1);
    const auto width = args.number("width-in");
    if (width && !(*width >= kMinFigureWidthIn && *width <= kMaxFigureWidthIn))
        throw Error("--width-in must be between " + std::to_string(int(kMinFigureWidthIn)) + " and " +
                    std::to_string(int(kMaxFigureWidthIn)) + " inches");
    const Workspace ws = readWorkspace(QString::fromStdString(args.required("workspace")));
    LoadOptions options;
    options.device = parseDeviceChoice(args.value("device").value_or(ws.device.toStdString()));
    // A workspace saved on a model id (org/name) reopens it from the hub cache.
    const auto model = Model::load(resolveModelLocation(ws.model.toStdString()), options);
    const int pngDpi = int(dpi > 0 ? dpi : ws.figure.dpi);
    if (causal) {  // the Causal tab's figure, as its Export… writes it (two columns wide by default)
        const QString title = QString::fromStdString(args.value("title").value_or(""));
        const PaintedFigure figure = workspaceCausalFigure(*model, ws, *causal, title);
        const double widthIn = width.value_or(kCausalFigureWidthIn);
        writePainted(out, figure, widthIn, pngDpi);
        const QSizeF size = figure.size(widthIn * 72.0);
        std::cerr << "wrote " << out.toStdString() << " (" << size.width() << " x " << size.height() << " pt)\n";
        return 0;
    }
    if (batch != Batch::None) {
        if (ws.source.source != attnscope::MapSource::Weights)  // the grids draw the weights only
            throw Error(std::string("the workspace shows the ") + sourceName(ws.source.source) +
                        " map source; --heads, --all-heads and --all-layers draw attention weights: leave them out "
                        "for the workspace's own figure");
        const auto trace = workspaceTrace(*model, ws);
        GridStyle style;
        style.modelName = modelDisplayName(ws.model);
        style.temperature = ws.inside.enabled ? 1.0 : ws.temperature;  // the maps as the window draws them
        style.colormap = ws.colormap;
        style.scale = ws.scale;
        style.rawTokens = ws.view.rawTokens;
        style.widthIn = width.value_or(ws.figure.widthIn);
        const int block = ws.selection.block.isEmpty() ? 0 : trace->blockIndex(ws.selection.block.toStdString());
        const int layer = int(args.integer("layer", 0, kMaxInt).value_or(ws.selection.layer));
        return writeBatch(batch, args, *trace, block, layer, style, out, pngDpi);  // the workspace's width stands
    }
    Figure figure = workspaceFigure(*model, ws);
    if (width) figure.widthIn = *width;
    if (auto title = args.value("title")) figure.title = QString::fromStdString(*title);
    writeFigure(figure, out, pngDpi);
    wrote(out, figure);
    return 0;
}

int runExport(const std::vector<std::string>& argv) {
    Args args(argv,
              withInputOptions({"out", "device", "temperature", "layer", "head", "block", "colormap", "scale",
                                "width-in", "dpi", "title", "figure", "workspace", "heads", "revision"}),
              {"all-heads", "all-layers"});
    const QString out = QString::fromStdString(args.required("out"));
    if (!figureFormatFor(out))
        throw Error("--out " + args.required("out") + ": unknown figure format (use .pdf, .svg or .png)");
    if (args.value("workspace")) return runWorkspaceExport(args, out);
    args.expectPositionals(1);
    const Batch batch = batchOf(args, out);
    const long long layer = args.integer("layer", 0, kMaxInt).value_or(-1);
    const long long head = args.integer("head", 0, kMaxInt).value_or(-1);
    const std::string kind = args.value("figure").value_or("map");
    if (kind != "map" && kind != "alignment") throw Error("--figure " + kind + ": unknown (use map or alignment)");
    const bool alignment = kind == "alignment";  // one head, or without --layer/--head the last layer's mean
    if (alignment && args.value("block"))
        throw UsageError("--figure alignment draws the cross block; leave out --block");
    const bool oneHead = batch == Batch::None;
    if (oneHead && (alignment ? args.value("layer").has_value() != args.value("head").has_value()
                              : !args.value("layer") || !args.value("head")))
        throw UsageError(alignment ? "give both --layer L --head H, or neither (every head of the last layer)"
                                   : "give the map: --layer L --head H");
    const ModelInput input(args);  // malformed input fails before loading

    // Every option is checked before the model loads.
    Figure figure;
    MapOptions mapOptions;
    mapOptions.temperature = args.number("temperature").value_or(1.0);
    if (!(mapOptions.temperature > 0) || !std::isfinite(mapOptions.temperature))
        throw Error("--temperature must be a finite number > 0");
    const QString cmap = QString::fromStdString(args.value("colormap").value_or("viridis"));
    const auto colormap = parseColormap(cmap);
    if (!colormap)
        throw Error("--colormap " + cmap.toStdString() + ": unknown (use " + colormapNames().join(", ").toStdString() +
                    ")");
    figure.colormap = *colormap;
    const std::string scale = args.value("scale").value_or("linear");
    if (scale != "linear" && scale != "log") throw Error("--scale " + scale + ": unknown (use linear or log)");
    figure.scale.type = scale == "log" ? ColorScaleType::Log : ColorScaleType::Linear;
    figure.widthIn = args.number("width-in").value_or(3.25);
    if (!(figure.widthIn >= kMinFigureWidthIn && figure.widthIn <= kMaxFigureWidthIn))
        throw Error("--width-in must be between " + std::to_string(int(kMinFigureWidthIn)) + " and " +
                    std::to_string(int(kMaxFigureWidthIn)) + " inches");
    const long long dpi = args.integer("dpi", kMinFigureDpi, kMaxFigureDpi).value_or(300);

    auto model = loadModel(args);
    auto trace = input.run(*model);
    if (alignment) {
        AlignmentOptions options;
        options.map = mapOptions;
        if (layer >= 0) options.heads = {{int(layer), int(head)}};
        const bool hasCross = std::any_of(trace->blocks().begin(), trace->blocks().end(),
                                          [](const BlockInfo& b) { return b.name == "cross"; });
        if (!hasCross)
            throw Error("--figure alignment needs an encoder-decoder model; this one has no cross-attention");
        Figure drawn = alignmentFigure(*trace, options, modelName(args.positional(0, "MODEL")));
        drawn.colormap = figure.colormap;
        drawn.scale = figure.scale;
        drawn.widthIn = figure.widthIn;
        if (auto title = args.value("title")) drawn.title = QString::fromStdString(*title);
        figure = std::move(drawn);
        writeFigure(figure, out, int(dpi));
        const QSizeF size = figureSizePoints(figure);
        std::cerr << "wrote " << out.toStdString() << " (" << size.width() << " x " << size.height() << " pt)\n";
        return 0;
    }
    const auto& blocks = trace->blocks();
    int block = 0;
    if (const auto name = args.value("block")) {
        block = trace->blockIndex(*name);
    } else {
        for (int b = 0; b < int(blocks.size()); ++b)
            if (blocks[b].name == "cross") block = b;  // the most telling map of a seq2seq model
    }
    if (batch != Batch::None) {
        GridStyle style;
        style.modelName = modelName(args.positional(0, "MODEL"));
        style.temperature = mapOptions.temperature;
        style.colormap = figure.colormap;
        style.scale = figure.scale.type;
        style.widthIn = args.value("width-in") ? figure.widthIn : 6.75;  // a grid needs the width of two columns
        return writeBatch(batch, args, *trace, block, int(layer), style, out, int(dpi));
    }
    const BlockInfo& info = blocks.at(std::size_t(block));
    FigurePanel panel;
    panel.map = trace->map(block, int(layer), int(head), mapOptions);  // checks the indices
    panel.queryLabels = toQt(info.queryTokens);
    panel.keyLabels = toQt(info.keyTokens);
    figure.panels.push_back(std::move(panel));
    const double shownT = info.kind == AttentionKind::Linear ? 1.0 : mapOptions.temperature;
    figure.title = args.value("title") ? QString::fromStdString(*args.value("title"))
                                       : mapTitle(modelName(args.positional(0, "MODEL")),
                                                  blocks.size() > 1 ? QString::fromStdString(info.name) : QString(),
                                                  int(layer), int(head), shownT);
    // Mixture-of-experts decoders: the router strip under the map (figure/routerfigure.h).
    if (auto strip = routerStripFigure(*trace, int(layer)); strip && strip->router.tokens == figure.panels[0].map.cols)
        figure.routerStrip = std::move(strip);
    writeFigure(figure, out, int(dpi));
    const QSizeF size = figureSizePoints(figure);
    std::cerr << "wrote " << out.toStdString() << " (" << size.width() << " x " << size.height() << " pt)\n";
    return 0;
}

int runExportCommand(const std::vector<std::string>& argv) {
    const HeadlessQt qt;
    return runExport(argv);
}

#else

int runExportCommand(const std::vector<std::string>&) {
    throw Error("export is unavailable: this attnscope-cli was built without the Qt UI (ATTNSCOPE_BUILD_UI=OFF)");
}

#endif

}  // namespace

Command exportCommand() {
    return {"export",
            "write attention maps as figures (PDF, SVG, PNG): one head, a grid of heads, every layer, a workspace",
            "usage: attnscope-cli export MODEL (--ids 3,17,42 | --text STRING | --image FILE) --layer L --head H\n"
            "                            --out FIG.pdf|.svg|.png [--type-ids 0,0,1,1] [--attend 1,1,1,0]\n"
            "                            [--block self|cross|encoder|decoder] [--temperature T]\n"
            "                            [--colormap viridis|cividis|magma|gray] [--scale linear|log]\n"
            "                            [--width-in 3.25] [--dpi 300] [--title TEXT] [--device cpu|cuda|auto]\n"
            "                            [--figure map|alignment]\n"
            "       attnscope-cli export MODEL INPUT (--heads 3:0,3:5,7:2 | --layer L --all-heads | --all-layers) --out FIG\n"
            "       attnscope-cli export --workspace FILE.attnscope --out FIG [--width-in W] [--dpi D] [--title T]\n"
            "                            [--heads ... | --all-heads [--layer L] | --all-layers | --figure lens|dla|patch]\n\n"
            "Runs the model on the input and draws the map of head H in layer L of the block (default:\n"
            "cross when the model has it, else its only block) the way the desktop app shows it: token\n"
            "labels on both axes (row = query, column = key), a colour bar and a title.\n"
            "  --width-in   physical width in inches: 3.25 for one column, 6.75 for two columns;\n"
            "               fonts are sized in points for that width\n"
            "  --dpi        pixels per inch of a PNG (stored in the file); PDF and SVG are vector\n"
            "  --scale log  colours on a log scale from 1e-4 to 1\n"
            "  --figure alignment  an encoder-decoder's cross-attention alignment: source tokens along\n"
            "               the top, target tokens down the side, a mark in each row's argmax cell (as\n"
            "               attention --alignment computes it); --layer/--head pick one head, without\n"
            "               them the mean of the last layer's heads\n"
            "  --heads L:H,L:H  those heads of the block as one grid figure (panels titled L3 H5, one colour\n"
            "               bar, query labels left of each row, key labels under each column)\n"
            "  --layer L --all-heads  every head of layer L as one grid\n"
            "  --all-layers every layer of the block, one grid page per layer: a multi-page PDF\n"
            "               (grids default to --width-in 6.75, the width of two columns)\n"
            "  --workspace FILE  the figure a workspace saved by the desktop app (File > Save Workspace)\n"
            "               shows: its model, input, block, layer, head, temperature (also inside the\n"
            "               model), masked heads, lab variant (re-fitting its additive fit), colours,\n"
            "               zoom and raw-token choice, at its export width; the batch options draw the\n"
            "               workspace's block and maps instead; --figure lens, dla or patch draws that\n"
            "               figure of its Causal tab (its clean and corrupt inputs, P, answer T and wrong\n"
            "               T2, what to patch and the method; T and T2 default to the top two\n"
            "               predictions at P, as in the tab), 6.75 in wide unless --width-in says\n"
            "The format follows the extension of --out. PDF keeps text as text with embedded fonts.\n"
            "Invalid input exits with code 2 and one 'error: ...' line; an existing --out is then untouched.\n",
            runExportCommand};
}

}  // namespace attnscope::cli
