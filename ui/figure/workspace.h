// Workspace files (.attnscope): everything that makes the window show one view, as JSON with a
// version, so that File > Open Workspace shows the same view again and `attnscope-cli export
// --workspace FILE` draws the same figure without a display.
//
// The format (version 2; docs in README "Workspace files"): an object with "format":
// "attnscope-workspace", "version": 2, "model" (a folder or builtin:NAME), and the optional
// sections "input", "selection", "temperature", "inside_model", "lab", "masked_heads",
// "colors", "view", "figure", "window", and since version 2 "model_view", "image", "views"
// and "generation" (workspace_views.cpp), the optional "causal" and "lab.knockout" (workspace_causal.cpp),
// the optional "long" (the Long context tab, workspace_long.cpp, written only when it is not the defaults),
// and "map_source" (the Show selector: {"source": "value-norm", "target": 42}), written only when the
// maps show another source than the weights, so a file of the weights reads in an AttnScope before map
// sources (which refuses the section by name otherwise). Version 1 files are read as they are: a
// section they lack takes the defaults below, which are what a fresh window shows. Every field is
// typed and checked; an unknown field, a wrong type or a value out of range is refused with
// attnscope::Error naming the file and the field
// ("ws.attnscope: lab.variant: unknown 'dots' (use native, dot, linear, additive or hybrid)"). Relative model and image
// paths are read relative to the workspace file's folder.
//
// QtCore only (QJsonDocument): the CLI reads it without Widgets, the fuzzer without a display.
#pragma once

#include "figure/colormaps.h"

#include "attnscope/analysis/map_source.h"
#include "attnscope/attention/run_options.h"
#include "attnscope/analysis/overlay.h"
#include "attnscope/attention/trace.h"
#include "attnscope/models/generation.h"
#include "attnscope/lab/lab.h"

#include <QByteArray>
#include <QString>

#include <optional>
#include <vector>

struct Workspace {
    // 1: up to the window's view; 2: + the Model, Image, Views and generation sections (and, as
    // optional additions that an older reader refuses by name, the Causal tab and the lab's knockouts).
    static constexpr int kVersion = 2;

    QString model;                            // a model folder (absolute once read) or builtin:NAME
    QString device = QStringLiteral("auto");  // auto, cpu or cuda

    struct Input {
        QString text;  // the input box: a text, or token ids when idsMode
        bool idsMode = false;
        QString target;  // encoder-decoders: the forced target (text or ids); empty = generate
        QString image;   // image models: the image file (absolute once read); empty = none
    } input;

    struct Selection {
        QString block;  // the block's name; empty = the model's default block
        int layer = 0;
        int head = 0;
    } selection;

    double temperature = 1.0;  // the slider, 0.1..10

    struct InsideModel {  // "Inside the model": the slider's T re-runs the model in these layers
        bool enabled = false;
        std::vector<int> layers;  // empty = every layer
    } inside;

    struct Lab {
        attnscope::LabVariant variant = attnscope::LabVariant::Native;
        attnscope::FeatureMap featureMap = attnscope::FeatureMap::Elu;
        int features = 256;  // FAVOR+ random features
        double gate = 0.5;   // hybrid
        int fitWidth = 32;   // the additive fit's settings
        int fitSteps = 300;
        // The head the additive fit was made for (re-fitted on opening: the fit is deterministic),
        // at the display temperature fitTemperature; none when there was no fit.
        struct Fit {
            QString block;
            int layer = 0;
            int head = 0;
            double temperature = 1.0;
        };
        std::optional<Fit> fit;
        QString knockout;  // attention knockouts (attnscope/attention/knockout_spec.h); empty = none
    } lab;

    std::vector<attnscope::HeadRef> masked;  // heads whose output is zeroed (re-run)

    struct Source {  // what the maps show (the Show selector; attnscope/analysis/map_source.h)
        attnscope::MapSource source = attnscope::MapSource::Weights;
        // The gradient sources' target: a vocabulary id (decoders) or a class index
        // (classifiers, ViT); none = the model's choice (its argmax).
        std::optional<std::int64_t> target;
    } source;

    Colormap colormap = Colormap::Viridis;
    ColorScaleType scale = ColorScaleType::Linear;

    struct View {
        QString tab = QStringLiteral("explore");  // explore, compare, metrics, model or image
        bool rawTokens = false;
        // The heat map's visible range in data coordinates (cell centres on integers, the whole
        // map spans -0.5 .. n - 0.5); none = the whole map.
        struct Zoom {
            double keyLower = 0, keyUpper = 0, queryLower = 0, queryUpper = 0;
        };
        std::optional<Zoom> zoom;
        QString compareTask;  // the Compare tab's task (reverse, sentiment); empty = the model's
        QString metricsView = QStringLiteral("rollout");  // rollout, flow or similarity
        QString pooling = QStringLiteral("max");          // max, mean or sum (long maps)
    } view;

    struct ModelView {  // the Model tab
        QString order;  // the order's metric (a headMetricList() key); empty = head number
        bool descending = true;
        bool frames = true;                          // framed by pattern class
        QString metric = QStringLiteral("entropy");  // the layer × head map's metric
    } modelView;

    struct ImageTab {  // the Image tab's overlay
        attnscope::OverlaySource source = attnscope::OverlaySource::Head;
        attnscope::HeadFusion fusion = attnscope::HeadFusion::Mean;  // rollout
        double discardRatio = 0.9;                                   // rollout, 0 .. 0.99
        int opacity = 60;                                            // percent
        Colormap colormap = Colormap::Magma;
        bool smooth = false;
        bool grid = false;
        bool patchesOnly = false;  // the row renormalised over the patches
        int query = 0;             // the token whose row is shown (0 = [CLS])
    } image;

    struct Views {                              // the Views dock
        QString tab = QStringLiteral("lines");  // lines, neuron or qk
        // The token selected in the views (shared by them and framed in the heat map).
        QString selectedSide = QStringLiteral("none");  // none, query (a row) or key (a column)
        int selectedIndex = -1;                         // the token; -1 with none
        struct Lines {
            std::vector<int> hiddenHeads;  // heads switched off; empty = every head
            double threshold = 0.0;        // lines below this weight are hidden, 0 .. 1
            int windowStart = 0;           // first query row of the token window (long inputs)
        } lines;
        int neuronQuery = -1;  // the neuron view's query token; -1 = the last one
        struct Qk {
            bool allHeads = false;
            QString coloring = QStringLiteral("position");  // position, kind, head or token_kind
        } qk;
    } views;

    // A generation (the Generate dock): its settings, and when one was made, its prompt, its ids
    // and the step shown; opening replays the ids (GenerateOptions::forced), so the maps and the
    // Output box are those of the saved generation.
    struct GenerationState {
        int tokens = 12;
        attnscope::SamplingOptions sampling;
        bool queryRowOnly = true;
        std::vector<std::int64_t> prompt;
        std::vector<std::int64_t> generated;  // empty = none made
        int step = 0;
    } generation;

    struct Causal {                                 // the Causal tab
        QString clean;                              // the clean input; empty = the main input
        QString corrupt;                            // the corrupt input for patching
        bool ids = false;                           // the two hold token ids
        std::optional<std::int64_t> answer, wrong;  // T and T2 (vocabulary ids); none = not chosen
        int position = -1;                          // P; -1 = the last
        QString what = QStringLiteral("heads");     // heads, resid, attn_out or mlp_out
        bool attribution = false;                   // attribution patching instead of exact
    } causal;

    struct LongContext {                             // the Long context tab's settings (its results are not kept)
        QString haystack, needle, question, answer;  // text, or token ids when ids
        bool ids = false;
        QString lengths = QStringLiteral("256,512,1024");  // as typed: checked when a scan starts
        QString depths = QStringLiteral("0,0.25,0.5,0.75,1");
        int scanTokens = 16;
        QString policy = QStringLiteral("h2o");  // h2o, snapkv or streaming
        int budget = 64;
        int recent = -1;  // -1: ⌊B/2⌋
        int window = 32;
        int kernel = 5;
        int sinks = 4;
        int evictTokens = 16;
    } longContext;

    struct FigureSettings {  // the export dialog's width and PNG resolution
        double widthIn = 3.25;
        int dpi = 300;
    } figure;

    struct Window {  // QMainWindow::saveGeometry / saveState, as given (empty = keep)
        QByteArray geometry;
        QByteArray state;
    } window;
};

// Parses the bytes of a workspace file; `name` (the file) starts every message. Relative paths
// are resolved against `folder` (the file's folder; empty = as written).
Workspace parseWorkspace(const QByteArray& bytes, const QString& name, const QString& folder = QString());
// Reads and parses a file (attnscope::Error when it cannot be read).
Workspace readWorkspace(const QString& path);
// The JSON text of a workspace (indented, fields in a fixed order, so files diff well).
QByteArray workspaceJson(const Workspace& workspace);
// Writes the file whole or not at all (attnscope::AtomicFile); errors name the file.
void writeWorkspace(const Workspace& workspace, const QString& path);

// Names used in the file (and by the CLI's messages).
QString labVariantKey(attnscope::LabVariant variant);  // native, dot, linear, additive, hybrid
QString featureMapKey(attnscope::FeatureMap map);      // elu, relu, favor
