#include "services/viewsservice.h"

#include "attnscope/attention/trace.h"

namespace {

// The lab's maps of heads [first, last] (specs[h]: the variant the window shows, at its
// temperature), or an error in words. Heads whose variant needs an additive fit they do not have
// are left out and listed in `unfitted`.
// With a window (rows > 0): only its rows × columns, from core's exact sub-map (pooledMap with a
// bin per cell) where the variant is one of the Trace's maps, else cut from the lab's full map.
QString layerMaps(const attnscope::Trace& trace, const MapKey& key, int first, int last,
                  const std::vector<VariantSpec>& specs, const JobTracker::Stop& stop,
                  std::vector<attnscope::HeadMap>& out, std::vector<int>& heads, std::vector<int>* unfitted = nullptr,
                  const TokenWindow& window = {}) {
    try {
        const auto& info = trace.blocks()[std::size_t(key.block)];
        for (int h = first; h <= last && !stop; ++h) {
            const VariantSpec& spec = specs[std::size_t(h)];
            if (attnscope::variantNeedsFit(info, spec.variant) && !spec.fit) {
                if (unfitted) unfitted->push_back(h);
                continue;
            }
            heads.push_back(h);
            if (const auto variant = traceVariant(spec.variant); window.rows > 0 && variant) {
                attnscope::MapOptions o = spec.map;
                o.variant = *variant;
                attnscope::PoolRequest p;
                p.rowBegin = window.begin, p.rowEnd = window.begin + window.rows, p.outRows = window.rows;
                p.colBegin = window.begin, p.colEnd = window.begin + window.cols, p.outCols = window.cols;
                out.push_back(trace.pooledMap(key.block, key.layer, h, p, o));
                continue;
            }
            attnscope::HeadMap m = attnscope::labMap(trace, key.block, key.layer, h, spec, spec.fit.get()).map;
            if (window.rows > 0) {
                attnscope::HeadMap cut{window.rows, window.cols, {}};
                cut.values.reserve(std::size_t(window.rows) * window.cols);
                for (int i = window.begin; i < window.begin + window.rows; ++i)
                    cut.values.insert(cut.values.end(), m.values.begin() + std::size_t(i) * m.cols + window.begin,
                                      m.values.begin() + std::size_t(i) * m.cols + window.begin + window.cols);
                m = std::move(cut);
            }
            out.push_back(std::move(m));
        }
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

// The lines of a map source (not the weights): each head's map, or the layer's one map for a
// per-layer source, cut to the window when there is one.
QString sourceLayerMaps(const ViewSelection& s, int heads, const TokenWindow& window, const JobTracker::Stop& stop,
                        std::vector<attnscope::HeadMap>& out, std::vector<int>& shown) {
    try {
        const int count = attnscope::perHeadSource(s.source.source) ? heads : 1;
        for (int h = 0; h < count && !stop; ++h) {
            attnscope::HeadMap m = shownSourceMap(*s.trace, s.source, s.key.block, s.key.layer, h, s.temperature);
            if (window.rows > 0) {
                attnscope::HeadMap cut{window.rows, window.cols, {}};
                for (int i = window.begin; i < window.begin + window.rows; ++i)
                    for (int j = window.begin; j < window.begin + window.cols; ++j) cut.values.push_back(m.at(i, j));
                m = std::move(cut);
            }
            out.push_back(std::move(m));
            shown.push_back(h);
        }
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

}  // namespace

std::optional<attnscope::MapVariant> traceVariant(LabVariant variant) {
    switch (variant) {
        case LabVariant::Native: return attnscope::MapVariant::Native;
        case LabVariant::Dot: return attnscope::MapVariant::Dot;
        case LabVariant::Linear: return attnscope::MapVariant::Linear;
        case LabVariant::Local: return attnscope::MapVariant::Local;
        case LabVariant::TopK: return attnscope::MapVariant::TopK;
        case LabVariant::Lsh: return attnscope::MapVariant::Lsh;
        case LabVariant::Additive:
        case LabVariant::Hybrid: break;
    }
    return std::nullopt;
}

void ViewsService::requestLines(const ViewSelection& s, TokenWindow w,
                                std::function<void(const LinesResult&)> deliver) {
    const int heads = s.trace->blocks()[std::size_t(s.key.block)].heads;
    lineJobs_.start(
            [s, heads, w](const JobTracker::Stop& stop) {
                LinesResult r;
                if (!s.source.weights())
                    r.error = sourceLayerMaps(s, heads, w, stop, r.maps, r.heads);
                else
                    r.error = layerMaps(*s.trace, s.key, 0, heads - 1, s.specs, stop, r.maps, r.heads, &r.unfitted, w);
                return r;
            },
            std::move(deliver));
}

void ViewsService::requestNeuron(const ViewSelection& s, int query, std::function<void(const NeuronResult&)> deliver) {
    neuronJobs_.start(
            [s, query](const JobTracker::Stop&) {
                NeuronResult r;
                try {
                    r.row = attnscope::neuronRow(*s.trace, s.key.block, s.key.layer, s.key.head, query, s.temperature);
                } catch (const std::exception& e) {
                    r.error = QString::fromUtf8(e.what());
                }
                return r;
            },
            std::move(deliver));
}

void ViewsService::requestQk(const ViewSelection& s, bool all, bool withMaps,
                             std::function<void(const QkResult&)> deliver) {
    const int heads = s.trace->blocks()[std::size_t(s.key.block)].heads;
    qkJobs_.start(
            [s, all, heads, withMaps](const JobTracker::Stop& stop) {
                QkResult r;
                try {
                    attnscope::QkSpaceOptions o;
                    o.head = all ? -1 : s.key.head;
                    r.space = attnscope::qkSpace(*s.trace, s.key.block, s.key.layer, o);
                    r.queryKinds = attnscope::blockTokenKinds(*s.trace, s.key.block, false);
                    r.keyKinds = attnscope::blockTokenKinds(*s.trace, s.key.block, true);
                } catch (const std::exception& e) {
                    r.error = QString::fromUtf8(e.what());
                    return r;
                }
                if (withMaps) {
                    const int first = all ? 0 : s.key.head, last = all ? heads - 1 : s.key.head;
                    if (!layerMaps(*s.trace, s.key, first, last, s.specs, stop, r.maps, r.heads).isEmpty())
                        r.maps.clear(), r.heads.clear();
                }
                return r;
            },
            std::move(deliver));
}

void ViewsService::cancelAll() {
    lineJobs_.cancel();
    neuronJobs_.cancel();
    qkJobs_.cancel();
}

void ViewsService::waitForWorkers() {
    lineJobs_.waitForDone();
    neuronJobs_.waitForDone();
    qkJobs_.waitForDone();
}
