// Two models' traces on the same ids compared head by head (lab/model_comparison.h).
#include "attnscope/lab/model_comparison.h"

#include "attnscope/analysis/metrics.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

void checkSameBlock(const BlockInfo& x, const BlockInfo& y) {
    if (x.name != y.name) throw Error("the models' blocks differ: '" + x.name + "' and '" + y.name + "'");
    if (x.layers != y.layers || x.heads != y.heads)
        throw Error("the models differ in shape: block '" + x.name + "' has " + std::to_string(x.layers) +
                    " layers x " + std::to_string(x.heads) + " heads in the first and " + std::to_string(y.layers) +
                    " x " + std::to_string(y.heads) + " in the second");
}

BlockComparison compareBlock(const Trace& a, const Trace& b, int block, const MapOptions& options) {
    const BlockInfo& info = a.blocks()[std::size_t(block)];
    BlockComparison c;
    c.block = info.name;
    c.layers = info.layers;
    c.heads = info.heads;
    c.kl.assign(std::size_t(info.layers) * std::size_t(info.heads), 0.0);
    c.maxAbs.assign(c.kl.size(), 0.0);
    for (int l = 0; l < info.layers; ++l)
        for (int h = 0; h < info.heads; ++h) {
            const HeadMap p = a.map(block, l, h, options), q = b.map(block, l, h, options);
            if (p.rows != q.rows || p.cols != q.cols)
                throw Error("block '" + info.name + "' layer " + std::to_string(l) + " head " + std::to_string(h) +
                            ": maps of " + std::to_string(p.rows) + "x" + std::to_string(p.cols) + " and " +
                            std::to_string(q.rows) + "x" + std::to_string(q.cols) + " cells");
            const std::size_t at = std::size_t(l) * std::size_t(info.heads) + std::size_t(h);
            c.kl[at] = meanRowKl(p, q);
            double worst = 0;
            for (std::size_t i = 0; i < p.values.size(); ++i)
                worst = std::max(worst, std::abs(double(p.values[i]) - double(q.values[i])));
            c.maxAbs[at] = worst;
        }
    double sum = 0;
    for (std::size_t i = 0; i < c.kl.size(); ++i) {
        sum += c.kl[i];
        if (c.kl[i] > c.maxKl || i == 0) {
            c.maxKl = c.kl[i];
            c.worstLayer = int(i) / info.heads;
            c.worstHead = int(i) % info.heads;
        }
    }
    c.meanKl = c.kl.empty() ? 0 : sum / double(c.kl.size());
    return c;
}

}  // namespace

ModelComparison compareTraces(const Trace& a, const Trace& b, const MapOptions& map) {
    if (a.ids() != b.ids()) throw Error("comparing two models needs one input: the traces ran on different ids");
    if (a.blocks().size() != b.blocks().size())
        throw Error("the models differ: " + std::to_string(a.blocks().size()) + " and " +
                    std::to_string(b.blocks().size()) + " attention blocks");
    ModelComparison out;
    out.tokens = int(a.ids().size());
    for (std::size_t i = 0; i < a.blocks().size(); ++i) {
        checkSameBlock(a.blocks()[i], b.blocks()[i]);
        out.blocks.push_back(compareBlock(a, b, int(i), map));
    }
    out.output = compareOutputs(a, b);
    return out;
}

ModelComparison compareModels(const Model& a, const Model& b, const std::vector<std::int64_t>& ids,
                              const RunOptions& options, const MapOptions& map) {
    const auto& x = a.info();
    const auto& y = b.info();
    if (x.vocabSize != y.vocabSize)
        throw Error("the models have different vocabularies (" + std::to_string(x.vocabSize) + " and " +
                    std::to_string(y.vocabSize) + " tokens): one input cannot run on both");
    RunOptions first = options, second = options;
    if (options.progress) {  // one bar over both forwards
        first.progress = [p = options.progress](long long done, long long total) { return p(done, 2 * total); };
        second.progress = [p = options.progress](long long done, long long total) {
            return p(total + done, 2 * total);
        };
    }
    const auto ta = a.forward(ids, first);
    const auto tb = b.forward(ids, second);
    return compareTraces(*ta, *tb, map);
}

}  // namespace attnscope
