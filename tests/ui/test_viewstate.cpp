// ViewState as a plain object: every change emits its one signal, and a model or input change
// resets what depends on it (state/viewstate.h).
#include "state/viewstate.h"

#include <catch2/catch.hpp>

#include <QSignalSpy>

namespace test_viewstate {

namespace {

std::vector<ViewState::BlockShape> gpt2Blocks() { return {{QStringLiteral("self"), 12, 12}}; }
std::vector<ViewState::BlockShape> seq2seqBlocks() {
    return {{QStringLiteral("encoder"), 2, 4}, {QStringLiteral("decoder"), 2, 4}, {QStringLiteral("cross"), 2, 4}};
}

}  // namespace

TEST_CASE("ViewState: each setter emits its signal once, and nothing when the value is the same", "[viewstate]") {
    ViewState s;
    s.setModel(QStringLiteral("builtin:reverse"));
    s.setBlocks(gpt2Blocks());

    QSignalSpy selection(&s, &ViewState::selectionChanged);
    s.select(0, 3, 4);
    CHECK(selection.count() == 1);
    CHECK(s.layer() == 3);
    CHECK(s.head() == 4);
    s.select(0, 3, 4);
    CHECK(selection.count() == 1);
    s.moveSelection(1, -1);
    CHECK(s.layer() == 4);
    CHECK(s.head() == 3);
    CHECK(selection.count() == 2);

    QSignalSpy temperature(&s, &ViewState::temperatureChanged);
    s.setTemperature(2.5);
    s.setTemperature(2.5);
    CHECK(temperature.count() == 1);
    CHECK(s.temperature() == 2.5);
    s.setTemperature(40.0);  // clamped to the slider's range
    CHECK(s.temperature() == 10.0);
    s.setTemperature(std::nan(""));
    CHECK(s.temperature() == 10.0);
    CHECK(temperature.count() == 2);

    QSignalSpy inside(&s, &ViewState::insideChanged);
    s.setInside({true, {1, 2}});
    CHECK(inside.count() == 1);
    CHECK(s.displayTemperature() == 1.0);  // T goes into the model; maps are drawn at 1
    s.setInside({false, {1, 2}});
    CHECK(s.displayTemperature() == 10.0);
    CHECK(inside.count() == 2);

    QSignalSpy variant(&s, &ViewState::variantChanged);
    s.setVariant(attnscope::LabVariant::Linear);
    s.setVariant(attnscope::LabVariant::Linear);
    CHECK(variant.count() == 1);

    QSignalSpy masks(&s, &ViewState::masksChanged);
    s.toggleMask(QStringLiteral("self"), 1, 2);
    s.toggleMask(QStringLiteral("self"), 5, 0);
    CHECK(s.isMasked(QStringLiteral("self"), 1, 2));
    s.toggleMask(QStringLiteral("self"), 1, 2);
    CHECK_FALSE(s.isMasked(QStringLiteral("self"), 1, 2));
    REQUIRE(s.masks().size() == 1);
    CHECK(s.masks()[0].layer == 5);
    CHECK(masks.count() == 3);

    QSignalSpy colors(&s, &ViewState::colorsChanged);
    s.setColormap(Colormap::Magma);
    s.setScale(ColorScaleType::Log);
    s.setScale(ColorScaleType::Log);
    CHECK(colors.count() == 2);

    QSignalSpy source(&s, &ViewState::mapSourceChanged);
    s.setMapSource(attnscope::MapSource::Weights);  // the default already
    CHECK(source.count() == 0);
    CHECK(QString::fromLatin1(attnscope::sourceName(s.mapSource())) == QStringLiteral("weights"));

    QSignalSpy zoom(&s, &ViewState::zoomChanged);
    s.setZoom(ViewState::Zoom{0.5, 3.5, -0.5, 2.5});
    s.setZoom(ViewState::Zoom{0.5, 3.5, -0.5, 2.5});
    CHECK(zoom.count() == 1);

    QSignalSpy token(&s, &ViewState::tokenSelectionChanged);
    s.setTokenSelection({1, 4});
    s.setTokenSelection({1, 4});
    s.setTokenSelection({0, -3});  // no index: no selection
    CHECK(token.count() == 2);
    CHECK(s.tokenSelection().side == -1);

    QSignalSpy view(&s, &ViewState::viewChanged);
    s.setTab(QStringLiteral("compare"));
    s.setTab(QStringLiteral("compare"));
    CHECK(view.count() == 1);
    CHECK(s.view().tab == QStringLiteral("compare"));
}

TEST_CASE("ViewState: the selection stays inside the shown block's shape", "[viewstate]") {
    ViewState s;
    s.setModel(QStringLiteral("builtin:translate"));
    s.select(0, 7, 9);  // before any trace: kept as asked
    CHECK(s.block() == -1);
    CHECK(s.layer() == 7);
    s.setBlocks(seq2seqBlocks());
    CHECK(s.blockName() == QStringLiteral("cross"));  // encoder-decoders start on cross-attention
    CHECK(s.block() == 2);
    CHECK(s.layer() == 1);
    CHECK(s.head() == 3);
    s.select(5, -2, 1);
    CHECK(s.block() == 2);
    CHECK(s.blockName() == QStringLiteral("cross"));
    CHECK(s.layer() == 0);
    CHECK(s.head() == 1);

    // A new trace with the same blocks keeps the block by name; another block's token goes.
    s.setTokenSelection({0, 2});
    s.setBlocks({{QStringLiteral("decoder"), 2, 4}, {QStringLiteral("cross"), 1, 2}});
    CHECK(s.blockName() == QStringLiteral("cross"));
    CHECK(s.block() == 1);
    s.selectByName(QStringLiteral("decoder"), 1, 3);
    CHECK(s.block() == 0);
    CHECK(s.tokenSelection().side == -1);
    s.selectByName(QStringLiteral("nowhere"), 0, 0);  // an unknown name keeps the block
    CHECK(s.blockName() == QStringLiteral("decoder"));
}

TEST_CASE("ViewState: another model resets what belonged to the old one; the input and colours stay", "[viewstate]") {
    ViewState s;
    s.setModel(QStringLiteral("/models/gpt2"));
    s.setInput({QStringLiteral("The quick brown fox"), false, {}, {}});
    s.setBlocks(gpt2Blocks());
    s.select(0, 11, 11);
    s.setTokenSelection({1, 2});
    s.toggleMask(QStringLiteral("self"), 3, 3);
    s.setInside({true, {0, 1}});
    s.setZoom(ViewState::Zoom{0, 2, 0, 2});
    s.setColormap(Colormap::Cividis);
    s.setTemperature(0.5);
    ViewState::TabSettings tabs;
    tabs.lab.fit = Workspace::Lab::Fit{QStringLiteral("self"), 11, 11, 1.0};
    s.setTabSettings(tabs);

    QSignalSpy model(&s, &ViewState::modelChanged), selection(&s, &ViewState::selectionChanged),
            masks(&s, &ViewState::masksChanged), token(&s, &ViewState::tokenSelectionChanged),
            zoom(&s, &ViewState::zoomChanged), input(&s, &ViewState::inputChanged),
            colors(&s, &ViewState::colorsChanged);
    s.setModel(QStringLiteral("/models/vit"));
    CHECK(model.count() == 1);
    CHECK(selection.count() == 1);
    CHECK(masks.count() == 1);
    CHECK(token.count() == 1);
    CHECK(zoom.count() == 1);
    CHECK(input.count() == 0);
    CHECK(colors.count() == 0);
    CHECK(s.blocks().empty());
    CHECK(s.block() == -1);
    CHECK(s.layer() == 0);
    CHECK(s.head() == 0);
    CHECK(s.masks().empty());
    CHECK(s.tokenSelection().side == -1);
    CHECK_FALSE(s.zoom());
    CHECK_FALSE(s.tabSettings().lab.fit);
    CHECK(s.inside().enabled);  // the user's choice; the layers were the old model's
    CHECK(s.inside().layers.empty());
    CHECK(s.input().text == QStringLiteral("The quick brown fox"));
    CHECK(s.colormap() == Colormap::Cividis);
    CHECK(s.temperature() == 0.5);

    s.setModel(QStringLiteral("/models/vit"));  // the same model: nothing
    CHECK(model.count() == 1);

    // The new model's trace: a smaller shape clamps the selection.
    s.setBlocks({{QStringLiteral("self"), 2, 3}});
    s.select(0, 5, 5);
    CHECK(s.layer() == 1);
    CHECK(s.head() == 2);
}

TEST_CASE("ViewState: another input resets the token selection and the zoom, not the heads", "[viewstate]") {
    ViewState s;
    s.setModel(QStringLiteral("builtin:reverse"));
    s.setBlocks(gpt2Blocks());
    s.select(0, 2, 3);
    s.toggleMask(QStringLiteral("self"), 1, 1);
    s.setTokenSelection({0, 5});
    s.setZoom(ViewState::Zoom{0, 2, 0, 2});
    QSignalSpy input(&s, &ViewState::inputChanged), token(&s, &ViewState::tokenSelectionChanged),
            zoom(&s, &ViewState::zoomChanged);
    s.setInput({QStringLiteral("abc"), false, {}, {}});
    CHECK(input.count() == 1);
    CHECK(token.count() == 1);
    CHECK(zoom.count() == 1);
    CHECK(s.tokenSelection().side == -1);
    CHECK_FALSE(s.zoom());
    CHECK(s.layer() == 2);
    CHECK(s.head() == 3);
    CHECK(s.masks().size() == 1);
    s.setInput({QStringLiteral("abc"), false, {}, {}});
    CHECK(input.count() == 1);
}

TEST_CASE("ViewState: a workspace is its serialisation (state -> file -> state)", "[viewstate]") {
    ViewState s;
    s.setModel(QStringLiteral("builtin:translate"));
    s.setDevice(QStringLiteral("cpu"));
    s.setInput({QStringLiteral("3 4 5"), true, QStringLiteral("5 4"), {}});
    s.setBlocks(seq2seqBlocks());
    s.select(2, 1, 3);
    s.setTemperature(1.75);
    s.setInside({true, {1}});
    s.setVariant(attnscope::LabVariant::Hybrid);
    s.toggleMask(QStringLiteral("decoder"), 0, 2);
    s.setColormap(Colormap::Gray);
    s.setScale(ColorScaleType::Log);
    s.setTab(QStringLiteral("model"));
    s.setTokenSelection({1, 2});
    s.setZoom(ViewState::Zoom{0.5, 2.5, -0.5, 1.5});

    const Workspace read = parseWorkspace(workspaceJson(s.workspace()), QStringLiteral("state.attnscope"));
    CHECK(read.selection.block == QStringLiteral("cross"));
    CHECK(read.views.selectedSide == QStringLiteral("key"));
    CHECK(read.lab.variant == attnscope::LabVariant::Hybrid);

    ViewState t;
    QSignalSpy selection(&t, &ViewState::selectionChanged);
    t.applyWorkspace(read);
    t.setBlocks(seq2seqBlocks());  // the model's trace arrives: the block is taken by name
    CHECK(workspaceJson(t.workspace()) == workspaceJson(s.workspace()));
    CHECK(t.block() == 2);
    CHECK(t.layer() == 1);
    CHECK(t.head() == 3);
    CHECK(t.masks().size() == 1);
    CHECK(t.zoom().has_value());
    CHECK(t.tokenSelection().side == 1);
    CHECK(selection.count() >= 1);
}

TEST_CASE("ViewState: the tabs' settings change one section at a time, with one signal, and only when different",
          "[viewstate]") {
    ViewState s;
    s.setModel(QStringLiteral("builtin:reverse"));
    QSignalSpy tabs(&s, &ViewState::tabSettingsChanged);
    Workspace::Lab lab;
    lab.gate = 0.25;
    lab.featureMap = attnscope::FeatureMap::Favor;
    lab.features = 64;
    lab.fitWidth = 8;
    lab.fitSteps = 40;
    lab.fit = Workspace::Lab::Fit{QStringLiteral("self"), 1, 2, 0.5};
    lab.knockout = QStringLiteral("4:0@1");
    s.setTabSetting(&ViewState::TabSettings::lab, lab);
    CHECK(tabs.count() == 1);
    s.setTabSetting(&ViewState::TabSettings::lab, lab);  // the same values
    CHECK(tabs.count() == 1);
    CHECK(s.tabSettings().lab.gate == 0.25);
    REQUIRE(s.tabSettings().lab.fit);
    CHECK(s.tabSettings().lab.fit->head == 2);

    Workspace::ModelView model;
    model.order = QStringLiteral("mean_distance");
    model.frames = false;
    s.setTabSetting(&ViewState::TabSettings::modelView, model);
    CHECK(tabs.count() == 2);
    CHECK(s.tabSettings().lab.gate == 0.25);  // the other sections stay
    CHECK(s.tabSettings().modelView.order == QStringLiteral("mean_distance"));

    Workspace::FigureSettings figure{6.75, 600};
    s.setTabSetting(&ViewState::TabSettings::figure, figure);
    Workspace::GenerationState generation;
    generation.tokens = 5;
    generation.sampling.sample = true;
    generation.sampling.topK = 7;
    s.setTabSetting(&ViewState::TabSettings::generation, generation);
    CHECK(tabs.count() == 4);

    // The file holds them as they are in the state (what a saved workspace is).
    const Workspace w = parseWorkspace(workspaceJson(s.workspace()), QStringLiteral("tabs.attnscope"));
    CHECK(w.lab.gate == 0.25);
    CHECK(w.lab.featureMap == attnscope::FeatureMap::Favor);
    CHECK(w.lab.features == 64);
    CHECK(w.lab.fitWidth == 8);
    CHECK(w.lab.fitSteps == 40);
    REQUIRE(w.lab.fit);
    CHECK(w.lab.fit->layer == 1);
    CHECK(w.lab.fit->temperature == 0.5);
    CHECK(w.lab.knockout == QStringLiteral("4:0@1"));
    CHECK(w.modelView.frames == false);
    CHECK(w.figure.widthIn == 6.75);
    CHECK(w.figure.dpi == 600);
    CHECK(w.generation.tokens == 5);
    CHECK(w.generation.sampling.topK == 7);
}

TEST_CASE("ViewState: the Views section's selection is the token selection; a fit goes with its model", "[viewstate]") {
    ViewState s;
    s.setModel(QStringLiteral("builtin:reverse"));
    s.setBlocks(gpt2Blocks());
    s.setTokenSelection({0, 3});
    CHECK(s.tabSettings().views.selectedSide == QStringLiteral("query"));
    CHECK(s.tabSettings().views.selectedIndex == 3);
    // A section written with another selection keeps the state's.
    Workspace::Views views;
    views.tab = QStringLiteral("qk");
    views.selectedSide = QStringLiteral("key");
    views.selectedIndex = 9;
    s.setTabSetting(&ViewState::TabSettings::views, views);
    CHECK(s.tabSettings().views.tab == QStringLiteral("qk"));
    CHECK(s.tabSettings().views.selectedSide == QStringLiteral("query"));
    CHECK(s.tokenSelection().index == 3);
    s.setInput({QStringLiteral("abc"), false, {}, {}});  // other tokens: the selection goes, in both
    CHECK(s.tabSettings().views.selectedSide == QStringLiteral("none"));
    CHECK(s.tabSettings().views.selectedIndex == -1);

    Workspace::Lab lab;
    lab.fit = Workspace::Lab::Fit{QStringLiteral("self"), 0, 0, 1.0};
    lab.gate = 0.75;
    s.setTabSetting(&ViewState::TabSettings::lab, lab);
    QSignalSpy tabs(&s, &ViewState::tabSettingsChanged);
    s.setModel(QStringLiteral("builtin:sentiment"));
    CHECK(tabs.count() == 1);  // the fit went, and the Lab panel hears it
    CHECK_FALSE(s.tabSettings().lab.fit);
    CHECK(s.tabSettings().lab.gate == 0.75);  // the user's settings stay
}

TEST_CASE("ViewState: a tab the file has no name for is saved as Explore", "[viewstate]") {
    ViewState s;
    s.setModel(QStringLiteral("builtin:reverse"));
    s.setTab(QStringLiteral("corpus"));
    CHECK(s.view().tab == QStringLiteral("corpus"));  // the window shows it
    const Workspace w = parseWorkspace(workspaceJson(s.workspace()), QStringLiteral("tab.attnscope"));
    CHECK(w.view.tab == QStringLiteral("explore"));
    s.setTab(QStringLiteral("causal"));
    CHECK(s.workspace().view.tab == QStringLiteral("causal"));
}

}  // namespace test_viewstate
