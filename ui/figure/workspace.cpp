#include "figure/workspace.h"
#include "figure/workspace_reader.h"

#include "attnscope/io/atomic_file.h"
#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include <cmath>
#include <limits>

namespace {

const char* const kFormat = "attnscope-workspace";

const QStringList kVariants = {QStringLiteral("native"), QStringLiteral("dot"), QStringLiteral("linear"),
                               QStringLiteral("additive"), QStringLiteral("hybrid")};
const QStringList kFeatureMaps = {QStringLiteral("elu"), QStringLiteral("relu"), QStringLiteral("favor")};
const QStringList kScales = {QStringLiteral("linear"), QStringLiteral("log")};
const QStringList kDevices = {QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")};
const QStringList kTabs = {QStringLiteral("explore"), QStringLiteral("compare"), QStringLiteral("metrics"),
                           QStringLiteral("model"),   QStringLiteral("image"),   QStringLiteral("causal"),
                           QStringLiteral("long")};
const QStringList kMetricsViews = {QStringLiteral("rollout"), QStringLiteral("flow"), QStringLiteral("similarity")};
const QStringList kPoolings = {QStringLiteral("max"), QStringLiteral("mean"), QStringLiteral("sum")};
constexpr int kMaxIndex = 1 << 20;  // layers, heads: far above any model, far below overflow

QString resolved(const QString& path, const QString& folder) {
    if (path.isEmpty() || path.startsWith(QLatin1String("builtin:")) || folder.isEmpty() ||
        QFileInfo(path).isAbsolute())
        return path;
    return QDir::cleanPath(QDir(folder).absoluteFilePath(path));
}

attnscope::HeadRef headRef(WorkspaceReader& r) {
    attnscope::HeadRef h;
    h.block = r.string(QStringLiteral("block")).value_or(QString()).toStdString();
    if (h.block.empty())
        r.fail(QStringLiteral("block"), QStringLiteral("missing (the block's name, e.g. self or cross)"));
    h.layer = r.integer(QStringLiteral("layer"), 0, kMaxIndex).value_or(-1);
    h.head = r.integer(QStringLiteral("head"), 0, kMaxIndex).value_or(-1);
    if (h.layer < 0) r.fail(QStringLiteral("layer"), QStringLiteral("missing"));
    if (h.head < 0) r.fail(QStringLiteral("head"), QStringLiteral("missing"));
    r.done();
    return h;
}

// [lower, upper] of a zoom axis: two finite numbers, lower < upper.
void zoomRange(WorkspaceReader& r, const QString& field, double& lower, double& upper) {
    const auto a = r.array(field);
    if (!a) r.fail(field, QStringLiteral("missing ([lower, upper])"));
    if (a->size() != 2 || !a->at(0).isDouble() || !a->at(1).isDouble())
        r.fail(field, QStringLiteral("expected [lower, upper]"));
    lower = r.checked(field, a->at(0).toDouble(), -1e9, 1e9);
    upper = r.checked(field, a->at(1).toDouble(), -1e9, 1e9);
    if (!(lower < upper)) r.fail(field, QStringLiteral("lower must be below upper"));
}

}  // namespace

QString labVariantKey(attnscope::LabVariant variant) { return kVariants.value(int(variant)); }
QString featureMapKey(attnscope::FeatureMap map) { return kFeatureMaps.value(int(map)); }

Workspace parseWorkspace(const QByteArray& bytes, const QString& name, const QString& folder) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError)
        throw attnscope::Error(
                (name +
                 QStringLiteral(": not a workspace file: %1 at byte %2").arg(error.errorString()).arg(error.offset))
                        .toStdString());
    if (!doc.isObject())
        throw attnscope::Error((name + QStringLiteral(": not a workspace file: expected a JSON object")).toStdString());
    WorkspaceReader r(doc.object(), name, QString());
    if (r.string(QStringLiteral("format")) != QString::fromLatin1(kFormat))
        r.fail(QStringLiteral("format"), QStringLiteral("expected \"%1\"").arg(QString::fromLatin1(kFormat)));
    const auto version = r.integer(QStringLiteral("version"), 1, kMaxIndex);
    if (!version) r.fail(QStringLiteral("version"), QStringLiteral("missing"));
    if (*version > Workspace::kVersion)
        r.fail(QStringLiteral("version"),
               QStringLiteral("%1 was written by a newer AttnScope; this one reads version %2")
                       .arg(*version)
                       .arg(Workspace::kVersion));
    Workspace w;
    w.model = resolved(r.string(QStringLiteral("model")).value_or(QString()), folder);
    if (w.model.isEmpty()) r.fail(QStringLiteral("model"), QStringLiteral("missing (a model folder or builtin:NAME)"));
    if (auto d = r.choice(QStringLiteral("device"), kDevices)) w.device = kDevices[*d];

    if (auto in = r.object(QStringLiteral("input"))) {
        w.input.text = in->string(QStringLiteral("text")).value_or(QString());
        w.input.idsMode = in->boolean(QStringLiteral("ids")).value_or(false);
        w.input.target = in->string(QStringLiteral("target")).value_or(QString());
        w.input.image = resolved(in->string(QStringLiteral("image")).value_or(QString()), folder);
        in->done();
    }
    if (auto s = r.object(QStringLiteral("selection"))) {
        w.selection.block = s->string(QStringLiteral("block")).value_or(QString());
        w.selection.layer = s->integer(QStringLiteral("layer"), 0, kMaxIndex).value_or(0);
        w.selection.head = s->integer(QStringLiteral("head"), 0, kMaxIndex).value_or(0);
        s->done();
    }
    w.temperature = r.number(QStringLiteral("temperature"), 0.1, 10.0).value_or(1.0);
    if (auto in = r.object(QStringLiteral("inside_model"))) {
        w.inside.enabled = in->boolean(QStringLiteral("enabled")).value_or(false);
        if (auto layers = in->array(QStringLiteral("layers")))
            for (const QJsonValue& v : *layers)
                w.inside.layers.push_back(in->integerOf(QStringLiteral("layers"), v, 0, kMaxIndex));
        in->done();
    }
    if (auto lab = r.object(QStringLiteral("lab"))) {
        if (auto v = lab->choice(QStringLiteral("variant"), kVariants)) w.lab.variant = attnscope::LabVariant(*v);
        if (auto f = lab->choice(QStringLiteral("feature_map"), kFeatureMaps))
            w.lab.featureMap = attnscope::FeatureMap(*f);
        w.lab.features = lab->integer(QStringLiteral("features"), 1, 8192).value_or(256);  // the Lab dock's ranges
        w.lab.gate = lab->number(QStringLiteral("gate"), 0.0, 1.0).value_or(0.5);
        w.lab.fitWidth = lab->integer(QStringLiteral("fit_width"), 1, 512).value_or(32);
        w.lab.fitSteps = lab->integer(QStringLiteral("fit_steps"), 1, 10000).value_or(300);
        w.lab.knockout = knockoutSpec(*lab);
        if (auto fit = lab->object(QStringLiteral("fit"))) {
            Workspace::Lab::Fit f;
            f.temperature = fit->number(QStringLiteral("temperature"), 0.1, 10.0).value_or(1.0);
            const attnscope::HeadRef h = headRef(*fit);
            f.block = QString::fromStdString(h.block);
            f.layer = h.layer;
            f.head = h.head;
            w.lab.fit = f;
        }
        lab->done();
    }
    if (auto masked = r.array(QStringLiteral("masked_heads"))) {
        for (int i = 0; i < masked->size(); ++i) {
            const QString field = QStringLiteral("masked_heads[%1]").arg(i);
            if (!masked->at(i).isObject()) r.fail(field, QStringLiteral("expected {\"block\", \"layer\", \"head\"}"));
            WorkspaceReader h(masked->at(i).toObject(), r.file(), field);
            w.masked.push_back(headRef(h));
        }
    }
    if (auto c = r.object(QStringLiteral("colors"))) {
        if (auto name = c->string(QStringLiteral("colormap"))) {
            const auto map = parseColormap(*name);
            if (!map)
                c->fail(QStringLiteral("colormap"),
                        QStringLiteral("unknown '%1' (use %2)").arg(*name, colormapNames().join(QStringLiteral(", "))));
            w.colormap = *map;
        }
        if (auto s = c->choice(QStringLiteral("scale"), kScales)) w.scale = ColorScaleType(*s);
        c->done();
    }
    if (auto v = r.object(QStringLiteral("view"))) {
        if (auto t = v->choice(QStringLiteral("tab"), kTabs)) w.view.tab = kTabs[*t];
        w.view.rawTokens = v->boolean(QStringLiteral("raw_tokens")).value_or(false);
        if (auto z = v->object(QStringLiteral("zoom"))) {
            Workspace::View::Zoom zoom;
            zoomRange(*z, QStringLiteral("keys"), zoom.keyLower, zoom.keyUpper);
            zoomRange(*z, QStringLiteral("queries"), zoom.queryLower, zoom.queryUpper);
            z->done();
            w.view.zoom = zoom;
        }
        w.view.compareTask = v->string(QStringLiteral("compare_task")).value_or(QString());
        if (auto m = v->choice(QStringLiteral("metrics_view"), kMetricsViews)) w.view.metricsView = kMetricsViews[*m];
        if (auto p = v->choice(QStringLiteral("pooling"), kPoolings)) w.view.pooling = kPoolings[*p];
        v->done();
    }
    if (auto f = r.object(QStringLiteral("figure"))) {
        w.figure.widthIn = f->number(QStringLiteral("width_in"), 1.0, 20.0).value_or(3.25);  // writeFigure's limits
        w.figure.dpi = f->integer(QStringLiteral("dpi"), 50, 2400).value_or(300);
        f->done();
    }
    if (auto win = r.object(QStringLiteral("window"))) {
        w.window.geometry = win->base64(QStringLiteral("geometry"));
        w.window.state = win->base64(QStringLiteral("state"));
        win->done();
    }
    if (auto m = r.object(QStringLiteral("map_source"))) {
        if (auto name = m->string(QStringLiteral("source"))) {
            try {
                w.source.source = attnscope::parseMapSource(name->toStdString());
            } catch (const attnscope::Error& e) {
                m->fail(QStringLiteral("source"), QString::fromUtf8(e.what()));
            }
        }
        if (auto t = m->integer(QStringLiteral("target"), 0, std::numeric_limits<int>::max())) w.source.target = *t;
        m->done();
    }
    readViewSections(r, w);
    readCausalSection(r, w);
    readLongSection(r, w);
    r.done();
    return w;
}

Workspace readWorkspace(const QString& path) {
    // core's input rule, before QFile: a FIFO would hang the open, /dev/zero read without end.
    attnscope::refuseNonRegularFile(QFile::encodeName(path).toStdString());
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw attnscope::Error(
                (path + QStringLiteral(": cannot open the workspace (%1)").arg(file.errorString())).toStdString());
    constexpr qint64 kMaxBytes = 16 << 20;  // a workspace is a few kB; refuse what is clearly not one
    if (file.size() > kMaxBytes)
        throw attnscope::Error((path + QStringLiteral(": not a workspace file (over 16 MB)")).toStdString());
    return parseWorkspace(file.readAll(), path, QFileInfo(path).absolutePath());
}

QByteArray workspaceJson(const Workspace& w) {
    QJsonObject o;
    o.insert(QStringLiteral("format"), QString::fromLatin1(kFormat));
    o.insert(QStringLiteral("version"), Workspace::kVersion);
    o.insert(QStringLiteral("model"), w.model);
    o.insert(QStringLiteral("device"), w.device);
    QJsonObject input{{QStringLiteral("text"), w.input.text}, {QStringLiteral("ids"), w.input.idsMode}};
    if (!w.input.target.isEmpty()) input.insert(QStringLiteral("target"), w.input.target);
    if (!w.input.image.isEmpty()) input.insert(QStringLiteral("image"), w.input.image);
    o.insert(QStringLiteral("input"), input);
    QJsonObject selection{{QStringLiteral("layer"), w.selection.layer}, {QStringLiteral("head"), w.selection.head}};
    if (!w.selection.block.isEmpty()) selection.insert(QStringLiteral("block"), w.selection.block);
    o.insert(QStringLiteral("selection"), selection);
    o.insert(QStringLiteral("temperature"), w.temperature);
    QJsonArray layers;
    for (int l : w.inside.layers) layers.append(l);
    o.insert(QStringLiteral("inside_model"),
             QJsonObject{{QStringLiteral("enabled"), w.inside.enabled}, {QStringLiteral("layers"), layers}});
    QJsonObject lab{{QStringLiteral("variant"), labVariantKey(w.lab.variant)},
                    {QStringLiteral("feature_map"), featureMapKey(w.lab.featureMap)},
                    {QStringLiteral("features"), w.lab.features},
                    {QStringLiteral("gate"), w.lab.gate},
                    {QStringLiteral("fit_width"), w.lab.fitWidth},
                    {QStringLiteral("fit_steps"), w.lab.fitSteps}};
    if (!w.lab.knockout.isEmpty()) lab.insert(QStringLiteral("knockout"), w.lab.knockout);
    if (w.lab.fit)
        lab.insert(QStringLiteral("fit"), QJsonObject{{QStringLiteral("block"), w.lab.fit->block},
                                                      {QStringLiteral("layer"), w.lab.fit->layer},
                                                      {QStringLiteral("head"), w.lab.fit->head},
                                                      {QStringLiteral("temperature"), w.lab.fit->temperature}});
    o.insert(QStringLiteral("lab"), lab);
    QJsonArray masked;
    for (const auto& h : w.masked)
        masked.append(QJsonObject{{QStringLiteral("block"), QString::fromStdString(h.block)},
                                  {QStringLiteral("layer"), h.layer},
                                  {QStringLiteral("head"), h.head}});
    o.insert(QStringLiteral("masked_heads"), masked);
    if (w.source.source != attnscope::MapSource::Weights || w.source.target) {
        QJsonObject source{{QStringLiteral("source"), QString::fromLatin1(attnscope::sourceName(w.source.source))}};
        if (w.source.target) source.insert(QStringLiteral("target"), qint64(*w.source.target));
        o.insert(QStringLiteral("map_source"), source);
    }
    o.insert(QStringLiteral("colors"), QJsonObject{{QStringLiteral("colormap"), colormapName(w.colormap)},
                                                   {QStringLiteral("scale"), kScales.value(int(w.scale))}});
    QJsonObject view{{QStringLiteral("tab"), w.view.tab},
                     {QStringLiteral("raw_tokens"), w.view.rawTokens},
                     {QStringLiteral("metrics_view"), w.view.metricsView},
                     {QStringLiteral("pooling"), w.view.pooling}};
    if (!w.view.compareTask.isEmpty()) view.insert(QStringLiteral("compare_task"), w.view.compareTask);
    if (w.view.zoom)
        view.insert(
                QStringLiteral("zoom"),
                QJsonObject{{QStringLiteral("keys"), QJsonArray{w.view.zoom->keyLower, w.view.zoom->keyUpper}},
                            {QStringLiteral("queries"), QJsonArray{w.view.zoom->queryLower, w.view.zoom->queryUpper}}});
    o.insert(QStringLiteral("view"), view);
    o.insert(QStringLiteral("figure"),
             QJsonObject{{QStringLiteral("width_in"), w.figure.widthIn}, {QStringLiteral("dpi"), w.figure.dpi}});
    writeViewSections(w, o);
    writeCausalSection(w, o);
    writeLongSection(w, o);
    QJsonObject window;
    if (!w.window.geometry.isEmpty())
        window.insert(QStringLiteral("geometry"), QString::fromLatin1(w.window.geometry.toBase64()));
    if (!w.window.state.isEmpty())
        window.insert(QStringLiteral("state"), QString::fromLatin1(w.window.state.toBase64()));
    if (!window.isEmpty()) o.insert(QStringLiteral("window"), window);
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

void writeWorkspace(const Workspace& workspace, const QString& path) {
    const QByteArray bytes = workspaceJson(workspace);
    attnscope::writeFileAtomically(path.toStdString(), std::string_view(bytes.constData(), std::size_t(bytes.size())));
}
