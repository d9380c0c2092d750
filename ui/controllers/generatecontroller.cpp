#include "controllers/generatecontroller.h"

#include "panels/generatepanel.h"
#include "panels/outputpanel.h"
#include "services/session.h"

#include "attnscope/runtime/error.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>

GenerateController::GenerateController(Session* session, QObject* parent)
    : QObject(parent), session_(session), panel_(new GeneratePanel), service_(new GenerateService(this)) {
    panel_->clearGeneration(tr("Run an input, then Generate continues it."));
    connect(panel_->generateButton(), &QPushButton::clicked, this, &GenerateController::start);
    connect(panel_, &GeneratePanel::stepChanged, this, &GenerateController::showStep);
    connect(panel_, &GeneratePanel::queryRowOnlyChanged, this, [this] { showStep(panel_->step()); });
    connect(session_, &Session::traceReady, this, &GenerateController::onTrace);
    connect(session_, &Session::modelLoaded, this, [this] {
        service_->cancelAll();  // the old model's generation and detectors
        generation_.reset();
        shown_.reset();
        panel_->setStatus({});
        panel_->clearGeneration(tr("Run an input, then Generate continues it."));
        updateEnabled(nullptr);
    });
    updateEnabled(nullptr);
}

GenerateController::~GenerateController() {
    service_->cancelAll();
    service_->waitForWorkers();
}

void GenerateController::startDetectors() {
    const auto model = session_->model();
    if (!model) {
        emit detectorsReady({}, tr("Open a model first."));
        return;
    }
    service_->detectors(model, [this](const DetectorsResult& r) {
        if (!r.error.isEmpty()) {
            emit detectorsReady({}, tr("Detectors: %1").arg(r.error));
            return;
        }
        emit detectorsReady(r.report.heads,
                            tr("Detectors on a probe of 1 + 2 × %1 random ids (seed 0): share of attention on "
                               "each pattern's targets, 1 = a perfect head.")
                                    .arg(r.report.repeatLength));
    });
}

void GenerateController::start() {
    const auto model = session_->model();
    const auto trace = session_->trace();
    if (!model || !trace) {
        panel_->setStatus(tr("Run an input first: Generate continues it."));
        return;
    }
    const attnscope::ModelInfo& info = model->info();
    if (info.encoderDecoder || info.imageInput ||
        (trace->nextTokenLogits().empty() && !(generation_ && trace == shown_))) {
        panel_->setStatus(tr("Generation needs a decoder-only language model; %1 is not one.")
                                  .arg(QString::fromStdString(info.family)));
        return;
    }
    // Stepping shows prefixes of our own trace: generate again from the same prompt then.
    const std::vector<std::int64_t> prompt = generation_ && trace == shown_ ? generation_->prompt : trace->ids();
    attnscope::GenerateOptions options;
    options.tokens = panel_->tokens();
    options.sampling = panel_->sampling();
    run(prompt, options, 0);
}

void GenerateController::replay(const std::vector<std::int64_t>& prompt, const std::vector<std::int64_t>& generated,
                                const attnscope::GenerateOptions& options, int step) {
    if (!session_->model() || prompt.empty() || generated.empty()) {
        emit failed(tr("The saved generation needs a model, a prompt and generated ids."));
        return;
    }
    const attnscope::SamplingOptions& s = options.sampling;
    panel_->sampleCheck()->setChecked(s.sample);
    panel_->samplingTemperatureSpin()->setValue(s.temperature);
    panel_->topKSpin()->setValue(s.topK);
    panel_->topPSpin()->setValue(s.topP);
    panel_->seedSpin()->setValue(int(std::min<std::uint64_t>(s.seed, std::uint64_t(panel_->seedSpin()->maximum()))));
    panel_->tokensSpin()->setValue(int(generated.size()));
    attnscope::GenerateOptions o = options;
    o.tokens = int(generated.size());
    o.forced = generated;
    run(prompt, o, step);
}

void GenerateController::run(const std::vector<std::int64_t>& prompt, attnscope::GenerateOptions options, int step) {
    const auto model = session_->model();
    panel_->setStatus(tr("Generating %1 tokens…").arg(options.tokens));
    panel_->generateButton()->setEnabled(false);
    service_->generate(
            model, prompt, options,
            [this](long long done, long long total) {
                panel_->setStatus(tr("Generating: %1 of %2 tokens…").arg(done).arg(total));
            },
            [this, options, step](const GenerationResult& out) { deliver(out, options, step); });
}

void GenerateController::deliver(const GenerationResult& out, const attnscope::GenerateOptions& options, int step) {
    panel_->generateButton()->setEnabled(true);
    if (!out.error.isEmpty()) {
        panel_->setStatus(tr("Generation failed: %1").arg(out.error));
        emit failed(out.error);
        return;
    }
    if (!out.generation) return;
    generation_ = out.generation;
    options_ = options;
    options_.forced.clear();
    const auto& labels = generation_->trace->displayTokens();
    const auto p = static_cast<qsizetype>(generation_->prompt.size());
    QStringList prompt, generated;
    for (qsizetype i = 0; i < qsizetype(labels.size()); ++i)
        (i < p ? prompt : generated) << QString::fromStdString(labels[std::size_t(i)]);
    const attnscope::SamplingOptions& s = options_.sampling;
    panel_->setStatus(s.sample ? tr("Sampled %1 tokens (sampling temperature %2, top-k %3, top-p %4, seed %5).")
                                         .arg(generated.size())
                                         .arg(s.temperature)
                                         .arg(s.topK ? QString::number(s.topK) : tr("all"))
                                         .arg(s.topP)
                                         .arg(s.seed)
                               : tr("Generated %1 tokens greedily.").arg(generated.size()));
    step = std::clamp(step, 0, std::max(0, int(generated.size()) - 1));
    panel_->showGeneration(prompt, generated, step);
    showStep(step);
    emit finished();
}

bool GenerateController::showStepOutput(const std::shared_ptr<const attnscope::Trace>& trace,
                                        OutputPanel* outputs) const {
    if (!generation_ || !trace || trace != shown_ || !session_->model()) return false;
    outputs->showGenerationStep(*generation_, shownStep_, *session_->model(), session_->tokenizer().get(),
                                options_.sampling.sample);
    return true;
}

void GenerateController::showStep(int step) {
    if (!generation_ || generation_->generated.empty()) return;
    step = std::clamp(step, 0, int(generation_->generated.size()) - 1);
    shownStep_ = step;
    const int length = int(generation_->prompt.size()) + step;  // keys: the prompt and the tokens before this one
    try {
        shown_ = attnscope::prefixTrace(*generation_->trace, length, panel_->queryRowOnly());
    } catch (const std::exception& e) {
        panel_->setStatus(QString::fromUtf8(e.what()));
        return;
    }
    session_->showTrace(shown_);
}

// Generate only where it can apply (a decoder-only language model's trace), with the reason in
// the tooltip where it cannot.
void GenerateController::updateEnabled(const std::shared_ptr<const attnscope::Trace>& trace) {
    const auto model = session_->model();
    QString why;
    if (!model)
        why = tr("Open a model first.");
    else if (const attnscope::ModelInfo& info = model->info(); info.encoderDecoder || info.imageInput ||
                                                               info.task == "sentiment" ||
                                                               (trace && trace->nextTokenLogits().empty()))
        why = tr("Generation needs a decoder-only language model; %1 is not one (it has no next-token output).")
                      .arg(info.task.empty() ? QString::fromStdString(info.family)
                                             : QString::fromStdString("builtin:" + info.task));
    panel_->generateButton()->setEnabled(why.isEmpty());
    panel_->generateButton()->setToolTip(why.isEmpty() ? tr("Continue the input token by token") : why);
    // The panel says it too, where a disabled button's tooltip is easy to miss.
    if (model && !why.isEmpty())
        panel_->setStatus(why);
    else if (!disabledReason_.isEmpty())
        panel_->setStatus({});
    disabledReason_ = model ? why : QString();
}

void GenerateController::onTrace(const std::shared_ptr<const attnscope::Trace>& trace) {
    if (trace != shown_) updateEnabled(trace);
    if (trace == shown_ || !generation_) return;
    // The user ran another input: the generation no longer matches what the views show.
    generation_.reset();
    shown_.reset();
    panel_->setStatus({});
    panel_->clearGeneration(tr("Run an input, then Generate continues it."));
}
