// The lab's map of a head (lab.h): one place for the choice the GUI and the CLI both make.
// Plain C++ over the public Trace API.
#include "attnscope/lab/lab.h"

#include "attnscope/analysis/metrics.h"
#include "attnscope/runtime/error.h"

#include <string>

namespace attnscope {

HeadMap mixMaps(const HeadMap& a, const HeadMap& b, double gate) {
    checkMapShape(a, "hybrid");
    checkMapShape(b, "hybrid");
    if (!(gate >= 0 && gate <= 1)) throw Error("hybrid gate must be in [0, 1], got " + std::to_string(gate));
    if (a.rows != b.rows || a.cols != b.cols)
        throw Error("hybrid needs maps of one shape, got " + std::to_string(a.rows) + "x" + std::to_string(a.cols) +
                    " and " + std::to_string(b.rows) + "x" + std::to_string(b.cols));
    HeadMap out{a.rows, a.cols, std::vector<float>(a.values.size())};
    for (std::size_t i = 0; i < a.values.size(); ++i)
        out.values[i] = static_cast<float>(gate * a.values[i] + (1 - gate) * b.values[i]);
    return out;
}

bool variantNeedsFit(const BlockInfo& block, LabVariant variant) {
    return (variant == LabVariant::Additive || variant == LabVariant::Hybrid) && block.kind != AttentionKind::Additive;
}

LabMap labMap(const Trace& trace, int block, int layer, int head, const VariantSpec& spec, const AdditiveFit* fit,
              bool withKlFromDot) {
    MapOptions o = spec.map;
    const auto map = [&](MapVariant variant) {
        o.variant = variant;
        return trace.map(block, layer, head, o);
    };
    LabMap out;
    switch (spec.variant) {
        case LabVariant::Native: out.map = map(MapVariant::Native); break;
        case LabVariant::Dot: out.map = map(MapVariant::Dot); break;
        case LabVariant::Linear: out.map = map(MapVariant::Linear); break;
        case LabVariant::Local: out.map = map(MapVariant::Local); break;
        case LabVariant::TopK: out.map = map(MapVariant::TopK); break;
        case LabVariant::Lsh: out.map = map(MapVariant::Lsh); break;
        case LabVariant::Additive:
        case LabVariant::Hybrid: {
            HeadMap additive;
            if (!variantNeedsFit(trace.blocks().at(static_cast<std::size_t>(block)), spec.variant)) {
                additive = map(MapVariant::Native);  // the layer's own additive map
            } else {
                if (!fit) throw Error("this head has no additive fit yet: press Fit additive");
                additive = fit->map;
            }
            out.map = spec.variant == LabVariant::Additive ? std::move(additive)
                                                           : mixMaps(additive, map(MapVariant::Dot), spec.gate);
            break;
        }
    }
    if (withKlFromDot && spec.variant != LabVariant::Native && spec.variant != LabVariant::Dot)
        out.klFromDot = meanRowKl(map(MapVariant::Dot), out.map);
    return out;
}

}  // namespace attnscope
