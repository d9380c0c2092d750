#include "state/viewstate.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <QStringList>

namespace {

bool sameHead(const attnscope::HeadRef& h, const QString& block, int layer, int head) {
    return h.layer == layer && h.head == head && QString::fromStdString(h.block) == block;
}

bool sameInput(const Workspace::Input& a, const Workspace::Input& b) {
    return a.text == b.text && a.idsMode == b.idsMode && a.target == b.target && a.image == b.image;
}

bool sameZoom(const std::optional<ViewState::Zoom>& a, const std::optional<ViewState::Zoom>& b) {
    if (!a || !b) return !a && !b;
    return a->keyLower == b->keyLower && a->keyUpper == b->keyUpper && a->queryLower == b->queryLower &&
           a->queryUpper == b->queryUpper;
}

// The Views section's selection is the token selection's (one truth, two names in the file).
void putSelection(Workspace::Views& views, const ViewState::TokenSelection& t) {
    views.selectedSide = t.side == 0   ? QStringLiteral("query")
                         : t.side == 1 ? QStringLiteral("key")
                                       : QStringLiteral("none");
    views.selectedIndex = t.side >= 0 ? t.index : -1;
}

bool sameMasks(const std::vector<attnscope::HeadRef>& a, const std::vector<attnscope::HeadRef>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
        return x.block == y.block && x.layer == y.layer && x.head == y.head;
    });
}

}  // namespace

ViewState::ViewState(QObject* parent) : QObject(parent) {}

void ViewState::setModel(const QString& spec) {
    if (spec == model_) return;
    model_ = spec;
    // What belonged to the old model: its blocks and selection, token indices, masked heads, the
    // layers T went into, the zoom.
    const bool hadBlocks = !blocks_.empty() || block_ != -1 || layer_ != 0 || head_ != 0;
    blocks_.clear();
    wantedBlock_.clear();
    block_ = -1;
    layer_ = 0;
    head_ = 0;
    const bool hadToken = token_.side >= 0;
    token_ = {};
    putSelection(tabSettings_.views, token_);
    const bool hadMasks = !masks_.empty();
    masks_.clear();
    const bool hadLayers = !inside_.layers.empty();
    inside_.layers.clear();
    const bool hadFit = tabSettings_.lab.fit.has_value();
    tabSettings_.lab.fit.reset();  // a fit is of one model's head
    const bool hadZoom = zoom_.has_value();
    zoom_.reset();
    const bool hadTarget = target_.has_value();
    target_.reset();  // a token id or class of the old model
    const bool hadUnavailable = !unavailable_.empty();
    unavailable_.clear();  // the new model's are set once it has loaded
    emit modelChanged();
    if (hadBlocks) {
        emit blocksChanged();
        emit selectionChanged();
    }
    if (hadToken) emit tokenSelectionChanged();
    if (hadMasks) emit masksChanged();
    if (hadLayers) emit insideChanged();
    if (hadZoom) emit zoomChanged();
    if (hadTarget) emit mapSourceChanged();
    if (hadUnavailable) emit unavailableSourcesChanged();
    if (hadFit) emit tabSettingsChanged();
}

void ViewState::setDevice(const QString& device) {
    if (device == device_) return;
    device_ = device;
    emit deviceChanged();
}

void ViewState::setInput(const Workspace::Input& input) {
    if (sameInput(input, input_)) return;
    input_ = input;
    emit inputChanged();
    setTokenSelection({});
    setZoom(std::nullopt);
}

void ViewState::setBlocks(std::vector<BlockShape> blocks) {
    if (blocks == blocks_) return;
    const QString name = wantedBlock_.isEmpty() ? blockName() : wantedBlock_;
    wantedBlock_.clear();
    blocks_ = std::move(blocks);
    emit blocksChanged();
    int b = -1;
    for (int i = 0; i < int(blocks_.size()); ++i)
        if (blocks_[std::size_t(i)].name == name) b = i;
    // Masks of heads this trace does not have go (another model's shape with the same name).
    std::vector<attnscope::HeadRef> kept;
    for (const auto& m : masks_)
        for (const auto& s : blocks_)
            if (s.name == QString::fromStdString(m.block) && m.layer < s.layers && m.head < s.heads) {
                kept.push_back(m);
                break;
            }
    if (kept.size() != masks_.size()) setMasks(std::move(kept));
    const int before = block_;
    if (b >= 0) {
        block_ = b;  // the same block, perhaps at another index: its token selection stays
    } else {
        if (block_ >= 0) setTokenSelection({});
        block_ = -1;
        // Encoder-decoders start on cross-attention, the map that aligns source and target.
        for (int i = 0; i < int(blocks_.size()) && before < 0; ++i)
            if (blocks_[std::size_t(i)].name == QLatin1String("cross")) b = i;
        if (b < 0) b = blocks_.empty() ? -1 : std::clamp(before, 0, int(blocks_.size()) - 1);
    }
    const int layer = layer_, head = head_;
    select(b, layer, head);
    if (block_ == b && layer_ == layer && head_ == head && before != block_) emit selectionChanged();
}

QString ViewState::blockName() const {
    return block_ >= 0 && block_ < int(blocks_.size()) ? blocks_[std::size_t(block_)].name : QString();
}

void ViewState::select(int block, int layer, int head) {
    if (!blocks_.empty()) {
        block = std::clamp(block, 0, int(blocks_.size()) - 1);
        const BlockShape& s = blocks_[std::size_t(block)];
        layer = std::clamp(layer, 0, std::max(0, s.layers - 1));
        head = std::clamp(head, 0, std::max(0, s.heads - 1));
    } else {
        block = -1;
        layer = std::max(0, layer);
        head = std::max(0, head);
    }
    if (block == block_ && layer == layer_ && head == head_) return;
    const bool otherBlock = block_ >= 0 && block != block_;
    block_ = block;
    layer_ = layer;
    head_ = head;
    if (otherBlock) setTokenSelection({});  // another block: other query and key tokens
    emit selectionChanged();
}

void ViewState::selectByName(const QString& block, int layer, int head) {
    if (blocks_.empty()) wantedBlock_ = block;  // taken when the blocks are known
    int b = block_;
    for (int i = 0; i < int(blocks_.size()); ++i)
        if (blocks_[std::size_t(i)].name == block) b = i;
    select(b, layer, head);
}

void ViewState::setTokenSelection(TokenSelection selection) {
    if (selection.side < 0 || selection.index < 0) selection = {};
    if (selection == token_) return;
    token_ = selection;
    putSelection(tabSettings_.views, token_);
    emit tokenSelectionChanged();
}

void ViewState::setTemperature(double t) {
    if (!std::isfinite(t)) return;
    t = std::clamp(t, 0.1, 10.0);
    if (t == temperature_) return;
    temperature_ = t;
    emit temperatureChanged();
}

void ViewState::setInside(const Workspace::InsideModel& inside) {
    if (inside.enabled == inside_.enabled && inside.layers == inside_.layers) return;
    inside_ = inside;
    emit insideChanged();
}

void ViewState::setVariant(attnscope::LabVariant variant) {
    if (variant == variant_) return;
    variant_ = variant;
    emit variantChanged();
}

void ViewState::setMasks(std::vector<attnscope::HeadRef> masks) {
    if (sameMasks(masks, masks_)) return;
    masks_ = std::move(masks);
    emit masksChanged();
}

bool ViewState::isMasked(const QString& block, int layer, int head) const {
    return std::any_of(masks_.begin(), masks_.end(), [&](const auto& h) { return sameHead(h, block, layer, head); });
}

void ViewState::toggleMask(const QString& block, int layer, int head) {
    std::vector<attnscope::HeadRef> masks = masks_;
    const auto it =
            std::find_if(masks.begin(), masks.end(), [&](const auto& h) { return sameHead(h, block, layer, head); });
    if (it != masks.end())
        masks.erase(it);
    else
        masks.push_back({block.toStdString(), layer, head});
    setMasks(std::move(masks));
}

bool ViewState::setMapSource(attnscope::MapSource source) {
    if (source == source_) return true;
    if (!unavailableReason(source).isEmpty()) return false;
    source_ = source;
    if (!attnscope::gradientSource(source)) target_.reset();
    emit mapSourceChanged();
    return true;
}

void ViewState::setGradientTarget(std::optional<std::int64_t> target) {
    if (target && *target < 0) target.reset();
    if (target == target_) return;
    target_ = target;
    emit mapSourceChanged();
}

void ViewState::setUnavailableSources(std::vector<QString> reasons) {
    if (reasons == unavailable_) return;
    unavailable_ = std::move(reasons);
    emit unavailableSourcesChanged();
    if (!unavailableReason(source_).isEmpty()) setMapSource(attnscope::MapSource::Weights);
}

QString ViewState::unavailableReason(attnscope::MapSource source) const {
    for (std::size_t i = 0; i < std::size(attnscope::kMapSources) && i < unavailable_.size(); ++i)
        if (attnscope::kMapSources[i] == source) return unavailable_[i];
    return {};
}

void ViewState::setColormap(Colormap map) {
    if (map == colormap_) return;
    colormap_ = map;
    emit colorsChanged();
}

void ViewState::setScale(ColorScaleType scale) {
    if (scale == scale_) return;
    scale_ = scale;
    emit colorsChanged();
}

void ViewState::setZoom(std::optional<Zoom> zoom) {
    if (sameZoom(zoom, zoom_)) return;
    zoom_ = zoom;
    emit zoomChanged();
}

void ViewState::setView(const Workspace::View& view) {
    if (view.tab == view_.tab && view.rawTokens == view_.rawTokens && view.compareTask == view_.compareTask &&
        view.metricsView == view_.metricsView && view.pooling == view_.pooling)
        return;
    const std::optional<Zoom> zoom = view_.zoom;
    view_ = view;
    view_.zoom = zoom;  // never read: zoom_ is the zoom
    emit viewChanged();
}

void ViewState::setTab(const QString& tab) {
    Workspace::View v = view_;
    v.tab = tab;
    setView(v);
}

bool ViewState::sameTabSettings(const TabSettings& a, const TabSettings& b) {
    const auto json = [](const TabSettings& t) {
        Workspace w;  // the other sections are the defaults in both
        w.lab = t.lab;
        w.modelView = t.modelView;
        w.image = t.image;
        w.views = t.views;
        w.views.selectedSide = QStringLiteral("none");  // the token selection's, compared there
        w.views.selectedIndex = -1;
        w.generation = t.generation;
        w.figure = t.figure;
        w.causal = t.causal;
        w.longContext = t.longContext;
        return workspaceJson(w);
    };
    return json(a) == json(b);
}

void ViewState::setTabSettings(const TabSettings& settings) {
    TabSettings s = settings;
    putSelection(s.views, token_);
    if (sameTabSettings(s, tabSettings_)) return;
    tabSettings_ = std::move(s);
    emit tabSettingsChanged();
}

Workspace ViewState::workspace() const {
    Workspace w;
    w.model = model_;
    w.device = device_;
    w.input = input_;
    w.selection.block = blocks_.empty() ? wantedBlock_ : blockName();
    w.selection.layer = layer_;
    w.selection.head = head_;
    w.temperature = temperature_;
    w.inside = inside_;
    w.lab = tabSettings_.lab;
    w.lab.variant = variant_;
    w.masked = masks_;
    w.source = {source_, target_};
    w.colormap = colormap_;
    w.scale = scale_;
    w.view = view_;
    w.view.zoom = zoom_;
    // Tabs the file has no name for (the Corpus tab, the Compare tab's reports) open on Explore.
    static const QStringList fileTabs = {
            QStringLiteral("explore"), QStringLiteral("compare"), QStringLiteral("metrics"), QStringLiteral("model"),
            QStringLiteral("image"),   QStringLiteral("causal"),  QStringLiteral("long")};
    if (!fileTabs.contains(w.view.tab)) w.view.tab = QStringLiteral("explore");
    w.modelView = tabSettings_.modelView;
    w.image = tabSettings_.image;
    w.views = tabSettings_.views;  // its selection is token_'s
    w.generation = tabSettings_.generation;
    w.figure = tabSettings_.figure;
    w.causal = tabSettings_.causal;
    w.longContext = tabSettings_.longContext;
    return w;
}

void ViewState::applyWorkspace(const Workspace& ws) {
    setModel(ws.model);  // first: its resets must not undo what follows
    setDevice(ws.device);
    setInput(ws.input);
    selectByName(ws.selection.block, ws.selection.layer, ws.selection.head);
    setTemperature(ws.temperature);
    setInside(ws.inside);
    setVariant(ws.lab.variant);
    setMasks(ws.masked);
    setMapSource(ws.source.source);  // refused when the model is known not to show it
    setGradientTarget(attnscope::gradientSource(source_) ? ws.source.target : std::nullopt);
    setColormap(ws.colormap);
    setScale(ws.scale);
    setView(ws.view);
    setTokenSelection({ws.views.selectedSide == QLatin1String("query") ? 0
                       : ws.views.selectedSide == QLatin1String("key") ? 1
                                                                       : -1,
                       ws.views.selectedIndex});
    setTabSettings({ws.lab, ws.modelView, ws.image, ws.views, ws.generation, ws.figure, ws.causal, ws.longContext});
    setZoom(ws.view.zoom);
}
