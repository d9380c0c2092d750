// The version 2 sections of a workspace file: the Model tab, the Image tab's overlay, the Views
// dock (line, neuron and query-key views) and the generation. Names in the file are the ones
// below; every value is checked against the range its widget takes.
#include "figure/workspace_reader.h"

#include "attnscope/analysis/head_metric_list.h"

#include <limits>

namespace {

const QStringList kSources = {QStringLiteral("head"), QStringLiteral("layer_mean"), QStringLiteral("rollout"),
                              QStringLiteral("similarity")};                                          // OverlaySource
const QStringList kFusions = {QStringLiteral("mean"), QStringLiteral("max"), QStringLiteral("min")};  // HeadFusion
const QStringList kViewTabs = {QStringLiteral("lines"), QStringLiteral("neuron"), QStringLiteral("qk")};
const QStringList kSides = {QStringLiteral("none"), QStringLiteral("query"), QStringLiteral("key")};
const QStringList kQkColorings = {QStringLiteral("position"), QStringLiteral("kind"), QStringLiteral("head"),
                                  QStringLiteral("token_kind")};
constexpr int kMaxToken = 1 << 24;             // token positions and ids: far above any model
constexpr double kMaxSeed = 9007199254740992;  // 2^53: every seed up to it is exact in JSON

QStringList metricKeys() {
    QStringList keys;
    for (const auto& m : attnscope::headMetricList()) keys << QString::fromUtf8(m.key);
    return keys;
}

template <typename T>
std::vector<T> integers(WorkspaceReader& r, const QString& field, int lo, int hi) {
    std::vector<T> out;
    if (auto a = r.array(field))
        for (const QJsonValue& v : *a) out.push_back(T(r.integerOf(field, v, lo, hi)));
    return out;
}

template <typename T>
QJsonArray array(const std::vector<T>& values) {
    QJsonArray a;
    for (T v : values) a.append(double(v));
    return a;
}

}  // namespace

void readViewSections(WorkspaceReader& r, Workspace& w) {
    if (auto m = r.object(QStringLiteral("model_view"))) {
        const QStringList keys = metricKeys();
        if (auto order = m->string(QStringLiteral("order")); order && !order->isEmpty()) {
            if (!keys.contains(*order))
                m->fail(QStringLiteral("order"),
                        QStringLiteral("unknown '%1' (use \"\" or %2)").arg(*order, keys.join(QStringLiteral(", "))));
            w.modelView.order = *order;
        }
        w.modelView.descending = m->boolean(QStringLiteral("descending")).value_or(true);
        w.modelView.frames = m->boolean(QStringLiteral("frames")).value_or(true);
        if (auto i = m->choice(QStringLiteral("metric"), keys)) w.modelView.metric = keys[*i];
        m->done();
    }
    if (auto im = r.object(QStringLiteral("image"))) {
        Workspace::ImageTab& t = w.image;
        if (auto s = im->choice(QStringLiteral("source"), kSources)) t.source = attnscope::OverlaySource(*s);
        if (auto f = im->choice(QStringLiteral("fusion"), kFusions)) t.fusion = attnscope::HeadFusion(*f);
        t.discardRatio = im->number(QStringLiteral("discard_ratio"), 0.0, 0.99).value_or(0.9);  // the spin box's range
        t.opacity = im->integer(QStringLiteral("opacity"), 0, 100).value_or(60);
        if (auto name = im->string(QStringLiteral("colormap"))) {
            const auto map = parseColormap(*name);
            if (!map)
                im->fail(
                        QStringLiteral("colormap"),
                        QStringLiteral("unknown '%1' (use %2)").arg(*name, colormapNames().join(QStringLiteral(", "))));
            t.colormap = *map;
        }
        t.smooth = im->boolean(QStringLiteral("smooth")).value_or(false);
        t.grid = im->boolean(QStringLiteral("grid")).value_or(false);
        t.patchesOnly = im->boolean(QStringLiteral("patches_only")).value_or(false);
        t.query = im->integer(QStringLiteral("query"), 0, kMaxToken).value_or(0);
        im->done();
    }
    if (auto v = r.object(QStringLiteral("views"))) {
        if (auto t = v->choice(QStringLiteral("tab"), kViewTabs)) w.views.tab = kViewTabs[*t];
        if (auto s = v->choice(QStringLiteral("selected_side"), kSides)) w.views.selectedSide = kSides[*s];
        w.views.selectedIndex = v->integer(QStringLiteral("selected_index"), -1, kMaxToken).value_or(-1);
        if ((w.views.selectedSide == kSides[0]) != (w.views.selectedIndex < 0))
            v->fail(QStringLiteral("selected_index"),
                    QStringLiteral("a token (>= 0) exactly when selected_side is query or key"));
        if (auto l = v->object(QStringLiteral("lines"))) {
            w.views.lines.hiddenHeads = integers<int>(*l, QStringLiteral("hidden_heads"), 0, kMaxToken);
            w.views.lines.threshold = l->number(QStringLiteral("threshold"), 0.0, 1.0).value_or(0.0);
            w.views.lines.windowStart = l->integer(QStringLiteral("window_start"), 0, kMaxToken).value_or(0);
            l->done();
        }
        if (auto n = v->object(QStringLiteral("neuron"))) {
            w.views.neuronQuery = n->integer(QStringLiteral("query"), -1, kMaxToken).value_or(-1);
            n->done();
        }
        if (auto q = v->object(QStringLiteral("qk"))) {
            w.views.qk.allHeads = q->boolean(QStringLiteral("all_heads")).value_or(false);
            if (auto c = q->choice(QStringLiteral("coloring"), kQkColorings)) w.views.qk.coloring = kQkColorings[*c];
            q->done();
        }
        v->done();
    }
    if (auto g = r.object(QStringLiteral("generation"))) {
        Workspace::GenerationState& s = w.generation;
        s.tokens = g->integer(QStringLiteral("tokens"), 1, 4096).value_or(12);  // the panel's range
        s.sampling.sample = g->boolean(QStringLiteral("sample")).value_or(false);
        s.sampling.temperature = g->number(QStringLiteral("sampling_temperature"), 0.01, 100.0).value_or(1.0);
        s.sampling.topK = g->integer(QStringLiteral("top_k"), 0, 1000000).value_or(0);
        s.sampling.topP = g->number(QStringLiteral("top_p"), 0.01, 1.0).value_or(1.0);
        if (auto seed = g->number(QStringLiteral("seed"), 0, kMaxSeed)) {
            if (*seed != std::floor(*seed)) g->fail(QStringLiteral("seed"), QStringLiteral("expected a whole number"));
            s.sampling.seed = std::uint64_t(*seed);
        }
        s.queryRowOnly = g->boolean(QStringLiteral("query_row_only")).value_or(true);
        s.prompt = integers<std::int64_t>(*g, QStringLiteral("prompt"), 0, std::numeric_limits<int>::max());
        s.generated = integers<std::int64_t>(*g, QStringLiteral("generated"), 0, std::numeric_limits<int>::max());
        s.step = g->integer(QStringLiteral("step"), 0, 4095).value_or(0);
        if (!s.generated.empty() && s.prompt.empty())
            g->fail(QStringLiteral("prompt"), QStringLiteral("missing (the ids the generation continued)"));
        if (s.generated.size() > 4096) g->fail(QStringLiteral("generated"), QStringLiteral("more than 4096 ids"));
        if (!s.generated.empty() && s.step >= int(s.generated.size()))
            g->fail(QStringLiteral("step"),
                    QStringLiteral("%1 is past the %2 generated ids").arg(s.step).arg(s.generated.size()));
        g->done();
    }
}

void writeViewSections(const Workspace& w, QJsonObject& o) {
    o.insert(QStringLiteral("model_view"), QJsonObject{{QStringLiteral("order"), w.modelView.order},
                                                       {QStringLiteral("descending"), w.modelView.descending},
                                                       {QStringLiteral("frames"), w.modelView.frames},
                                                       {QStringLiteral("metric"), w.modelView.metric}});
    const Workspace::ImageTab& t = w.image;
    o.insert(QStringLiteral("image"), QJsonObject{{QStringLiteral("source"), kSources.value(int(t.source))},
                                                  {QStringLiteral("fusion"), kFusions.value(int(t.fusion))},
                                                  {QStringLiteral("discard_ratio"), t.discardRatio},
                                                  {QStringLiteral("opacity"), t.opacity},
                                                  {QStringLiteral("colormap"), colormapName(t.colormap)},
                                                  {QStringLiteral("smooth"), t.smooth},
                                                  {QStringLiteral("grid"), t.grid},
                                                  {QStringLiteral("patches_only"), t.patchesOnly},
                                                  {QStringLiteral("query"), t.query}});
    const Workspace::Views& v = w.views;
    o.insert(QStringLiteral("views"),
             QJsonObject{
                     {QStringLiteral("tab"), v.tab},
                     {QStringLiteral("selected_side"), v.selectedSide},
                     {QStringLiteral("selected_index"), v.selectedIndex},
                     {QStringLiteral("lines"), QJsonObject{{QStringLiteral("hidden_heads"), array(v.lines.hiddenHeads)},
                                                           {QStringLiteral("threshold"), v.lines.threshold},
                                                           {QStringLiteral("window_start"), v.lines.windowStart}}},
                     {QStringLiteral("neuron"), QJsonObject{{QStringLiteral("query"), v.neuronQuery}}},
                     {QStringLiteral("qk"), QJsonObject{{QStringLiteral("all_heads"), v.qk.allHeads},
                                                        {QStringLiteral("coloring"), v.qk.coloring}}}});
    const Workspace::GenerationState& g = w.generation;
    QJsonObject gen{{QStringLiteral("tokens"), g.tokens},
                    {QStringLiteral("sample"), g.sampling.sample},
                    {QStringLiteral("sampling_temperature"), g.sampling.temperature},
                    {QStringLiteral("top_k"), g.sampling.topK},
                    {QStringLiteral("top_p"), g.sampling.topP},
                    {QStringLiteral("seed"), double(g.sampling.seed)},
                    {QStringLiteral("query_row_only"), g.queryRowOnly}};
    if (!g.generated.empty()) {
        gen.insert(QStringLiteral("prompt"), array(g.prompt));
        gen.insert(QStringLiteral("generated"), array(g.generated));
        gen.insert(QStringLiteral("step"), g.step);
    }
    o.insert(QStringLiteral("generation"), gen);
}
