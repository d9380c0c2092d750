#include "controllers/longcontroller.h"
#include "controllers/decoderonly.h"

#include "controllers/sectionsync.h"

#include "figure/labels.h"
#include "panels/exportdialog.h"
#include "panels/idscheck.h"
#include "panels/longpanel.h"
#include "services/session.h"
#include "state/viewstate.h"
#include "views/figurecanvas.h"
#include "views/headmetricmap.h"
#include "views/heatmapview.h"

#include "attnscope/runtime/error.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardPaths>

#include <algorithm>
#include <cmath>

namespace {

// "256, 512,1024" -> numbers; throws attnscope::Error naming the box and the entry.
template <typename T>
std::vector<T> parseList(const QString& text, const char* box) {
    std::vector<T> out;
    for (const QString& part : text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const T v = std::is_integral_v<T> ? T(part.toInt(&ok)) : T(part.toDouble(&ok));
        if (!ok)
            throw attnscope::Error(std::string(box) + ": '" + part.toStdString() + "' is not " +
                                   (std::is_integral_v<T> ? "a whole number" : "a number"));
        out.push_back(v);
    }
    if (out.empty()) throw attnscope::Error(std::string(box) + ": nothing given");
    return out;
}

QString runName(const attnscope::NeedleRun& run) {
    return QObject::tr("L %1 · depth %2 · %3")
            .arg(run.length)
            .arg(run.depth, 0, 'g', 3)
            .arg(run.success ? QObject::tr("retrieved") : QObject::tr("missed"));
}

}  // namespace

LongController::LongController(ViewState* state, Session* session, QObject* parent)
    : QObject(parent), state_(state), session_(session) {
    service_ = new LongService(this);
    panel_ = new LongPanel;
    panel_->setObjectName(QStringLiteral("longPanel"));
    setApplicable(false,
                  tr("Open a decoder-only language model (GPT-2, Llama, Gemma, …) to use the Long context tab."));

    connect(session, &Session::modelLoaded, this, &LongController::onModelLoaded);
    connect(session, &Session::attentionFileLoaded, this, [this] {
        service_->cancelAll();
        clearScan({});
        clearEvict({});
        refusedByModel_ = true;
        setApplicable(false, tr("An attention file has no model to run: the Long context tab needs a decoder-only "
                                "language model."));
    });
    connect(session, &Session::traceReady, this, &LongController::onTraceReady);
    connect(panel_->scanButton(), &QPushButton::clicked, this, &LongController::scan);
    connect(panel_->evictButton(), &QPushButton::clicked, this, &LongController::evict);
    connect(panel_->scanCancelButton(), &QPushButton::clicked, this, [this] {
        service_->cancel(LongJob::Scan);
        panel_->setScanJob({});
        panel_->scanStatus()->setText(tr("Cancelled."));
    });
    connect(panel_->evictCancelButton(), &QPushButton::clicked, this, [this] {
        service_->cancel(LongJob::Evict);
        panel_->setEvictJob({});
        panel_->evictStatus()->setText(tr("Cancelled."));
    });
    connectSettings(state);
    connect(service_, &LongService::scanReady, this, &LongController::onScan);
    connect(service_, &LongService::rowsReady, this, &LongController::onRows);
    connect(service_, &LongService::evictReady, this, &LongController::onEvict);
    connect(service_, &LongService::mapReady, this, &LongController::onMap);
    connect(service_, &LongService::progress, this, [this](LongJob job, int permille) {
        if (job == LongJob::Scan) LongPanel::setJobProgress(panel_->scanProgress(), permille);
        if (job == LongJob::Evict) LongPanel::setJobProgress(panel_->evictProgress(), permille);
    });
    connect(panel_->retrievalMap(), &HeadMetricMap::headChosen, this, [this](int layer, int head) {
        const QSignalBlocker b0(panel_->layerSpin()), b1(panel_->headSpin()), b2(panel_->mapWhatCombo());
        panel_->layerSpin()->setValue(layer);
        panel_->headSpin()->setValue(head);
        panel_->mapWhatCombo()->setCurrentIndex(0);
        showLongMap();
    });
    connect(panel_->mapWhatCombo(), &QComboBox::currentIndexChanged, this, &LongController::showLongMap);
    connect(panel_->runCombo(), &QComboBox::currentIndexChanged, this, &LongController::showLongMap);
    connect(panel_->layerSpin(), &QSpinBox::valueChanged, this, &LongController::showLongMap);
    connect(panel_->headSpin(), &QSpinBox::valueChanged, this, &LongController::showLongMap);
    HeatmapView* map = panel_->longMap();
    connect(map, &HeatmapView::levelOfDetailWanted, this, [this](const attnscope::PoolRequest& request) {
        if (panel_->mapWhatCombo()->currentIndex() == 1 && evict_.result.prompt)
            service_->requestLevelOfDetail(evict_.result.prompt, panel_->layerSpin()->value(),
                                           panel_->headSpin()->value(), request);
    });
    connect(map, &HeatmapView::mapShown, this, &LongController::drawMarks);
    panel_->evictionCanvas()->paint = [this](QPainter& p, const QRectF& area) {
        paintEvictionFigure(p, evictionFigure_, area);
    };
    for (int which = 0; which < 4; ++which)
        connect(panel_->exportButton(which), &QPushButton::clicked, this, [this, which] { exportFigure(which); });
    const auto colors = [this] {
        panel_->retrievalMap()->setColormap(state_->colormap());
        for (HeatmapView* v : {panel_->successMap(), panel_->longMap()})
            v->setColoring(state_->colormap(), ColorScale{state_->scale()});
    };
    connect(state, &ViewState::colorsChanged, this, colors);
    colors();
}

// The settings' widgets: the haystack's file, the results they make out of date, and the
// ViewState (saved in workspaces), which they follow as the other tabs' do (controllers/sectionsync.h).
void LongController::connectSettings(ViewState* state) {
    connect(panel_->haystackFileButton(), &QPushButton::clicked, this, &LongController::chooseHaystackFile);
    connect(panel_, &LongPanel::scanSettingsChanged, this, [this] {
        if (!scan_.result.runs.empty()) clearScan(tr("The settings changed: Scan again."));
    });
    connect(panel_, &LongPanel::evictSettingsChanged, this, [this] {
        if (!evict_.result.tokensFull.empty()) clearEvict(tr("The settings changed: Run again."));
    });
    const auto write = syncSection<Workspace::LongContext>(
            state, panel_, this, &ViewState::TabSettings::longContext, [this] { return panel_->settings(); },
            [this](const Workspace::LongContext& s) { panel_->setSettings(s); });
    for (auto signal : {&LongPanel::scanSettingsChanged, &LongPanel::evictSettingsChanged})
        connect(panel_, signal, this, write);
}

LongController::~LongController() { shutdown(); }

void LongController::shutdown() {
    service_->cancelAll();
    service_->waitForWorkers();
}

void LongController::setApplicable(bool applicable, const QString& reason) {
    applicable_ = applicable;
    refusal_ = applicable ? QString() : reason;
    panel_->setApplicable(applicable, refusal_);
    if (applicable && session_->model() && !session_->hasTokenizer())
        lockToIds(panel_->idsCheck(), tr("This model has no tokenizer: the pieces are token ids"));
}

bool LongController::idsMode() const { return panel_->idsCheck()->isChecked() || !session_->hasTokenizer(); }

void LongController::onModelLoaded(const attnscope::ModelInfo& info) {
    service_->cancelAll();
    panel_->setScanJob({});
    panel_->setEvictJob({});
    clearScan({});
    clearEvict({});
    {
        const QSignalBlocker b0(panel_->layerSpin()), b1(panel_->headSpin());
        panel_->layerSpin()->setRange(0, std::max(0, info.layers - 1));
        panel_->headSpin()->setRange(0, std::max(0, info.heads - 1));
    }
    const auto refusal = decoderOnlyRefusal(
            info,
            tr("The built-in models are not language models: the Long context tab needs a decoder-only language "
               "model."),
            tr("needle scans and eviction what-ifs"));
    refusedByModel_ = refusal.has_value();
    setApplicable(false, refusal.value_or(tr("Waiting for the model's first run…")));
}

void LongController::onTraceReady() {
    const auto trace = session_->trace();
    if (!trace || !session_->model()) return;
    if (!refusedByModel_) {
        const QString why = decoderOnlyTraceRefusal(*trace, session_->model()->info().family,
                                                    tr("needle scans and eviction what-ifs"));
        setApplicable(why.isEmpty(), why);
    }
    // The what-if is of the main input: a new one makes it out of date.
    if (!evict_.result.tokensFull.empty() && evict_.result.prompt && evict_.result.prompt->ids() != trace->ids())
        clearEvict(tr("The main input changed: Run the what-if again."));
}

void LongController::scan() {
    if (!applicable_ || !session_->model()) return;
    NeedleInput in;
    in.haystack = panel_->haystackEdit()->toPlainText();
    in.needle = panel_->needleEdit()->text();
    in.question = panel_->questionEdit()->text();
    in.answer = panel_->answerEdit()->text();
    in.ids = idsMode();
    in.newTokens = panel_->scanTokensSpin()->value();
    try {
        in.lengths = parseList<int>(panel_->lengthsEdit()->text(), "Lengths");
        in.depths = parseList<double>(panel_->depthsEdit()->text(), "Depths");
    } catch (const attnscope::Error& e) {
        panel_->scanStatus()->setText(QString::fromUtf8(e.what()));
        return;
    }
    clearScan(tr("Scanning…"));
    panel_->setScanJob(tr("Scanning %1 lengths × %2 depths…").arg(in.lengths.size()).arg(in.depths.size()));
    service_->requestScan(session_->model(), in);
}

void LongController::onScan(const ScanJobResult& r) {
    panel_->setScanJob({});
    if (r.cancelled) return;
    if (!r.error.isEmpty()) {
        clearScan(r.error);
        panel_->scanStatus()->setText(tr("The scan failed: %1").arg(r.error));
        return;
    }
    scan_ = r;
    const attnscope::NeedleResult& n = r.result;
    const Figure success = needleSuccessFigure(n, r.options.lengths, r.options.depths);
    const FigurePanel& s = success.panels.front();
    panel_->successMap()->setMap(s.map, s.queryLabels, s.keyLabels, success.title);
    panel_->retrievalMap()->setValues(n.layers, n.heads, n.retrieval, tr("retrieval score"), QString());
    int successes = 0;
    {
        const QSignalBlocker quiet(panel_->runCombo());
        panel_->runCombo()->clear();
        for (const attnscope::NeedleRun& run : n.runs) {
            panel_->runCombo()->addItem(runName(run));
            successes += run.success ? 1 : 0;
        }
        // The first run that retrieved the needle (its rows show what the heads read).
        const auto first = std::find_if(n.runs.begin(), n.runs.end(), [](const auto& run) { return run.success; });
        panel_->runCombo()->setCurrentIndex(first == n.runs.end() ? 0 : int(first - n.runs.begin()));
    }
    const auto best = int(std::max_element(n.retrieval.begin(), n.retrieval.end()) - n.retrieval.begin());
    panel_->scanStatus()->setText(tr("%1 of %2 runs retrieved the needle; strongest retrieval head L%3 H%4 (%5) · %6")
                                          .arg(successes)
                                          .arg(n.runs.size())
                                          .arg(best / std::max(1, n.heads))
                                          .arg(best % std::max(1, n.heads))
                                          .arg(n.retrieval.empty() ? 0.0 : n.retrieval[std::size_t(best)], 0, 'g', 3)
                                          .arg(formatDuration(r.ms)));
    {
        const QSignalBlocker b0(panel_->layerSpin()), b1(panel_->headSpin()), b2(panel_->mapWhatCombo());
        panel_->layerSpin()->setValue(best / std::max(1, n.heads));
        panel_->headSpin()->setValue(best % std::max(1, n.heads));
        panel_->mapWhatCombo()->setCurrentIndex(0);
    }
    panel_->retrievalMap()->setSelected(panel_->layerSpin()->value(), panel_->headSpin()->value());
    showLongMap();
}

void LongController::showLongMap() {
    const int layer = panel_->layerSpin()->value(), head = panel_->headSpin()->value();
    panel_->retrievalMap()->setSelected(layer, head);
    panel_->runCombo()->setEnabled(panel_->mapWhatCombo()->currentIndex() == 0);
    clearMarks();
    if (panel_->mapWhatCombo()->currentIndex() == 0) {
        const int run = panel_->runCombo()->currentIndex();
        if (scan_.result.runs.empty() || run < 0) {
            panel_->longMap()->clear(tr("Scan, then click a retrieval head to see its rows over a run's context."));
            return;
        }
        requestRows(rows_.run == run && rows_.trace != nullptr);
        return;
    }
    if (!evict_.result.prompt) {
        panel_->longMap()->clear(tr("Run the eviction what-if to see the keys each kv head keeps."));
        return;
    }
    // The shape first (a long map draws its level of detail at once), then the exact values.
    const auto n = static_cast<int>(evict_.result.prompt->ids().size());
    HeatmapView* view = panel_->longMap();
    view->setLevelOfDetailEnabled(true);
    const int kv = kvHeadOf(head, evict_.result.prompt->blocks().front().heads, evict_.result.selection.kvHeads);
    marks_.assign(std::size_t(n), 0.0f);
    int kept = 0;
    for (int j = 0; j < n; ++j) {
        const auto at = (std::size_t(layer) * evict_.result.selection.kvHeads + kv) * std::size_t(n) + std::size_t(j);
        marks_[std::size_t(j)] = evict_.result.selection.kept[at] ? 1.0f : 0.0f;
        kept += evict_.result.selection.kept[at] ? 1 : 0;
    }
    QStringList labels;
    for (const auto& t : evict_.result.prompt->displayTokens()) labels << QString::fromStdString(t);
    view->setMap({n, n, {}}, labels, labels,
                 tr("%1 · layer %2 head %3 (kv head %4): %5 of %6 prompt keys kept, evicted ones shaded")
                         .arg(QString::fromStdString(attnscope::evictionPolicyName(evict_.options.policy)))
                         .arg(layer)
                         .arg(head)
                         .arg(kv)
                         .arg(kept)
                         .arg(n));
    service_->requestMap(evict_.result.prompt, layer, head);
}

void LongController::requestRows(bool sameRun) {
    const int run = panel_->runCombo()->currentIndex();
    const attnscope::NeedleRun& r = scan_.result.runs[std::size_t(run)];
    if (r.generated.empty()) {
        panel_->longMap()->clear(tr("This run generated no tokens."));
        return;
    }
    panel_->longMap()->clear(tr("Generating the run's rows…"));
    service_->requestRows(session_->model(), scan_.options, r, run, panel_->layerSpin()->value(),
                          panel_->headSpin()->value(), sameRun ? rows_.trace : nullptr);
}

void LongController::onRows(const RowsJobResult& r) {
    if (panel_->mapWhatCombo()->currentIndex() != 0 || r.run != panel_->runCombo()->currentIndex()) return;
    if (!r.error.isEmpty()) {
        rows_ = {};
        panel_->longMap()->clear(r.error);
        return;
    }
    rows_ = r;
    const attnscope::NeedleRun& run = scan_.result.runs[std::size_t(r.run)];
    const auto needle = static_cast<int>(scan_.options.needle.size());
    marks_.assign(std::size_t(r.rows.cols), 0.0f);
    for (int j = int(run.needleStart); j < int(run.needleStart) + needle && j < r.rows.cols; ++j)
        marks_[std::size_t(j)] = 1.0f;
    HeatmapView* view = panel_->longMap();
    view->setLevelOfDetailEnabled(false);  // a few rows: every cell drawn
    view->setMap(r.rows, r.rowLabels, r.keyLabels,
                 tr("Layer %1 head %2 · %3 · generated rows over %4 context tokens; the needle at %5–%6 framed")
                         .arg(r.layer)
                         .arg(r.head)
                         .arg(runName(run))
                         .arg(r.contextLength)
                         .arg(run.needleStart)
                         .arg(run.needleStart + needle - 1));
    // Zoomed to the needle with as much context around it as it is long (at least 24 keys).
    const int margin = std::max(needle, 12);
    MapZoom zoom = MapZoom::whole(r.rows.rows, r.rows.cols);
    zoom = zoom.toRect(double(std::max<std::int64_t>(0, run.needleStart - margin)), 0.0,
                       double(std::min<std::int64_t>(r.rows.cols - 1, run.needleStart + needle + margin)),
                       double(r.rows.rows - 1));
    view->setZoom(zoom);
    drawMarks();
}

void LongController::evict() {
    if (!applicable_ || !session_->model()) return;
    const auto trace = session_->trace();
    if (!trace) {
        panel_->evictStatus()->setText(tr("Run the main input first: the what-if runs on it."));
        return;
    }
    attnscope::EvictionOptions o;
    o.policy = panel_->policy();
    o.budget = panel_->budgetSpin()->value();
    o.recent = panel_->recentSpin()->value();
    o.window = panel_->windowSpin()->value();
    o.kernel = panel_->kernelSpin()->value();
    o.sinks = panel_->sinksSpin()->value();
    o.newTokens = panel_->evictTokensSpin()->value();
    try {
        attnscope::checkEvictionOptions(o, static_cast<std::int64_t>(trace->ids().size()));
    } catch (const attnscope::Error& e) {
        panel_->evictStatus()->setText(QString::fromUtf8(e.what()));
        return;
    }
    clearEvict(tr("Running the what-if…"));
    panel_->setEvictJob(tr("Generating %1 tokens with the full and the evicted cache…").arg(o.newTokens));
    service_->requestEvict(session_->model(), trace->ids(), o);
}

void LongController::onEvict(const EvictJobResult& r) {
    panel_->setEvictJob({});
    if (r.cancelled) return;
    if (!r.error.isEmpty()) {
        clearEvict(r.error);
        panel_->evictStatus()->setText(tr("The what-if failed: %1").arg(r.error));
        return;
    }
    evict_ = r;
    const attnscope::EvictionResult& e = r.result;
    EvictionFigure f;
    f.kl = e.klPerStep;
    for (std::size_t t = 0; t < e.tokensFull.size(); ++t) f.same.push_back(e.tokensFull[t] == e.tokensEvicted[t]);
    f.tokensFull = r.tokensFull;
    f.tokensEvicted = r.tokensEvicted;
    f.title = tr("%1, budget %2 of %3 prompt keys")
                      .arg(QString::fromStdString(attnscope::evictionPolicyName(r.options.policy)))
                      .arg(r.options.budget)
                      .arg(e.selection.n);
    f.notes << tr("agreement %1 over %2 steps · first difference %3")
                       .arg(e.agreement, 0, 'g', 3)
                       .arg(e.tokensFull.size())
                       .arg(e.firstDifference < 0 ? tr("none") : tr("at step %1").arg(e.firstDifference));
    f.notes << tr("full: %1").arg(r.tokensFull.join(QLatin1Char(' ')));
    f.notes << tr("evicted: %1").arg(r.tokensEvicted.join(QLatin1Char(' ')));
    evictionFigure_ = f;
    panel_->evictionMessage()->hide();
    panel_->evictionCanvas()->show();
    panel_->showPage(1);  // the figure is on the what-if's page
    panel_->evictionCanvas()->update();
    panel_->evictStatus()->setText(f.notes.front() + QStringLiteral(" · ") + formatDuration(r.ms));
    const QSignalBlocker quiet(panel_->mapWhatCombo());
    panel_->mapWhatCombo()->setCurrentIndex(1);
    showLongMap();
}

void LongController::onMap(const MapJobResult& r) {
    if (panel_->mapWhatCombo()->currentIndex() != 1 || r.trace != evict_.result.prompt ||
        r.layer != panel_->layerSpin()->value() || r.head != panel_->headSpin()->value())
        return;
    HeatmapView* view = panel_->longMap();
    if (!r.error.isEmpty()) {
        view->clear(r.error);
        return;
    }
    if (r.pooled)
        view->setLevelOfDetail(r.map, r.request);
    else if (view->usesLevelOfDetail())
        view->setValues(r.map);
    else {
        const QString title = view->title();
        view->setMap(r.map, view->queryLabels(), view->keyLabels(), title);
    }
}

void LongController::clearMarks() {
    for (QCPAbstractItem* item : items_) panel_->longMap()->plot()->removeItem(item);
    items_.clear();
    panel_->longMap()->plot()->replot(QCustomPlot::rpQueuedReplot);
}

// Needle: one frame around its keys over every row. Eviction: each run of evicted keys shaded.
void LongController::drawMarks() {
    clearMarks();
    HeatmapView* view = panel_->longMap();
    const auto& map = view->map();
    if (marks_.empty() || int(marks_.size()) != map.cols || map.rows <= 0) return;
    QCustomPlot* plot = view->plot();
    const bool needle = panel_->mapWhatCombo()->currentIndex() == 0;
    const float shaded = needle ? 1.0f : 0.0f;
    for (int j = 0; j < map.cols;) {
        if (marks_[std::size_t(j)] != shaded) {
            ++j;
            continue;
        }
        int end = j;
        while (end < map.cols && marks_[std::size_t(end)] == shaded) ++end;
        auto* rect = new QCPItemRect(plot);
        rect->setClipToAxisRect(true);
        rect->setLayer(QStringLiteral("overlay"));
        if (needle) {
            rect->setPen(QPen(QColor(0xff, 0x40, 0x20), 2.0));
            rect->setBrush(Qt::NoBrush);
        } else {
            rect->setPen(Qt::NoPen);
            rect->setBrush(QColor(255, 255, 255, 170));
        }
        rect->topLeft->setCoords(j - 0.5, -0.5);
        rect->bottomRight->setCoords(end - 0.5, map.rows - 0.5);
        items_.push_back(rect);
        j = end;
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void LongController::clearScan(const QString& message) {
    service_->cancel(LongJob::Scan);
    service_->cancel(LongJob::Rows);
    scan_ = {};
    rows_ = {};
    panel_->successMap()->clear(message.isEmpty() ? tr("Scan to see where the needle is retrieved.") : message);
    panel_->retrievalMap()->clear(tr("The retrieval heads show after a scan; click one to see its rows."));
    {
        const QSignalBlocker quiet(panel_->runCombo());
        panel_->runCombo()->clear();
    }
    if (panel_->mapWhatCombo()->currentIndex() == 0) {
        marks_.clear();
        clearMarks();
        panel_->longMap()->clear(tr("Click a retrieval head after a scan, or run the eviction what-if."));
    }
}

void LongController::clearEvict(const QString& message) {
    service_->cancel(LongJob::Evict);
    service_->cancel(LongJob::Map);
    evict_ = {};
    evictionFigure_ = {};
    panel_->evictionCanvas()->hide();
    panel_->evictionMessage()->setText(message.isEmpty() ? tr("Run the what-if to see KL and token agreement per step.")
                                                         : message);
    panel_->evictionMessage()->show();
    if (panel_->mapWhatCombo()->currentIndex() == 1) {
        marks_.clear();
        clearMarks();
        panel_->longMap()->clear(tr("Run the eviction what-if to see the keys each kv head keeps."));
    }
}
