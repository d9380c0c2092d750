#include "services/sourceservice.h"

#include "figure/sourceview.h"

#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <QCoreApplication>

using attnscope::MapSource;

attnscope::HeadMap shownSourceMap(const attnscope::Trace& trace, const ShownSource& shown, int block, int layer,
                                  int head, double temperature) {
    if (shown.weights()) {
        attnscope::MapOptions options;
        options.temperature = temperature;
        return trace.map(block, layer, head, options);
    }
    if (!attnscope::gradientSource(shown.source)) return attnscope::sourceMap(trace, shown.source, block, layer, head);
    if (!shown.gradients || shown.of.get() != &trace)
        throw attnscope::Error(std::string(attnscope::sourceLabel(shown.source)) +
                               ": the gradients of this run are not computed yet");
    if (block != 0 && trace.blocks().size() > 1)
        throw attnscope::Error(std::string(attnscope::sourceLabel(shown.source)) + " covers the model's '" +
                               trace.blocks().front().name + "' block only");
    return shown.gradients->map(shown.source, layer, head);
}

attnscope::MapProvider shownSourceProvider(const attnscope::Trace& trace, const ShownSource& shown) {
    if (shown.weights()) throw attnscope::Error("the weights are measured by the lab's metrics, not as a source");
    if (!attnscope::gradientSource(shown.source)) return attnscope::traceMapProvider(trace, shown.source);
    if (!shown.gradients || shown.of.get() != &trace)
        throw attnscope::Error(std::string(attnscope::sourceLabel(shown.source)) +
                               ": the gradients of this run are not computed yet");
    return attnscope::gradientMapProvider(shown.gradients, shown.source);
}

QString sourceUnavailableReason(MapSource source, const attnscope::Model* model, bool builtin) {
    const auto tr = [](const char* s) { return QCoreApplication::translate("SourceService", s); };
    if (source == MapSource::Weights) return {};
    if (!model) return tr("Maps read from a file hold the weights only: this source needs the model itself.");
    if (attnscope::scoreTermSource(source) && !model->info().scoreTerms)
        return tr("Score terms belong to disentangled attention (DeBERTa v2/v3); this model has none.");
    if (builtin && attnscope::gradientSource(source))
        return tr("The built-in models are not covered by the gradient sources; open a pretrained model folder.");
    if (attnscope::gradientSource(source)) {
        try {  // core decides what the gradient sources cover, and says why not
            attnscope::gradientClassLabels(*model);
        } catch (const std::exception& e) {
            return QString::fromStdString(e.what());
        }
    }
    return {};
}

SourceService::SourceService(QObject* parent) : QObject(parent) { qRegisterMetaType<GradientsResult>(); }

SourceService::~SourceService() {
    jobs_.cancel();
    jobs_.waitForDone();
}

void SourceService::requestGradients(std::shared_ptr<const attnscope::Model> model,
                                     std::shared_ptr<const attnscope::Trace> trace,
                                     std::shared_ptr<const attnscope::RgbImage> image,
                                     std::optional<std::int64_t> target, const attnscope::RunOptions& options) {
    if (!model || !trace) return;
    emit progress(-1);
    jobs_.start(
            [this, model, trace, image, target, options](const JobTracker::Stop& stop) {
                GradientsResult r{trace, target, nullptr, {}};
                if (stop.requested()) return r;
                try {
                    attnscope::GradientInput input;
                    input.text.ids = trace->ids();
                    if (model->info().imageInput && image) input.image = *image;
                    int last = -1;
                    const attnscope::Progress report = [this, stop, last](long long done, long long total) mutable {
                        if (stop.requested()) return false;
                        const int permille = total > 0 ? int(done * 1000 / total) : -1;
                        if (permille != last) {
                            last = permille;
                            jobs_.post(stop, [this, permille] { emit progress(permille); });
                        }
                        return true;
                    };
                    r.maps = std::make_shared<const attnscope::GradientMaps>(
                            attnscope::gradientSources(*model, input, gradientTarget(*trace, target), options, report));
                } catch (const attnscope::Cancelled&) {
                    r.error.clear();  // superseded: dropped on arrival
                } catch (...) {
                    r.error = currentJobError();
                }
                return r;
            },
            [this](const GradientsResult& r) { emit gradientsReady(r); });
}

void SourceService::cancel() { jobs_.cancel(); }

void SourceService::waitForWorkers() { jobs_.waitForDone(); }
