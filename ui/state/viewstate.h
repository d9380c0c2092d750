// ViewState: what the window shows, in one plain object (napari's Viewer model, ParaView's
// proxies): the model, the input, the shown block/layer/head, the token selection, the
// temperature (display and inside the model), the lab's variant, the masked heads, the map
// source (attnscope::MapSource) and its gradient target, the colours, the zoom and the tabs' own settings. No widgets:
// views and panels read it and request changes through its setters; each setter that changes something emits one
// signal.
//
// Dependent parts are revalidated here, in one place:
//   - setModel() with another model: the blocks (shapes come with the model's first trace), the
//     selection (block -1, layer 0, head 0), the token selection, the masks, the inside-model
//     layers, the zoom, the gradient target (another vocabulary) and what is known of the
//     sources it cannot show are reset; the input, the source, the colours and the tabs'
//     settings are kept.
//   - setUnavailableSources() (the model's, once known): a source among them goes back to the
//     weights. setMapSource() refuses an unavailable source; leaving the gradient sources resets
//     the target (the model's choice).
//   - setInput() with another input: the token selection and the zoom are reset (token indices
//     mean other tokens).
//   - setBlocks(): the block is kept by name when the new trace has it (else the first), layer
//     and head are clamped into its shape, masks outside it are dropped.
// workspace() / applyWorkspace() are its serialisation (figure/workspace.h, .attnscope files):
// the window saves workspace() as it is (with its geometry), reading no widget.
#pragma once

#include "figure/workspace.h"

#include "attnscope/analysis/map_source.h"

#include <QObject>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

class ViewState : public QObject {
    Q_OBJECT
public:
    explicit ViewState(QObject* parent = nullptr);

    // One block of the shown trace: its name and shape (layers × heads).
    struct BlockShape {
        QString name;
        int layers = 0;
        int heads = 0;
        bool operator==(const BlockShape& o) const { return name == o.name && layers == o.layers && heads == o.heads; }
    };
    // The token selected in the views: side 0 = a query row, 1 = a key column, -1 = none.
    struct TokenSelection {
        int side = -1;
        int index = -1;
        bool operator==(const TokenSelection& o) const { return side == o.side && index == o.index; }
    };
    using Zoom = Workspace::View::Zoom;

    const QString& model() const { return model_; }
    const QString& device() const { return device_; }
    // Another spec resets what depends on the model (see the top); the same spec changes nothing.
    void setModel(const QString& spec);
    void setDevice(const QString& device);  // auto, cpu or cuda

    const Workspace::Input& input() const { return input_; }
    void setInput(const Workspace::Input& input);

    const std::vector<BlockShape>& blocks() const { return blocks_; }
    void setBlocks(std::vector<BlockShape> blocks);
    int block() const { return block_; }  // index into blocks(); -1 while there are none
    QString blockName() const;            // "" while there are none
    int layer() const { return layer_; }
    int head() const { return head_; }
    // Clamped into the shape of the block (when blocks are known); an unknown block name keeps the
    // block, and a name given before the blocks are known is taken when they are.
    void select(int block, int layer, int head);
    void selectByName(const QString& block, int layer, int head);
    void setLayer(int layer) { select(block_, layer, head_); }
    void setHead(int head) { select(block_, layer_, head); }
    void setBlock(int block) { select(block, layer_, head_); }
    // The arrow keys: layer += dLayer, head += dHead, clamped.
    void moveSelection(int dLayer, int dHead) { select(block_, layer_ + dLayer, head_ + dHead); }

    const TokenSelection& tokenSelection() const { return token_; }
    void setTokenSelection(TokenSelection selection);

    double temperature() const { return temperature_; }  // the slider's T, 0.1..10
    void setTemperature(double t);
    const Workspace::InsideModel& inside() const { return inside_; }
    void setInside(const Workspace::InsideModel& inside);
    // The temperature maps are drawn at: 1 while T is inside the model.
    double displayTemperature() const { return inside_.enabled ? 1.0 : temperature_; }

    attnscope::LabVariant variant() const { return variant_; }
    void setVariant(attnscope::LabVariant variant);
    const std::vector<attnscope::HeadRef>& masks() const { return masks_; }
    void setMasks(std::vector<attnscope::HeadRef> masks);
    bool isMasked(const QString& block, int layer, int head) const;
    void toggleMask(const QString& block, int layer, int head);

    // What the maps show (the Show selector); false when the source is unavailable (refused).
    attnscope::MapSource mapSource() const { return source_; }
    bool setMapSource(attnscope::MapSource source);
    // The gradient sources' target: a token id or class index; none = the model's choice.
    const std::optional<std::int64_t>& gradientTarget() const { return target_; }
    void setGradientTarget(std::optional<std::int64_t> target);
    // Per source (kMapSources order) why the model cannot show it; empty = it can (or not known).
    void setUnavailableSources(std::vector<QString> reasons);
    QString unavailableReason(attnscope::MapSource source) const;

    Colormap colormap() const { return colormap_; }
    ColorScaleType scale() const { return scale_; }
    void setColormap(Colormap map);
    void setScale(ColorScaleType scale);

    const std::optional<Zoom>& zoom() const { return zoom_; }  // none = the whole map
    void setZoom(std::optional<Zoom> zoom);

    // The central tabs' settings (current tab, raw labels, pooling, Compare's task, the Metrics
    // view), as the file has them; its zoom is zoom()'s.
    const Workspace::View& view() const { return view_; }
    void setView(const Workspace::View& view);
    void setTab(const QString& tab);
    // The other tabs' and docks' own settings, as the file has them. lab.variant is variant()'s
    // and views.selectedSide/selectedIndex are tokenSelection()'s.
    struct TabSettings {
        Workspace::Lab lab;
        Workspace::ModelView modelView;
        Workspace::ImageTab image;
        Workspace::Views views;
        Workspace::GenerationState generation;
        Workspace::FigureSettings figure;
        Workspace::Causal causal;            // the Causal tab's inputs, tokens, position and patching
        Workspace::LongContext longContext;  // the Long context tab's scan and what-if settings
    };
    const TabSettings& tabSettings() const { return tabSettings_; }
    // Emits tabSettingsChanged when any of them changed (compared as the file writes them).
    void setTabSettings(const TabSettings& settings);
    // One section, the others kept: e.g. setTabSetting(&TabSettings::modelView, m).
    template <class T>
    void setTabSetting(T TabSettings::*section, const T& value) {
        TabSettings t = tabSettings_;
        t.*section = value;
        setTabSettings(t);
    }
    static bool sameTabSettings(const TabSettings& a, const TabSettings& b);

    // The whole state as a workspace, and back (the window's geometry is not the state's).
    // applyWorkspace sets every part (model first, so its resets do not undo the rest) and
    // emits each part's signal once.
    Workspace workspace() const;
    void applyWorkspace(const Workspace& ws);

signals:
    void modelChanged();
    void deviceChanged();
    void inputChanged();
    void blocksChanged();
    void selectionChanged();  // block, layer or head
    void tokenSelectionChanged();
    void temperatureChanged();
    void insideChanged();
    void variantChanged();
    void masksChanged();
    void mapSourceChanged();  // the source or its gradient target
    void unavailableSourcesChanged();
    void colorsChanged();
    void zoomChanged();
    void viewChanged();
    void tabSettingsChanged();

private:
    QString model_;
    QString device_ = QStringLiteral("auto");
    Workspace::Input input_;
    std::vector<BlockShape> blocks_;
    int block_ = -1, layer_ = 0, head_ = 0;
    QString wantedBlock_;  // a block asked for by name before the blocks were known
    TokenSelection token_;
    double temperature_ = 1.0;
    Workspace::InsideModel inside_;
    attnscope::LabVariant variant_ = attnscope::LabVariant::Native;
    std::vector<attnscope::HeadRef> masks_;
    attnscope::MapSource source_ = attnscope::MapSource::Weights;
    std::optional<std::int64_t> target_;
    std::vector<QString> unavailable_;
    Colormap colormap_ = Colormap::Viridis;
    ColorScaleType scale_ = ColorScaleType::Linear;
    std::optional<Zoom> zoom_;
    Workspace::View view_;
    TabSettings tabSettings_;
};
