#include "controllers/causalcontroller.h"
#include "controllers/decoderonly.h"

#include "controllers/sectionsync.h"
#include "figure/headfigure.h"
#include "figure/labels.h"
#include "panels/causalpanel.h"
#include "panels/exportdialog.h"
#include "panels/idscheck.h"
#include "services/session.h"
#include "services/tokenids.h"
#include "state/recentfiles.h"
#include "state/viewstate.h"

#include "attnscope/runtime/progress.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>

#include <cmath>

namespace {

const QStringList kWhatKeys = {QStringLiteral("heads"), QStringLiteral("resid"), QStringLiteral("attn_out"),
                               QStringLiteral("mlp_out")};  // attnscope::PatchWhat's order

}  // namespace

CausalController::CausalController(ViewState* state, Session* session, QObject* parent)
    : QObject(parent), state_(state), session_(session) {
    service_ = new CausalService(this);
    panel_ = new CausalPanel;
    panel_->setObjectName(QStringLiteral("causalPanel"));
    setApplicable(false, tr("Open a decoder-only language model (GPT-2, Llama, Gemma, …) to use the Causal tab."));

    connect(session, &Session::modelLoaded, this, &CausalController::onModelLoaded);
    connect(session, &Session::attentionFileLoaded, this, [this] {
        clearResults(true, true, true);
        refusedByModel_ = true;
        setApplicable(false, tr("An attention file has no model to run: the Causal tab needs a decoder-only "
                                "language model."));
    });
    connect(session, &Session::traceReady, this, &CausalController::onTraceReady);
    connect(state, &ViewState::viewChanged, this, &CausalController::onTabChanged);
    connect(panel_->runButton(), &QPushButton::clicked, this, &CausalController::run);
    connect(panel_->patchButton(), &QPushButton::clicked, this, &CausalController::patch);
    connect(panel_->cancelButton(), &QPushButton::clicked, this, [this] {
        service_->cancel(CausalJob::Patch);
        panel_->setJob({});
        panel_->statusLabel()->setText(tr("Cancelled."));
        panel_->patchView()->clear(tr("Patching was cancelled: press Patch to run it again."));
    });
    // The tab's settings are the ViewState's (the workspace is its serialisation), as the other
    // tabs' are: the panel writes them and follows them (controllers/sectionsync.h).
    const auto write = syncSection<Workspace::Causal>(
            state, panel_, this, &ViewState::TabSettings::causal, [this] { return settings(); },
            [this](const Workspace::Causal& s) { followSettings(s); });
    for (auto signal : {&CausalPanel::settingsChanged, &CausalPanel::tokensChanged})
        connect(panel_, signal, this, write);
    connect(panel_, &CausalPanel::settingsChanged, this, [this] {
        const bool had = !lens_.lens.topIds.empty();
        clearResults(true, true, true);
        if (had && applicable_) run();  // recomputed for the new settings
    });
    connect(panel_, &CausalPanel::tokensChanged, this, [this] {
        if (panel_->answer() == wantedAnswer_ && panel_->wrong() == wantedWrong_) return;
        wantedAnswer_ = panel_->answer();
        wantedWrong_ = panel_->wrong();
        clearResults(false, true, true);
        requestDla();
    });
    connect(panel_->corruptEdit(), &QLineEdit::editingFinished, this, [this] { clearResults(false, false, true); });
    connect(panel_->whatCombo(), &QComboBox::currentIndexChanged, this, [this] { clearResults(false, false, true); });
    connect(panel_->methodCombo(), &QComboBox::currentIndexChanged, this, [this] { clearResults(false, false, true); });
    connect(service_, &CausalService::lensReady, this, &CausalController::onLens);
    connect(service_, &CausalService::dlaReady, this, &CausalController::onDla);
    connect(service_, &CausalService::patchReady, this, &CausalController::onPatch);
    connect(service_, &CausalService::progress, this, [this](CausalJob job, int permille) {
        if (job == CausalJob::Patch) panel_->setJobProgress(permille);
    });
    connect(panel_->dlaView(), &SignedMapView::cellClicked, this, &CausalController::openHead);
    connect(panel_->patchView(), &SignedMapView::cellClicked, this, [this](int row, int col) {
        if (patch_.request.what == attnscope::PatchWhat::Heads) openHead(row, col);
    });
    connect(panel_->lensView(), &LensView::exportRequested, this, [this] { exportFigure(0); });
    connect(panel_->dlaView(), &SignedMapView::exportRequested, this, [this] { exportFigure(1); });
    connect(panel_->patchView(), &SignedMapView::exportRequested, this, [this] { exportFigure(2); });
}

CausalController::~CausalController() { shutdown(); }

void CausalController::shutdown() {
    service_->cancelAll();
    service_->waitForWorkers();
}

bool CausalController::tabShown() const { return state_->view().tab == QLatin1String("causal"); }

void CausalController::setApplicable(bool applicable, const QString& reason) {
    applicable_ = applicable;
    refusal_ = applicable ? QString() : reason;
    panel_->setApplicable(applicable, refusal_);
    if (applicable && session_->model() && !session_->hasTokenizer())
        lockToIds(panel_->idsCheck(), tr("This model has no tokenizer: its inputs are token ids"));
}

bool CausalController::idsMode() const { return panel_->idsCheck()->isChecked() || !session_->hasTokenizer(); }

// What the model's info settles at once; decoders are decided by their first trace (causal self-attention).
void CausalController::onModelLoaded(const attnscope::ModelInfo& info) {
    service_->cancelAll();
    panel_->setJob({});
    clearResults(true, true, true);
    wantedAnswer_.reset();  // ids of another vocabulary
    wantedWrong_.reset();
    const auto refusal = decoderOnlyRefusal(
            info,
            tr("The built-in models are not language models: the Causal tab needs a decoder-only language model "
               "(GPT-2, Llama, Gemma, …)."),
            tr("the causal analyses"));
    refusedByModel_ = refusal.has_value();
    setApplicable(false, refusal.value_or(tr("Waiting for the model's first run…")));
}

void CausalController::onTraceReady() {
    const auto trace = session_->trace();
    if (!trace || !session_->model()) return;
    if (!refusedByModel_) {
        const QString why =
                decoderOnlyTraceRefusal(*trace, session_->model()->info().family, tr("the causal analyses"));
        setApplicable(why.isEmpty(), why);
    }
    if (!panel_->cleanEdit()->text().trimmed().isEmpty()) return;  // the clean input is its own
    const bool had = !lens_.lens.topIds.empty();
    clearResults(true, true, true);  // of the previous main input
    if (applicable_ && (had || tabShown())) run();
}

void CausalController::onTabChanged() {
    if (tabShown() && applicable_ && lens_.lens.topIds.empty() && !service_->isRunning(CausalJob::Lens)) run();
}

CausalInput CausalController::cleanInput() const {
    const QString typed = panel_->cleanEdit()->text().trimmed();
    if (!typed.isEmpty()) return {typed, idsMode()};
    if (const auto trace = session_->trace()) return {formatTokenIds(trace->ids()), true};  // the main input as run
    return {state_->input().text, state_->input().idsMode};
}

void CausalController::run() {
    if (!applicable_ || !session_->model()) return;
    panel_->statusLabel()->setText(tr("Running the clean input…"));
    service_->requestLens(session_->model(), cleanInput(), panel_->positionSpin()->value());
}

void CausalController::onLens(const LensResult& r) {
    if (!r.error.isEmpty()) {
        clearResults(true, true, false);
        panel_->lensView()->clear(r.error);
        panel_->dlaView()->clear(r.error);
        panel_->statusLabel()->setText(tr("The clean run failed."));
        return;
    }
    lens_ = r;
    const attnscope::LogitLens& l = r.lens;
    panel_->lensView()->setFigure(lensFigure(l, r.topTexts, toQtStrings(r.trace->displayTokens()),
                                             modelDisplayName(session_->modelSpec()), state_->colormap()));
    // The answer boxes offer the model's own top predictions at P (the last row).
    const std::vector<std::int64_t> ids = lensPredictions(l, r.position);
    QStringList labels;
    std::vector<float> probs;
    for (int k = 0; k < l.k; ++k) {
        const std::size_t i = std::size_t(((l.rows - 1) * l.tokens + r.position) * l.k + k);
        labels << r.topTexts.value(int(i));
        probs.push_back(std::exp(l.topLogProbs[i]));
    }
    if (!wantedAnswer_ && !ids.empty()) wantedAnswer_ = ids[0];
    if (!wantedWrong_ && ids.size() > 1) wantedWrong_ = ids[1];
    panel_->offerTokens(ids, labels, probs, wantedAnswer_, wantedWrong_);
    panel_->statusLabel()->setText(tr("Clean run: %1 tokens, P = %2.").arg(l.tokens).arg(r.position));
    requestDla();
}

void CausalController::requestDla() {
    if (!lens_.trace) return;
    if (!lens_.dlaRefusal.isEmpty()) {
        panel_->dlaView()->clear(lens_.dlaRefusal);
        return;
    }
    const auto answer = panel_->answer();
    if (!answer) {
        panel_->dlaView()->clear(tr("Choose the answer T (a prediction or a vocabulary id)."));
        return;
    }
    service_->requestDla(lens_.trace, *answer, panel_->wrong());
}

void CausalController::onDla(const DlaResult& r) {
    if (r.trace != lens_.trace) return;
    if (!r.error.isEmpty()) {
        dla_ = {};
        panel_->dlaView()->clear(r.error);
        return;
    }
    dla_ = r;
    const auto& model = *session_->model();
    panel_->dlaView()->setFigure(dlaFigure(r.dla, vocabularyLabels(model, {r.token}).value(0),
                                           r.minus ? vocabularyLabels(model, {*r.minus}).value(0) : QString()));
}

void CausalController::patch() {
    if (!applicable_ || !session_->model()) return;
    const QString corrupt = panel_->corruptEdit()->text().trimmed();
    const auto answer = panel_->answer();
    if (corrupt.isEmpty() || !answer) {
        panel_->patchView()->clear(corrupt.isEmpty()
                                           ? tr("Give the corrupt input first (as many tokens as the clean one).")
                                           : tr("Choose the answer T first (Run offers the predictions)."));
        return;
    }
    attnscope::PatchRequest q;
    q.what = panel_->what();
    q.token = *answer;
    q.minus = panel_->wrong();
    q.position = panel_->positionSpin()->value();
    q.attribution = panel_->attribution();
    patch_ = {};
    panel_->patchView()->clear(tr("Patching…"));
    panel_->setJob(tr("Patching %1 (%2)…").arg(patchWhatName(q.what), q.attribution ? tr("attribution") : tr("exact")));
    service_->requestPatch(session_->model(), cleanInput(), {corrupt, idsMode()}, q);
}

void CausalController::onPatch(const PatchJobResult& r) {
    panel_->setJob({});
    if (!r.error.isEmpty()) {
        patch_ = r;                           // its error; no scores
        panel_->patchView()->clear(r.error);  // the undefined case's one line among them
        panel_->statusLabel()->setText(tr("Patching failed."));
        return;
    }
    patch_ = r;
    panel_->patchView()->setFigure(patchFigure(r.result, r.request.what, r.request.attribution, r.tokens));
    panel_->statusLabel()->setText(tr("Patched in %1.").arg(formatDuration(r.ms)));
}

void CausalController::clearResults(bool lens, bool dla, bool patch) {
    if (lens) {
        service_->cancel(CausalJob::Lens);
        lens_ = {};
        panel_->lensView()->clear(tr("Run the clean input to see its logit lens."));
    }
    if (dla || lens) {
        service_->cancel(CausalJob::Dla);
        dla_ = {};
        panel_->dlaView()->clear(tr("Direct logit attribution shows after Run, for the answer chosen."));
    }
    if (patch || lens) {
        service_->cancel(CausalJob::Patch);
        panel_->setJob({});
        patch_ = {};
        panel_->patchView()->clear(tr("Give a corrupt input of the clean one's length and press Patch."));
    }
}

void CausalController::openHead(int layer, int head) {
    const auto trace = session_->trace();
    if (!trace || trace->blocks().empty()) return;
    state_->selectByName(QString::fromStdString(trace->blocks().front().name), layer, head);
    state_->setTab(QStringLiteral("explore"));
    emit status(tr("Layer %1 head %2 in Explore").arg(layer).arg(head), 4000);
}

Workspace::Causal CausalController::settings() const {
    Workspace::Causal s;
    s.clean = panel_->cleanEdit()->text();
    s.corrupt = panel_->corruptEdit()->text();
    s.ids = panel_->idsCheck()->isChecked();
    s.answer = panel_->answer();
    s.wrong = panel_->wrong();
    s.position = panel_->positionSpin()->value();
    s.what = kWhatKeys.value(int(panel_->what()));
    s.attribution = panel_->attribution();
    return s;
}

// The state's settings put on the panel (a workspace being opened); the results are of the old ones.
void CausalController::followSettings(const Workspace::Causal& s) {
    {
        const QSignalBlocker b0(panel_), b1(panel_->whatCombo()), b2(panel_->methodCombo());
        panel_->cleanEdit()->setText(s.clean);
        panel_->corruptEdit()->setText(s.corrupt);
        panel_->idsCheck()->setChecked(s.ids);
        panel_->positionSpin()->setValue(s.position);
        panel_->setWhat(attnscope::PatchWhat(std::max(0, int(kWhatKeys.indexOf(s.what)))));
        panel_->methodCombo()->setCurrentIndex(s.attribution ? 1 : 0);
        wantedAnswer_ = s.answer;
        wantedWrong_ = s.wrong;
        panel_->setAnswer(s.answer);
        panel_->setWrong(s.wrong);
    }
    clearResults(true, true, true);
    if (applicable_ && tabShown()) run();
}

ExportDialog* CausalController::exportFigure(int which) {
    const PaintedFigure figure = which == 0   ? panel_->lensView()->exportable()
                                 : which == 1 ? panel_->dlaView()->exportable()
                                              : panel_->patchView()->exportable();
    if (!figure) {
        QMessageBox::information(panel_->window(), tr("There is nothing to export."),
                                 tr("This result is not shown yet: run the Causal tab's analysis first."));
        return nullptr;
    }
    static const char* names[] = {"lens", "dla", "patch"};
    QString name = QFileInfo(session_->modelSpec()).fileName() + QLatin1Char('_') +
                   QLatin1String(names[std::clamp(which, 0, 2)]);
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
    const QString folder = recent::exportFolder();
    auto* dialog = new ExportDialog(Figure{}, QDir(folder).filePath(name + QStringLiteral(".pdf")), panel_->window());
    dialog->setObjectName(QStringLiteral("exportCausalDialog"));
    dialog->setWindowTitle(tr("Export Causal Figure"));
    dialog->setPainted(figure);
    dialog->setWidthInches(ExportDialog::kTwoColumnIn);
    connect(dialog, &ExportDialog::exported, this,
            [this](const QString& path) { emit status(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 8000); });
    dialog->open();
    return dialog;
}
