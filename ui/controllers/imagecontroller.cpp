#include "controllers/imagecontroller.h"

#include "figure/overlayfigure.h"
#include "panels/imageoverlaypanel.h"
#include "services/session.h"
#include "state/recentfiles.h"
#include "views/imageoverlay.h"
#include "panels/labpanel.h"
#include "controllers/labcontroller.h"
#include "state/viewstate.h"
#include "controllers/sectionsync.h"
#include "attnscope/attention/image_text.h"
#include "controllers/viewscontroller.h"

#include "attnscope/io/input.h"
#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QSignalBlocker>
#include <QSlider>
#include <QTabWidget>

#include <algorithm>
#include <cmath>

namespace {

QImage toQImage(const attnscope::RgbImage& rgb) {
    QImage image(rgb.width, rgb.height, QImage::Format_RGB888);
    for (int y = 0; y < rgb.height; ++y)
        std::copy_n(rgb.pixels.data() + std::size_t(y) * rgb.width * 3, std::size_t(rgb.width) * 3, image.scanLine(y));
    return image;
}

}  // namespace

ImageController::ImageController(ViewState* state, Session* session, LabController* lab, QWidget* dialogParent,
                                 std::function<void(const QString&, const QString&)> onError)
    : QObject(dialogParent), state_(state), session_(session), lab_(lab), dialogParent_(dialogParent),
      onError_(std::move(onError)) {
    panel_ = new ImageOverlayPanel;
    panel_->setObjectName(QStringLiteral("imageOverlayPanel"));
    service_ = new OverlayService(this);
    // Its settings are the state's (the workspace file's "image").
    const auto sync = syncSection<Workspace::ImageTab>(
            state_, panel_, this, &ViewState::TabSettings::image,
            [this] {
                const State i = this->state();
                return Workspace::ImageTab{i.source, i.fusion, i.discardRatio, i.opacity, i.colormap,
                                           i.smooth, i.grid,   i.patchesOnly,  i.query};
            },
            [this](const Workspace::ImageTab& t) {
                setState({t.source, t.fusion, t.discardRatio, t.opacity, t.colormap, t.smooth, t.grid, t.patchesOnly,
                          t.query});
            });
    connect(service_, &OverlayService::overlayReady, this, &ImageController::onOverlay);
    // What setState and a clicked patch change without an input's signal: written once the
    // overlay they ask for arrives.
    connect(service_, &OverlayService::overlayReady, this, sync);
    connect(panel_, &ImageOverlayPanel::overlayWanted, this, &ImageController::refresh);
    connect(panel_, &ImageOverlayPanel::exportRequested, this, &ImageController::chooseExportFile);
    // Selection linking: a clicked patch's row is the shared token selection, framed in the heat
    // map and picked in the line, neuron and query-key views.
    connect(panel_->view(), &ImageOverlayView::patchClicked, this, [this](int patch) {
        const auto& pos = panel_->overlay().grid.positions;
        if (patch < 0 || std::size_t(patch) >= pos.size()) return;
        state_->setTokenSelection({0, pos[std::size_t(patch)]});
    });

    connect(session, &Session::modelLoaded, this, [this] {
        panel_->setQuery(0);
        image_ = {};
        shown_ = {};
        service_->cancel();
        refresh();
    });
    connect(session, &Session::traceReady, this, [this] {
        if (const auto image = session_->lastImage();
            image && session_->model() && session_->model()->info().imageInput)
            image_ = toQImage(*image);
        refresh();  // the window asked for the new trace's maps before this image was known here
    });
    // What the overlay shows: the state's selection, temperature and tab, the lab's maps.
    for (auto signal : {&ViewState::selectionChanged, &ViewState::temperatureChanged, &ViewState::insideChanged,
                        &ViewState::viewChanged, &ViewState::variantChanged})
        connect(state_, signal, this, &ImageController::refresh);
    connect(lab_, &LabController::mapsStale, this, &ImageController::refresh);
    connect(lab_->panel(), &LabPanel::variantChanged, this, &ImageController::refresh);
}

ImageController::State ImageController::state() const {
    State st;
    st.source = panel_->source();
    st.fusion = panel_->fusion();
    st.discardRatio = panel_->discardRatio();
    st.opacity = panel_->opacitySlider()->value();
    st.colormap = Colormap(panel_->colormapCombo()->currentIndex());
    st.smooth = panel_->smoothCheck()->isChecked();
    st.grid = panel_->gridCheck()->isChecked();
    st.patchesOnly = panel_->patchesOnlyCheck()->isChecked();
    st.query = panel_->query();
    return st;
}

void ImageController::setState(const State& st) {
    {
        // One request at the end rather than one per setting.
        const QSignalBlocker block(panel_);
        const auto pick = [](QComboBox* c, int data) {
            if (const int i = c->findData(data); i >= 0) c->setCurrentIndex(i);
        };
        pick(panel_->sourceCombo(), int(st.source));
        pick(panel_->fusionCombo(), int(st.fusion));
        panel_->discardSpin()->setValue(st.discardRatio);
        panel_->opacitySlider()->setValue(st.opacity);
        panel_->colormapCombo()->setCurrentIndex(std::clamp(int(st.colormap), 0, panel_->colormapCombo()->count() - 1));
        panel_->smoothCheck()->setChecked(st.smooth);
        panel_->gridCheck()->setChecked(st.grid);
        panel_->patchesOnlyCheck()->setChecked(st.patchesOnly);
        panel_->setQuery(std::max(0, st.query));
    }
    refresh();
}

bool ImageController::shownNow() const { return state_->view().tab == QLatin1String("image"); }

void ImageController::refresh() {
    if (!shownNow()) return;
    const auto model = session_->model();
    if (!model || !model->info().imageInput) {
        service_->cancel();
        panel_->showMessage(
                tr("This model reads tokens, not images. Attention over the image needs an image model: open a "
                   "ViT folder (config.json with model_type vit) and an image (Ctrl+I)."));
        return;
    }
    panel_->setSimilarityAvailable(model->info().imageText);
    const TracePtr trace = overlayTrace();
    const MapKey key = MapKey{state_->block(), state_->layer(), state_->head()};
    if (!trace || key.block < 0 || image_.isNull()) {
        panel_->showMessage(tr("Open an image (Ctrl+I, or drop one on the window) to run %1 on it.")
                                    .arg(QFileInfo(session_->modelSpec()).fileName()));
        return;
    }
    attnscope::OverlayOptions o;
    o.source = panel_->source();
    o.layer = key.layer;
    o.head = key.head;
    o.query = panel_->query();
    // The lab's variant (dot, linear) where the Trace draws it; the additive ones need a fit per
    // head, so the overlay keeps the model's own maps for them and its caption says so.
    const VariantSpec spec = lab_->variantSpec(key);
    o.map = spec.map;
    o.map.variant = traceVariant(spec.variant).value_or(attnscope::MapVariant::Native);
    o.map.temperature = lab_->displayTemperature(state_->temperature());
    o.rollout.discardRatio = panel_->discardRatio();
    o.rollout.fusion = panel_->fusion();
    o.patchesOnly = panel_->patchesOnlyCheck()->isChecked();
    if (attnscope::gradientSource(source_.source) && !source_.gradients) {
        service_->cancel();
        return panel_->showMessage(tr("Computing %1 (a backward pass through the model)\u2026")
                                           .arg(QString::fromUtf8(attnscope::sourceLabel(source_.source))));
    }
    service_->requestOverlay(trace, key.block, o, source_);
}

void ImageController::setSource(const ShownSource& source) {
    source_ = source;
    refresh();
}

TracePtr ImageController::overlayTrace() const {
    return attnscope::gradientSource(source_.source) ? session_->trace() : lab_->shownTrace();
}

QString ImageController::describe(const OverlayResult& r) const {
    const auto& o = r.options;
    if (r.overlay.signedValues && r.trace) {
        const attnscope::ImageTextScore& s = attnscope::traceImageText(*r.trace);
        return tr("contribution to the image–text logit · %1 layer %2, its %3 heads summed")
                .arg(QString::fromStdString(s.block))
                .arg(s.layer)
                .arg(s.heads);
    }
    QString row = QStringLiteral("[CLS]");
    const auto& pos = r.overlay.grid.positions;
    if (const auto it = std::find(pos.begin(), pos.end(), o.query); it != pos.end())
        row = QStringLiteral("r%1c%2")
                      .arg(int(it - pos.begin()) / r.overlay.grid.cols)
                      .arg(int(it - pos.begin()) % r.overlay.grid.cols);
    else if (const TracePtr t = overlayTrace(); t && o.query >= 0 && o.query < int(t->tokens().size()))
        row = QString::fromStdString(t->tokens()[std::size_t(o.query)]);  // [CLS], DeiT's [DIST], a register
    else if (o.query != 0)
        row = tr("token %1").arg(o.query);
    QString what;
    if (!r.source.weights()) {  // a map source's row: the overlay's own source does not apply
        what = QString::fromUtf8(attnscope::sourceLabel(r.source.source)) +
               (attnscope::perHeadSource(r.source.source) ? tr(" · layer %1 · head %2").arg(o.layer).arg(o.head)
                                                          : tr(" · layer %1").arg(o.layer));
        return tr("%1 row · %2").arg(row, what);
    }
    switch (o.source) {
        case attnscope::OverlaySource::Head: what = tr("layer %1 · head %2").arg(o.layer).arg(o.head); break;
        case attnscope::OverlaySource::LayerMean: what = tr("layer %1 · mean of the heads").arg(o.layer); break;
        case attnscope::OverlaySource::Similarity:  // described above when it has its values
            what = QString::fromUtf8(attnscope::overlaySourceName(o.source));
            break;
        case attnscope::OverlaySource::Rollout:
            what = tr("rollout of layers 0–%1 · %2 fusion · discard %3")
                           .arg(o.layer)
                           .arg(QString::fromLatin1(attnscope::fusionName(o.rollout.fusion)))
                           .arg(o.rollout.discardRatio, 0, 'g', 3);
            break;
    }
    QString text = tr("%1 row · %2").arg(row, what);
    if (o.patchesOnly) text += tr(" · renormalised over the patches");
    const LabVariant lab = lab_->variantSpec(MapKey{state_->block(), state_->layer(), state_->head()}).variant;
    if (o.map.variant != attnscope::MapVariant::Native)
        text += tr(" · lab: %1").arg(labVariantName(lab));
    else if (!traceVariant(lab))
        text += tr(" · model's own maps (the lab's %1 variant needs a fit per head)").arg(labVariantName(lab));
    if (std::abs(o.map.temperature - 1.0) > 1e-9) text += QStringLiteral(" · T = %1").arg(o.map.temperature, 0, 'g', 3);
    return text;
}

void ImageController::onOverlay(const OverlayResult& r) {
    if (r.trace != overlayTrace() || r.source != source_) return;  // an older run's, or another source's
    if (!r.error.isEmpty()) {
        shown_ = {};
        panel_->showMessage(r.error);
        return;
    }
    shown_ = r;
    panel_->setTokenLabels(r.trace ? r.trace->tokens() : std::vector<std::string>{});
    panel_->showOverlay(r.overlay, image_, describe(r) + QLatin1Char('\n') + details(r));
}

// The caption's second line: what the numbers add up to.
QString ImageController::details(const OverlayResult& r) const {
    if (r.overlay.signedValues && r.trace) {  // CLIP, SigLIP: the patches' share of the logit, and the rest
        const attnscope::ImageTextScore& s = attnscope::traceImageText(*r.trace);
        return tr("cosine %1 · logit %2 = patches %3 + remainder %4 (earlier layers, MLPs, biases) · red adds to "
                  "the match, blue takes away")
                .arg(s.cosine, 0, 'g', 3)
                .arg(s.logit, 0, 'g', 4)
                .arg(s.logit - r.overlay.otherWeight, 0, 'g', 4)
                .arg(r.overlay.otherWeight, 0, 'g', 4);
    }
    // Swin: windows instead of a [CLS]; a row whose window holds padding sums to less than 1.
    const QString rest =
            r.overlay.windows.empty()
                    ? tr("weight on the other tokens ([CLS]) %1").arg(r.overlay.otherWeight, 0, 'g', 3)
                    : tr("windows outlined, the row's window in red · weight on window padding %1 (left out)")
                              .arg(r.overlay.paddingWeight, 0, 'g', 3);
    return tr("largest patch weight %1 · %2 · click a patch to show its row")
            .arg(r.overlay.maxPatch, 0, 'g', 3)
            .arg(rest);
}

OverlayFigure ImageController::figure() const {
    OverlayFigure f;
    f.picture = panel_->picture();
    const QString spec = session_->modelSpec();
    f.title = QFileInfo(spec).fileName() + QStringLiteral("\n") + (shown_.trace ? describe(shown_) : QString());
    f.colorbarLabel = !shown_.source.weights()      ? QString::fromUtf8(attnscope::sourceLabel(shown_.source.source))
                      : shown_.overlay.signedValues ? tr("contribution to the logit")
                      : shown_.options.source == attnscope::OverlaySource::Rollout ? tr("rollout weight")
                                                                                   : tr("attention weight");
    return f;
}

bool ImageController::exportFigure(const QString& path) {
    try {
        if (!shown_.trace) throw attnscope::Error("there is no overlay to export yet");
        writeOverlayFigure(figure(), path);
        recent::rememberFolder(QStringLiteral("export"), path);
        emit status(tr("Wrote %1.").arg(QFileInfo(path).fileName()), 5000);
        return true;
    } catch (const std::exception& e) {
        onError_(tr("The figure could not be written."), QString::fromUtf8(e.what()));
        return false;
    }
}

void ImageController::chooseExportFile() {
    auto* dialog = new QFileDialog(dialogParent_, tr("Export Attention over the Image"));
    dialog->setObjectName(QStringLiteral("overlayExportDialog"));
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setNameFilters({tr("PDF (*.pdf)"), tr("SVG (*.svg)"), tr("PNG (*.png)")});
    dialog->setDefaultSuffix(QStringLiteral("pdf"));
    dialog->setDirectory(recent::exportFolder());
    dialog->selectFile(QFileInfo(session_->modelSpec()).fileName() + QStringLiteral("-image.pdf"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) { exportFigure(path); });
    dialog->open();
}
