// The Show selector (issue 31's GUI): choosing a map source makes the heat map, the overview and
// the line view show core's maps of that source (attnscope::sourceMap, GradientMaps::map), the
// head selector says when a source is per layer, sources a model cannot show are disabled with
// the reason, the source survives a workspace round trip and a model change revalidates it, and
// signed maps are drawn in a diverging colour map centred at 0.
//
#include "views_fixture.h"
#include "source_fixture.h"

#include "family_fixtures.h"
#include "fixtures_seq2seq.h"
#include "gpt2_fixture.h"
#include "png_write.h"

#include "controllers/imagecontroller.h"
#include "controllers/sourcecontroller.h"
#include "figure/headfigure.h"
#include "figure/sourceview.h"
#include "figure/workspace.h"
#include "panels/imageoverlaypanel.h"
#include "panels/sourcepicker.h"
#include "services/overlayservice.h"
#include "views/imageoverlay.h"
#include "state/viewstate.h"

#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/lab/lab_views.h"
#include "attnscope/models/model.h"

#include <QProgressBar>
#include <QStandardItemModel>

#include <algorithm>
#include <limits>

namespace test_map_sources {

using namespace uitest;
using attnscope::MapSource;
using attnscope::testing::freshDir;
namespace fs = std::filesystem;

namespace {

SourcePicker* pickerOf(WindowFixture& w) { return w.controls->sourcePicker(); }

// The overview's tile of one map as MapService draws it: core's pooled map, coloured over the
// range of every tile of the block (figure/sourceview.h).
std::vector<PooledMap> sourceTiles(const std::function<attnscope::HeadMap(int, int)>& mapOf, int layers, int heads) {
    attnscope::PoolRequest request;
    request.outRows = request.outCols = 48;
    std::vector<PooledMap> tiles;
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) {
            const attnscope::HeadMap m = attnscope::poolHeadMap(mapOf(l, h), request);
            tiles.push_back({m.cols, m.rows, std::vector<double>(m.values.begin(), m.values.end())});
        }
    return tiles;
}

bool overviewShows(const OverviewGrid& overview, const std::vector<PooledMap>& tiles, MapSource source,
                   const ControlPanel* controls) {
    std::vector<float> all;
    for (const auto& t : tiles) all.insert(all.end(), t.values.begin(), t.values.end());
    const SourceColors c = sourceColors(source, controls->colormap(), controls->colorScale().type, all);
    if (overview.images().size() != tiles.size()) return false;
    for (std::size_t i = 0; i < tiles.size(); ++i)
        if (!sameImage(overview.images()[i], pooledImage(tiles[i], c.colormap, c.scale))) return false;
    return true;
}

// The line view draws exactly these maps (one per head, or the layer's one).
bool linesShow(const LineView& view, const std::vector<attnscope::HeadMap>& maps) {
    const LineFigure f = view.figure();
    if (f.heads.size() != maps.size()) return false;
    for (std::size_t h = 0; h < maps.size(); ++h)
        if (f.heads[h].map.values != maps[h].values) return false;
    return true;
}

std::pair<float, float> rangeOf(const attnscope::HeadMap& m) {
    const auto [lo, hi] = std::minmax_element(m.values.begin(), m.values.end());
    return {*lo, *hi};
}

// Every Trace-based source on one window: heat map, overview, lines, colour bar, title.
void checkTraceSource(ViewsFixture& w, MapSource source) {
    INFO(attnscope::sourceName(source));
    w.openStandIn();
    w.show(w.views->lines(), &ViewsController::linesShown);
    choose(w, source);
    const auto trace = waitForValues(w);
    const auto& info = trace->blocks()[0];
    const bool perHead = attnscope::perHeadSource(source);
    w.layer->setValue(1);
    w.head->setValue(perHead ? 2 : 0);
    const attnscope::HeadMap expected = attnscope::sourceMap(*trace, source, 0, 1, perHead ? 2 : 0);
    w.waitForMap(expected);
    CHECK(w.heatmap->title().contains(QString::fromUtf8(attnscope::sourceLabel(source))));
    CHECK_FALSE(w.slider->isEnabled());  // the display temperature does not apply to a source
    CHECK(w.heatmap->title().contains(QStringLiteral("head")) == perHead);
    // Raw norms: the colour bar spans the map's own range; probability-like ones keep 0..1.
    const auto [lo, hi] = rangeOf(expected);
    if (attnscope::unitRangeSource(source)) {
        CHECK(w.heatmap->colorScale().lo == 0.0);
        CHECK(w.heatmap->colorScale().hi == 1.0);
    } else {
        CHECK(w.heatmap->colorScale().lo == Approx(lo));
        CHECK(w.heatmap->colorScale().hi == Approx(hi));
    }
    // The overview: every tile core's map of that layer (and head).
    const auto tiles =
            sourceTiles([&](int l, int h) { return attnscope::sourceMap(*trace, source, 0, l, perHead ? h : 0); },
                        info.layers, info.heads);
    CHECK(QTest::qWaitFor([&] { return overviewShows(*w.overview, tiles, source, w.controls); }, 20000));
    // The line view: the layer's maps of the source.
    std::vector<attnscope::HeadMap> maps;
    for (int h = 0; h < (perHead ? info.heads : 1); ++h) maps.push_back(attnscope::sourceMap(*trace, source, 0, 1, h));
    CHECK(QTest::qWaitFor([&] { return linesShow(*w.views->lines(), maps); }, 20000));
    CHECK(w.views->lines()->figure().title.contains(QString::fromUtf8(attnscope::sourceLabel(source))));
    // The export names the source and keeps the screen's colours.
    const Figure f = w.window.currentFigure();
    CHECK((f.panels.front().title + f.title).contains(QString::fromUtf8(attnscope::sourceLabel(source))));
    CHECK(f.scale.hi == w.heatmap->colorScale().hi);
    CHECK(f.colorbarLabel == sourceValueName(source));
}

}  // namespace

TEST_CASE_METHOD(ViewsFixture, "Show: value-weighted makes the heat map, overview and lines show core's value-norm",
                 "[ui][sources]") {
    checkTraceSource(*this, MapSource::ValueNorm);
    {  // no tab note: Explore shows the source, and so does Compare (test_map_sources_tabs.cpp)
        auto* note = window.findChild<QLabel*>(QStringLiteral("sourceTabNote"));
        REQUIRE(note);
        CHECK_FALSE(note->isVisible());
        window.tabs()->setCurrentWidget(window.compare());
        CHECK_FALSE(note->isVisible());
        window.showExplore();
    }
    {  // back to the weights: the maps and the colours are the weights' again
        choose(*this, MapSource::Weights);
        waitForMap(session->trace()->map(0, 1, 2));
        CHECK(heatmap->colorScale().hi == 1.0);
        CHECK_FALSE(heatmap->title().contains(QStringLiteral("Value")));
        CHECK(head->isEnabled());
        CHECK(slider->isEnabled());
    }
}

TEST_CASE_METHOD(ViewsFixture, "Show: value-weighted (layer) is one map per layer: the head does not apply",
                 "[ui][sources]") {
    checkTraceSource(*this, MapSource::ValueNormLayer);
    CHECK_FALSE(head->isEnabled());
    CHECK(head->toolTip().contains(QStringLiteral("one map per layer")));
    CHECK(pickerOf(*this)->note()->text().contains(QStringLiteral("per layer")));
}

TEST_CASE_METHOD(ViewsFixture, "Show: ALTI and ALTI rollout follow core's maps", "[ui][sources]") {
    checkTraceSource(*this, MapSource::Alti);
    choose(*this, MapSource::AltiRollout);
    waitForMap(attnscope::sourceMap(*session->trace(), MapSource::AltiRollout, 0, 1, 0));
}

TEST_CASE_METHOD(ViewsFixture, "Show: gradient × attention and relevance, for the model's choice and a picked target",
                 "[ui][sources]") {
    openStandIn();
    show(views->lines(), &ViewsController::linesShown);
    choose(*this, MapSource::GradWeighted);
    CHECK(pickerOf(*this)->targetCombo()->isVisible());
    CHECK(pickerOf(*this)->targetCombo()->count() == 6);  // the model's choice + the top 5 next tokens
    const auto trace = session->trace();
    const auto model = session->model();
    attnscope::GradientInput input;
    input.text.ids = trace->ids();
    const attnscope::GradientMaps g = attnscope::gradientSources(*model, input, {});
    layer->setValue(1);
    head->setValue(3);
    waitForMap(g.map(MapSource::GradWeighted, 1, 3));
    CHECK(heatmap->colormap() == Colormap::RdBu);
    CHECK(heatmap->colorScale().lo == -heatmap->colorScale().hi);  // centred at 0
    {  // the overview: every head's G, on one diverging range over the block; the export names the source
        const auto& info = trace->blocks()[0];
        const auto tiles = sourceTiles([&](int l, int h) { return g.map(MapSource::GradWeighted, l, h); }, info.layers,
                                       info.heads);
        CHECK(QTest::qWaitFor([&] { return overviewShows(*overview, tiles, MapSource::GradWeighted, controls); },
                              20000));
        const Figure f = window.currentFigure();
        CHECK((f.panels.front().title + f.title).contains(QStringLiteral("Gradient")));
        CHECK(f.colormap == Colormap::RdBu);
        CHECK(f.colorbarLabel == sourceValueName(MapSource::GradWeighted));
    }
    // Another target: the maps of that token.
    pickerOf(*this)->targetCombo()->setCurrentIndex(2);
    const std::int64_t token = pickerOf(*this)->targetCombo()->currentData().toLongLong();
    CHECK(window.state()->gradientTarget() == std::optional<std::int64_t>(token));
    attnscope::GradientTarget t;
    t.token = token;
    waitForMap(attnscope::gradientSources(*model, input, t).map(MapSource::GradWeighted, 1, 3));
    choose(*this, MapSource::Relevance);
    const attnscope::GradientMaps r = attnscope::gradientSources(*model, input, t);
    waitForMap(r.map(MapSource::Relevance, 1, 0));
    CHECK(QTest::qWaitFor([&] { return linesShow(*views->lines(), {r.map(MapSource::Relevance, 1, 0)}); }, 20000));
}

TEST_CASE_METHOD(WindowFixture,
                 "Show: a built-in model shows the value and ALTI sources; the gradient sources are disabled with the "
                 "reason",
                 "[ui][sources]") {
    open(QStringLiteral("builtin:reverse-dot"));
    SourcePicker* picker = pickerOf(*this);
    auto* model = qobject_cast<QStandardItemModel*>(picker->showCombo()->model());
    REQUIRE(model);
    for (MapSource s : attnscope::kMapSources) {
        INFO(attnscope::sourceName(s));
        const int i = picker->showCombo()->findData(int(s));
        CHECK(model->item(i)->isEnabled() == (!attnscope::gradientSource(s) && !attnscope::scoreTermSource(s)));
        if (attnscope::gradientSource(s)) CHECK(model->item(i)->toolTip().contains(QStringLiteral("built-in")));
        if (attnscope::scoreTermSource(s)) CHECK(model->item(i)->toolTip().contains(QStringLiteral("DeBERTa")));
    }
    // Value-weighted on the built-in default: core's map of the shown head (cross-attention).
    const int block = controls->blockCombo()->currentIndex();
    choose(*this, MapSource::ValueNorm);
    const auto trace = waitForValues(*this);
    waitForMap(attnscope::sourceMap(*trace, MapSource::ValueNorm, block, layer->value(), head->value()));
    CHECK(heatmap->title().contains(QStringLiteral("Value-weighted")));
    // A gradient source chosen anyway (a script, a stale click): refused, the source stays, nothing crashes.
    choose(*this, MapSource::GradWeighted);
    CHECK(window.state()->mapSource() == MapSource::ValueNorm);
    CHECK(picker->source() == MapSource::ValueNorm);
}

TEST_CASE_METHOD(WindowFixture, "Show: a model change revalidates the source", "[ui][sources]") {
    openStandIn();
    choose(*this, MapSource::Relevance);
    REQUIRE(window.state()->mapSource() == MapSource::Relevance);
    open(QStringLiteral("builtin:sentiment-dot"));  // no gradient sources: back to the weights
    CHECK(window.state()->mapSource() == MapSource::Weights);
    CHECK(pickerOf(*this)->source() == MapSource::Weights);
    CHECK_FALSE(window.state()->unavailableReason(MapSource::Relevance).isEmpty());
    CHECK(window.state()->unavailableReason(MapSource::ValueNormLayer).isEmpty());
    CHECK(head->isEnabled());
    CHECK(heatmap->colorScale().hi == 1.0);
    CHECK_FALSE(heatmap->title().contains(QStringLiteral("Value")));
}

TEST_CASE_METHOD(WindowFixture, "Show: the source survives a workspace round trip", "[ui][sources][workspace]") {
    const fs::path dir = freshDir("ui-sources-ws");
    const fs::path file = dir / "value.attnscope";
    openStandIn();
    choose(*this, MapSource::ValueNorm);
    const auto trace = waitForValues(*this);
    layer->setValue(1);
    head->setValue(1);
    waitForMap(attnscope::sourceMap(*trace, MapSource::ValueNorm, 0, 1, 1));
    REQUIRE(window.saveWorkspaceFile(qpath(file)));
    const Workspace saved = readWorkspace(qpath(file));
    CHECK(saved.source.source == MapSource::ValueNorm);
    CHECK(fileBytes(file).contains("\"map_source\""));

    WindowFixture b;
    b.open(QStringLiteral("builtin:reverse-dot"));  // another model first
    QSignalSpy restored(&b.window, &MainWindow::workspaceRestored);
    REQUIRE(b.window.openWorkspaceFile(qpath(file)));
    REQUIRE(restored.wait(60000));
    CHECK(b.window.state()->mapSource() == MapSource::ValueNorm);
    CHECK(pickerOf(b)->source() == MapSource::ValueNorm);
    const auto bt = waitForValues(b);
    b.waitForMap(attnscope::sourceMap(*bt, MapSource::ValueNorm, 0, 1, 1));
    CHECK(b.heatmap->title() == heatmap->title());

    {  // the headless figure of the workspace (attnscope-cli export --workspace) shows the same source
        const auto model = attnscope::Model::load(attnscope::testing::standInModel());
        const Figure f = workspaceFigure(*model, saved);
        CHECK(f.panels.front().map.values == attnscope::sourceMap(*bt, MapSource::ValueNorm, 0, 1, 1).values);
        CHECK((f.panels.front().title + f.title).contains(QStringLiteral("Value-weighted")));
        CHECK(f.scale.hi == Approx(rangeOf(f.panels.front().map).second));
    }
    {  // a file without the section (as before map sources) shows the weights
        Workspace old = saved;
        old.source = {};
        const QByteArray json = workspaceJson(old);
        CHECK_FALSE(json.contains("map_source"));
        CHECK(parseWorkspace(json, QStringLiteral("old.attnscope")).source.source == MapSource::Weights);
    }
    fs::remove_all(dir);
}

TEST_CASE("Workspace map_source: written, read back, refused by name when wrong", "[ui][sources][workspace]") {
    Workspace w;
    w.model = QStringLiteral("builtin:reverse-dot");
    w.source = {MapSource::GradWeighted, 42};
    const QByteArray json = workspaceJson(w);
    const Workspace r = parseWorkspace(json, QStringLiteral("ws.attnscope"));
    CHECK(r.source.source == MapSource::GradWeighted);
    CHECK(r.source.target == std::optional<std::int64_t>(42));
    CHECK(workspaceJson(r) == json);
    QByteArray bad = json;
    bad.replace("grad-weighted", "attention-flow");
    CHECK_THROWS_WITH(parseWorkspace(bad, QStringLiteral("ws.attnscope")),
                      Catch::Contains("ws.attnscope: map_source.source: unknown map source 'attention-flow'"));
}

TEST_CASE("ViewState: the source is refused where unavailable and revalidated by a model change",
          "[ui][sources][viewstate]") {
    ViewState s;
    s.setModel(QStringLiteral("a"));
    QSignalSpy changed(&s, &ViewState::mapSourceChanged);
    CHECK(s.setMapSource(MapSource::GradWeighted));
    s.setGradientTarget(7);
    CHECK(changed.count() == 2);
    // Leaving the gradient sources resets the target.
    CHECK(s.setMapSource(MapSource::ValueNorm));
    CHECK_FALSE(s.gradientTarget().has_value());
    std::vector<QString> reasons(std::size(attnscope::kMapSources));
    reasons[1] = QStringLiteral("no values");  // value-norm
    s.setUnavailableSources(reasons);
    CHECK(s.mapSource() == MapSource::Weights);  // fell back
    CHECK_FALSE(s.setMapSource(MapSource::ValueNorm));
    CHECK(s.unavailableReason(MapSource::ValueNorm) == QStringLiteral("no values"));
    CHECK(s.setMapSource(MapSource::GradWeighted));
    s.setGradientTarget(3);
    s.setModel(QStringLiteral("b"));  // another model: another vocabulary, its own availability
    CHECK_FALSE(s.gradientTarget().has_value());
    CHECK(s.mapSource() == MapSource::GradWeighted);
    CHECK(s.unavailableReason(MapSource::ValueNorm).isEmpty());
    // Its serialisation.
    s.setGradientTarget(5);
    const Workspace w = s.workspace();
    CHECK(w.source.source == MapSource::GradWeighted);
    CHECK(w.source.target == std::optional<std::int64_t>(5));
    ViewState t;
    t.applyWorkspace(w);
    CHECK(t.mapSource() == MapSource::GradWeighted);
    CHECK(t.gradientTarget() == std::optional<std::int64_t>(5));
}

TEST_CASE("Signed sources: a diverging colour map centred at 0, on screen and in exports alike",
          "[ui][sources][colors]") {
    const SourceColors c = sourceColors(MapSource::GradWeighted, Colormap::Viridis, ColorScaleType::Log, -0.5, 2.0);
    CHECK(c.colormap == Colormap::RdBu);
    CHECK(c.scale.type == ColorScaleType::Linear);  // a log scale cannot place signs
    CHECK(c.scale.lo == -2.0);
    CHECK(c.scale.hi == 2.0);
    CHECK(c.scale.position(0.0) == 0.5);
    CHECK(colormapColor(Colormap::RdBu, c.scale.position(0.0)) == QColor(0xf7, 0xf7, 0xf7));  // white at zero
    CHECK(colormapColor(Colormap::RdBu, c.scale.position(-2.0)).blue() > 0x50);               // negative: blue
    CHECK(colormapColor(Colormap::RdBu, c.scale.position(2.0)).red() > 0x50);                 // positive: red
    CHECK(c.scale.ticks() == QList<double>{-2.0, -1.0, 0.0, 1.0, 2.0});
    // The same colours in an exported figure's image as on screen (mapImage is both's).
    attnscope::HeadMap m{1, 3, {-2.0f, 0.0f, 2.0f}};
    const QImage img = mapImage(m, c.colormap, c.scale);
    CHECK(img.pixelColor(1, 0) == QColor(0xf7, 0xf7, 0xf7));
    CHECK(img.pixelColor(0, 0) == colormapColor(Colormap::RdBu, 0.0));
    // Raw norms: their own range; probability-like sources: 0..1.
    const SourceColors raw = sourceColors(MapSource::ValueNorm, Colormap::Magma, ColorScaleType::Linear, 0.25, 7.5);
    CHECK(raw.colormap == Colormap::Magma);
    CHECK(raw.scale.lo == 0.25);
    CHECK(raw.scale.hi == 7.5);
    CHECK(raw.scale.position(7.5) == 1.0);
    const SourceColors unit = sourceColors(MapSource::Alti, Colormap::Magma, ColorScaleType::Log, 0.25, 7.5);
    CHECK(unit.scale.hi == 1.0);
    CHECK(unit.scale.lower() == Approx(1e-4));
    // The selector is not offered the diverging map as a user colour map.
    CHECK_FALSE(colormapNames().contains(QStringLiteral("rdbu")));
}

namespace {

// A 3-layer ViT classifier on 32 × 32 pixels in 8-pixel patches (a 4 × 4 grid), run on a picture.
std::shared_ptr<const attnscope::Trace> openVit(WindowFixture& w, const fs::path& dir) {
    attnscope::testing::VitSpec spec;
    spec.layers = 3;
    spec.imageSize = 32;
    spec.patch = 8;
    attnscope::testing::writeCheckpoint(dir, attnscope::testing::makeVit(spec, 61));
    std::vector<std::uint8_t> pixels(32 * 32 * 3);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = std::uint8_t((i * 37) % 251);
    attnscope::testing::writePng(dir / "picture.png", 32, 32, pixels);
    w.openWithImage(qpath(dir), qpath(dir / "picture.png"));
    w.window.tabs()->setCurrentWidget(w.window.imageView()->panel());
    return w.session->trace();
}

// The Image tab shows row 0 ([CLS]) of this map over the patches.
bool overlayShows(WindowFixture& w, const attnscope::Trace& trace, const attnscope::HeadMap& map, MapSource source) {
    const attnscope::PatchOverlay want = attnscope::mapRowOverlay(trace, 0, map, 0);
    ImageController* image = w.window.imageView();
    return image->shown().source.source == source && image->panel()->view()->hasPicture() &&
           image->panel()->view()->picture().values == want.patches;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "Show: the Image tab overlays the source's [CLS] row over the patches",
                 "[ui][sources][vit]") {
    const fs::path dir = freshDir("ui-sources-vit");
    openVit(*this, dir);
    choose(*this, MapSource::ValueNormLayer);
    const auto trace = waitForValues(*this);  // the image run again, recording the values
    layer->setValue(2);
    const attnscope::HeadMap m = attnscope::sourceMap(*trace, MapSource::ValueNormLayer, 0, 2, 0);
    CHECK(QTest::qWaitFor([&] { return overlayShows(*this, *trace, m, MapSource::ValueNormLayer); }, 20000));
    CHECK(window.imageView()->panel()->view()->caption().contains(QStringLiteral("Value-weighted (layer)")));
    CHECK(window.imageView()->figure().colorbarLabel == QStringLiteral("Value-weighted (layer)"));
    fs::remove_all(dir);
}

TEST_CASE_METHOD(WindowFixture, "Show: relevance of [CLS] over the patches of a ViT (Chefer et al.)",
                 "[ui][sources][vit]") {
    const fs::path dir = freshDir("ui-sources-vit-relevance");
    const auto trace = openVit(*this, dir);
    choose(*this, MapSource::Relevance);
    layer->setValue(2);
    attnscope::GradientInput input;
    input.image = *session->lastImage();
    const attnscope::GradientMaps g = attnscope::gradientSources(*session->model(), input, {});
    CHECK(QTest::qWaitFor(
            [&] { return overlayShows(*this, *trace, g.map(MapSource::Relevance, 2, 0), MapSource::Relevance); },
            30000));
    CHECK(pickerOf(*this)->targetCombo()->count() == 1 + int(trace->classLabels().size()));  // the labels
    fs::remove_all(dir);
}

TEST_CASE_METHOD(WindowFixture, "Show: an error from core is shown in the view, not a crash", "[ui][sources]") {
    // ALTI of an encoder-decoder's cross block: core refuses (it mixes two streams).
    const fs::path dir = freshDir("ui-sources-t5");
    attnscope::testing::writeCheckpoint(dir, attnscope::testing::makeT5(attnscope::testing::T5Spec{}, 5));
    open(qpath(dir));
    choose(*this, MapSource::Alti);
    const auto trace = waitForValues(*this);
    const int block = controls->blockCombo()->currentIndex();
    REQUIRE(trace->blocks()[block].name != "encoder");
    std::string error;
    try {
        attnscope::sourceMap(*trace, MapSource::Alti, block, layer->value(), head->value());
    } catch (const std::exception& e) {
        error = e.what();
    }
    REQUIRE_FALSE(error.empty());
    CHECK(QTest::qWaitFor([&] { return heatmap->title().contains(QString::fromStdString(error)); }, 20000));
    CHECK(heatmap->map().rows == 0);
    CHECK(window.state()->mapSource() == MapSource::Alti);
    fs::remove_all(dir);
}

TEST_CASE_METHOD(WindowFixture, "Show: a gradient job superseded by another source is dropped", "[ui][sources]") {
    openStandIn();
    layer->setValue(1);
    choose(*this, MapSource::GradWeighted);  // a backward pass starts on a worker
    CHECK(pickerOf(*this)->targetCombo()->isVisible());
    choose(*this, MapSource::Weights);  // before it can arrive
    CHECK_FALSE(pickerOf(*this)->targetCombo()->isVisible());
    window.sources()->waitForWorkers();
    QTest::qWait(50);  // a result it posted would arrive now, and must be dropped
    waitForMap(session->trace()->map(0, 1, 0));
    CHECK_FALSE(heatmap->title().contains(QStringLiteral("radient")));
    CHECK(window.sources()->waitingMessage().isEmpty());
    CHECK_FALSE(window.findChild<QProgressBar*>(QStringLiteral("progressBar"))->isVisible());
}

TEST_CASE_METHOD(WindowFixture, "Show: an encoder without a head has value sources but nothing for the gradients",
                 "[ui][sources]") {
    const fs::path dir = freshDir("ui-sources-bert");
    attnscope::testing::writeCheckpoint(dir, attnscope::testing::makeBert(attnscope::testing::BertSpec{}, 23));
    open(qpath(dir));
    SourcePicker* picker = pickerOf(*this);
    CHECK(picker->isAvailable(MapSource::ValueNorm));
    CHECK(picker->isAvailable(MapSource::Alti));
    for (MapSource s : {MapSource::GradWeighted, MapSource::Relevance}) {
        INFO(attnscope::sourceName(s));
        CHECK_THAT(picker->unavailableReason(s).toStdString(), Catch::Contains("no output to explain"));
    }
    // Its value-weighted maps (post-norm BERT: x̃ = x) as core computes them.
    choose(*this, MapSource::ValueNorm);
    const auto trace = waitForValues(*this);
    waitForMap(attnscope::sourceMap(*trace, MapSource::ValueNorm, 0, 0, 0));
    fs::remove_all(dir);
}

}  // namespace test_map_sources
