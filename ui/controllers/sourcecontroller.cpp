#include "controllers/sourcecontroller.h"

#include "figure/sourceview.h"
#include "panels/sourcepicker.h"
#include "services/session.h"
#include "state/viewstate.h"

#include "attnscope/analysis/value_norm.h"
#include "attnscope/attention/score_terms.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/models/model.h"
#include "attnscope/tokenizer/tokenizer.h"

#include <QComboBox>

#include <iterator>

using attnscope::MapSource;

SourceController::SourceController(ViewState* state, Session* session, SourcePicker* picker, QObject* parent)
    : QObject(parent), state_(state), session_(session), picker_(picker), service_(new SourceService(this)) {
    connect(picker_, &SourcePicker::sourceChosen, this, [this](MapSource s) {
        if (!state_->setMapSource(s)) picker_->setSource(state_->mapSource());  // unavailable: back
    });
    connect(picker_, &SourcePicker::targetChosen, this,
            [this](std::optional<std::int64_t> t) { state_->setGradientTarget(t); });
    connect(state_, &ViewState::mapSourceChanged, this, &SourceController::onSourceChanged);
    connect(state_, &ViewState::unavailableSourcesChanged, this, [this] {
        std::vector<QString> reasons;
        for (MapSource s : attnscope::kMapSources) reasons.push_back(state_->unavailableReason(s));
        picker_->setUnavailable(reasons);
    });
    // The gradients follow the interventions too (masked heads, temperature inside the model).
    for (auto signal : {&ViewState::masksChanged, &ViewState::insideChanged})
        connect(state_, signal, this, [this] {
            if (attnscope::gradientSource(state_->mapSource())) requestGradients();
        });
    connect(session_, &Session::modelLoaded, this, &SourceController::onModelLoaded);
    connect(session_, &Session::attentionFileLoaded, this, &SourceController::onModelLoaded);
    connect(session_, &Session::traceReady, this, &SourceController::onTraceReady);
    connect(service_, &SourceService::gradientsReady, this, &SourceController::onGradients);
    onSourceChanged();
}

ShownSource SourceController::shown() const {
    ShownSource s;
    s.source = state_->mapSource();
    if (attnscope::gradientSource(s.source)) {
        s.of = session_->trace();
        if (gradients_ && gradients_->trace == s.of && gradients_->target == state_->gradientTarget())
            s.gradients = gradients_->maps;
    }
    return s;
}

void SourceController::waitForWorkers() { service_->waitForWorkers(); }

void SourceController::cancelGradients() {
    if (!service_->isBusy()) return;
    service_->cancel();
    waiting_ = tr("Cancelled: choose the source or the target again to compute it.");
    emit gradientsBusy(false);
    updateNote();
    emit shownChanged();
}

void SourceController::onModelLoaded() {
    gradients_.reset();
    rerunAskedFor_.reset();
    if (service_->isBusy()) emit gradientsBusy(false);
    service_->cancel();
    updateAvailability();
    updateTargets();
}

void SourceController::onTraceReady() {
    updateAvailability();
    updateTargets();
    onSourceChanged();
}

void SourceController::updateAvailability() {
    const auto model = session_->model();
    const bool builtin = session_->modelSpec().startsWith(QLatin1String("builtin:"));
    std::vector<QString> reasons;
    for (MapSource s : attnscope::kMapSources) reasons.push_back(sourceUnavailableReason(s, model.get(), builtin));
    state_->setUnavailableSources(std::move(reasons));
}

// The decoder's five most likely next tokens, or every class of a classifier.
void SourceController::updateTargets() {
    const auto model = session_->model();
    const auto trace = session_->trace();
    std::vector<std::pair<QString, std::int64_t>> choices;
    if (model && trace) {
        try {
            if (classTarget(*trace)) {
                const auto& labels = trace->classLabels();
                for (std::size_t i = 0; i < labels.size(); ++i)
                    choices.emplace_back(QString::fromStdString(labels[i]), std::int64_t(i));
            } else if (!trace->nextTokenLogits().empty()) {
                const auto tokenizer = session_->tokenizer();
                for (const auto& t : attnscope::nextTokenTop(*trace, *model, 5)) {
                    std::string label = t.label;
                    if (tokenizer && tokenizer->idToToken(t.id)) label = tokenizer->displayToken(t.id);
                    choices.emplace_back(tr("\u201c%1\u201d \u00b7 p %2")
                                                 .arg(QString::fromStdString(label))
                                                 .arg(t.probability, 0, 'f', 2),
                                         t.id);
                }
            }
        } catch (const std::exception&) {
            choices.clear();  // no outputs to list: the model's choice only
        }
    }
    picker_->setTargets(choices);
    picker_->setTarget(state_->gradientTarget());
}

void SourceController::onSourceChanged() {
    const MapSource source = state_->mapSource();
    picker_->setSource(source);
    picker_->setTarget(state_->gradientTarget());
    picker_->setTargetShown(attnscope::gradientSource(source));
    const bool values = sourceNeedsValues(source), terms = sourceNeedsTerms(source);
    session_->setCaptureValues(values);
    session_->setCaptureTerms(terms);
    waiting_.clear();
    const auto trace = session_->trace();
    const auto model = session_->model();
    const bool missing = trace && model && !trace->blocks().empty() &&
                         ((values && !attnscope::hasValues(*trace, 0)) ||
                          (terms && model->info().scoreTerms && attnscope::traceScoreTerms(*trace).empty()));
    if (missing && rerunAskedFor_ != trace) {
        rerunAskedFor_ = trace;  // once: a family that records none says so in the view instead
        emit rerunWanted();
    }
    if (attnscope::gradientSource(source)) {
        requestGradients();
    } else if (service_->isBusy()) {
        service_->cancel();
        emit gradientsBusy(false);
    }
    updateNote();
    emit shownChanged();
}

void SourceController::requestGradients() {
    const auto model = session_->model();
    const auto trace = session_->trace();
    if (!model || !trace || !state_->unavailableReason(state_->mapSource()).isEmpty()) return;
    if (gradients_ && gradients_->trace == trace && gradients_->target == state_->gradientTarget() &&
        !service_->isBusy())
        return;                     // these maps are there already
    attnscope::RunOptions options;  // as the lab's re-run: the maps of the model the views show
    if (state_->inside().enabled) {
        options.temperature = state_->temperature();
        options.temperatureLayers = state_->inside().layers;
    }
    options.maskHeads = state_->masks();
    gradients_.reset();
    waiting_ = tr("Computing %1: one forward and one backward pass through the model\u2026")
                       .arg(QString::fromUtf8(attnscope::sourceLabel(state_->mapSource())));
    service_->requestGradients(model, trace, session_->lastImage(), state_->gradientTarget(), options);
    emit gradientsBusy(true);
    updateNote();
    emit shownChanged();
}

void SourceController::onGradients(const GradientsResult& r) {
    gradients_ = std::make_shared<const GradientsResult>(r);
    waiting_ = r.error;
    emit gradientsBusy(false);
    updateNote();
    emit shownChanged();
}

void SourceController::updateNote() {
    const MapSource source = state_->mapSource();
    QString note;
    if (!attnscope::perHeadSource(source)) note = tr("One map per layer (heads combined): the head does not apply.");
    if (attnscope::gradientSource(source)) {
        if (gradients_ && gradients_->maps)
            note += (note.isEmpty() ? QString() : QStringLiteral(" ")) +
                    tr("Explains %1 (s = %2).")
                            .arg(QString::fromStdString(gradients_->maps->targetLabel).toHtmlEscaped())
                            .arg(gradients_->maps->score, 0, 'g', 4);
        else if (!waiting_.isEmpty())
            note += (note.isEmpty() ? QString() : QStringLiteral(" ")) + waiting_.toHtmlEscaped();
    }
    picker_->setNote(note);
}
