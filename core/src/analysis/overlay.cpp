// Attention over the image (see overlay.h): patch grids, head fusion, vit-explain's discard and
// the rollout row.
#include "attnscope/analysis/overlay.h"

#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/attention/image_text.h"
#include "attnscope/attention/window_padding.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnscope {

namespace {

// "r12c3" -> (12, 3); false for any other label.
bool parsePatch(const std::string& s, int& r, int& c) {
    if (s.size() < 4 || s[0] != 'r') return false;
    std::size_t i = 1;
    auto number = [&](int& out) {
        const std::size_t begin = i;
        long v = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - begin < 6) v = v * 10 + (s[i++] - '0');
        out = static_cast<int>(v);
        return i > begin;
    };
    if (!number(r) || i >= s.size() || s[i++] != 'c' || !number(c)) return false;
    return i == s.size();
}

std::string patchName(int r, int c) { return "r" + std::to_string(r) + "c" + std::to_string(c); }

}  // namespace

PatchGrid patchGrid(const std::vector<std::string>& tokens) {
    PatchGrid g;
    std::vector<std::pair<int, int>> found(tokens.size(), {-1, -1});
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        int r = 0, c = 0;
        if (parsePatch(tokens[t], r, c)) {
            found[t] = {r, c};
            g.rows = std::max(g.rows, r + 1);
            g.cols = std::max(g.cols, c + 1);
        } else {
            g.others.push_back(static_cast<int>(t));
        }
    }
    if (g.rows == 0)
        throw Error("attention over the image: no token is an image patch (labels rRcC); is this an image model?");
    g.positions.assign(static_cast<std::size_t>(g.rows) * g.cols, -1);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        const auto [r, c] = found[t];
        if (r < 0) continue;
        int& slot = g.positions[static_cast<std::size_t>(r) * g.cols + c];
        if (slot >= 0) throw Error("attention over the image: patch " + patchName(r, c) + " appears twice");
        slot = static_cast<int>(t);
    }
    for (int r = 0; r < g.rows; ++r)
        for (int c = 0; c < g.cols; ++c)
            if (g.positions[static_cast<std::size_t>(r) * g.cols + c] < 0)
                throw Error("attention over the image: the " + std::to_string(g.rows) + "x" + std::to_string(g.cols) +
                            " patch grid has no patch " + patchName(r, c));
    return g;
}

const char* fusionName(HeadFusion fusion) {
    switch (fusion) {
        case HeadFusion::Mean: return "mean";
        case HeadFusion::Max: return "max";
        case HeadFusion::Min: return "min";
    }
    return "?";
}

HeadMap fuseHeads(const std::vector<HeadMap>& heads, HeadFusion fusion) {
    if (fusion == HeadFusion::Mean) return averageHeads(heads);
    if (heads.empty()) throw Error("fusing heads needs at least one map");
    HeadMap out = heads[0];
    checkMapShape(out, "fusing heads");
    for (const HeadMap& h : heads) {
        checkMapShape(h, "fusing heads");
        if (h.rows != out.rows || h.cols != out.cols) throw Error("fusing heads needs maps of one shape");
        for (std::size_t i = 0; i < out.values.size(); ++i)
            out.values[i] = fusion == HeadFusion::Max ? std::max(out.values[i], h.values[i])
                                                      : std::min(out.values[i], h.values[i]);
    }
    return out;
}

HeadMap discardLowest(const HeadMap& map, double ratio) {
    checkMapShape(map, "discarding the lowest attention");
    if (!(ratio >= 0 && ratio < 1)) throw Error("the discard ratio must be in [0, 1), got " + std::to_string(ratio));
    const std::size_t total = map.values.size();
    const auto k = static_cast<std::size_t>(std::floor(ratio * static_cast<double>(total)));
    HeadMap out = map;
    if (k == 0) return out;
    std::vector<std::size_t> order(total);
    std::iota(order.begin(), order.end(), std::size_t{0});
    const auto lower = [&](std::size_t a, std::size_t b) {
        return map.values[a] < map.values[b] || (map.values[a] == map.values[b] && a < b);
    };
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k - 1), order.end(), lower);
    for (std::size_t i = 0; i < k; ++i)
        if (order[i] != 0) out.values[order[i]] = 0.0f;
    return out;
}

std::vector<double> rolloutRow(const std::vector<HeadMap>& fusedLayers, int query, const RolloutOptions& options) {
    if (fusedLayers.empty()) throw Error("attention rollout needs at least one layer");
    checkRolloutResidual(options.residual);
    const int n = fusedLayers[0].rows;
    if (query < 0 || query >= n)
        throw Error("attention rollout: query " + std::to_string(query) + " is out of range (0.." +
                    std::to_string(n - 1) + ")");
    std::vector<double> row(static_cast<std::size_t>(n), 0.0), next(row.size());
    row[static_cast<std::size_t>(query)] = 1.0;
    // R = Â_{L-1} ··· Â_0, so e_qᵀ R applies the top layer first.
    for (std::size_t l = fusedLayers.size(); l-- > 0;) {
        const HeadMap& raw = fusedLayers[l];
        checkMapShape(raw, "attention rollout");
        if (raw.rows != n || raw.cols != n)
            throw Error("attention rollout needs square maps of one size (self-attention); layer " + std::to_string(l) +
                        " is " + std::to_string(raw.rows) + "x" + std::to_string(raw.cols));
        const HeadMap a = discardLowest(raw, options.discardRatio);
        std::fill(next.begin(), next.end(), 0.0);
        for (int i = 0; i < n; ++i) {
            const double w = row[static_cast<std::size_t>(i)];
            if (w == 0) continue;
            // Row i of Â: residual on the diagonal, divided by the row's own sum.
            double sum = 0;
            for (int j = 0; j < n; ++j) sum += (1 - options.residual) * a.at(i, j) + (i == j ? options.residual : 0.0);
            if (!(sum > 0)) {
                next[static_cast<std::size_t>(i)] += w;  // an all-zero row is the identity row
                continue;
            }
            for (int j = 0; j < n; ++j)
                next[static_cast<std::size_t>(j)] +=
                        w * ((1 - options.residual) * a.at(i, j) + (i == j ? options.residual : 0.0)) / sum;
        }
        row.swap(next);
    }
    return row;
}

const char* overlaySourceName(OverlaySource source) {
    switch (source) {
        case OverlaySource::Head: return "head";
        case OverlaySource::LayerMean: return "layer mean";
        case OverlaySource::Rollout: return "rollout";
        case OverlaySource::Similarity: return "contribution to the image–text logit";
    }
    return "?";
}

PatchOverlay similarityOverlay(const Trace& trace, int head) {
    const ImageTextScore& score = traceImageText(trace);
    if (!score.present)
        throw Error("the contribution to the image–text logit needs an image–text model (CLIP, SigLIP)");
    if (head >= score.heads)
        throw Error("attention over the image: head " + std::to_string(head) + " is out of range (0.." +
                    std::to_string(score.heads - 1) + ")");
    PatchOverlay o;
    o.grid = patchGrid(score.positions);
    o.signedValues = true;
    o.patches.assign(o.grid.positions.size(), 0.0);
    for (std::size_t p = 0; p < o.patches.size(); ++p) {
        const int column = o.grid.positions[p];
        for (int h = head < 0 ? 0 : head; h < (head < 0 ? score.heads : head + 1); ++h)
            o.patches[p] += score.contribution(h, column);
        o.maxPatch = std::max(o.maxPatch, std::abs(o.patches[p]));
    }
    // What the patches leave of the logit: the remainder, and the other heads' share.
    o.otherWeight = score.logit - std::accumulate(o.patches.begin(), o.patches.end(), 0.0);
    return o;
}

PatchOverlay patchOverlay(const Trace& trace, int block, const OverlayOptions& options) {
    if (options.source == OverlaySource::Similarity) return similarityOverlay(trace);
    const auto& blocks = trace.blocks();
    if (block < 0 || block >= static_cast<int>(blocks.size()))
        throw Error("attention over the image: block " + std::to_string(block) + " is out of range");
    const BlockInfo& info = blocks[static_cast<std::size_t>(block)];
    // Swin's stages: the window padding's keys are left out (their share of a row is lost), and a
    // rollout runs over the stage's own blocks: patch merging between stages is no attention.
    const int padding = paddingKeys(info);
    if (info.queryTokens.size() + static_cast<std::size_t>(padding) != info.keyTokens.size())
        throw Error("attention over the image needs a self-attention block; " + info.name + " has " +
                    std::to_string(info.queryTokens.size()) + " queries and " + std::to_string(info.keyTokens.size()) +
                    " keys");
    const auto tokenMaps = [&](int layer) {
        std::vector<HeadMap> maps = layerMaps(trace, block, layer, options.map);
        for (HeadMap& m : maps) m = withoutPaddingKeys(m, padding);
        return maps;
    };
    if (options.layer < 0 || options.layer >= info.layers)
        throw Error("attention over the image: layer " + std::to_string(options.layer) + " is out of range (0.." +
                    std::to_string(info.layers - 1) + ")");
    PatchOverlay out;
    out.grid = patchGrid(info.queryTokens);
    const int n = static_cast<int>(info.queryTokens.size());
    if (options.query < 0 || options.query >= n)
        throw Error("attention over the image: query " + std::to_string(options.query) + " is out of range (0.." +
                    std::to_string(n - 1) + ")");
    out.query = options.query;
    std::vector<double> row(static_cast<std::size_t>(n));
    if (options.source == OverlaySource::Rollout) {
        if (!(options.rollout.discardRatio >= 0 && options.rollout.discardRatio < 1))
            throw Error("the discard ratio must be in [0, 1), got " + std::to_string(options.rollout.discardRatio));
        std::vector<HeadMap> fused;
        for (int l = 0; l <= options.layer; ++l) fused.push_back(fuseHeads(tokenMaps(l), options.rollout.fusion));
        row = rolloutRow(fused, options.query, options.rollout);
    } else {
        std::vector<HeadMap> maps;
        if (options.source == OverlaySource::Head)
            maps.push_back(trace.map(block, options.layer, options.head, options.map));
        else
            maps = layerMaps(trace, block, options.layer, options.map);
        const HeadMap m = averageHeads(maps);  // with the padding's columns
        for (int j = 0; j < n; ++j) row[static_cast<std::size_t>(j)] = m.at(options.query, j);
        for (int j = n; j < m.cols; ++j) out.paddingWeight += m.at(options.query, j);
    }
    const std::vector<int> windows = keyWindows(trace, block, options.layer);
    if (!windows.empty())
        for (int t : out.grid.positions) out.windows.push_back(windows[static_cast<std::size_t>(t)]);
    out.patches.resize(out.grid.positions.size());
    for (std::size_t p = 0; p < out.patches.size(); ++p) {
        out.patches[p] = row[static_cast<std::size_t>(out.grid.positions[p])];
        out.maxPatch = std::max(out.maxPatch, out.patches[p]);
    }
    for (int t : out.grid.others) out.otherWeight += row[static_cast<std::size_t>(t)];
    return options.patchesOnly ? overPatchesOnly(std::move(out)) : out;
}

PatchOverlay mapRowOverlay(const Trace& trace, int block, const HeadMap& map, int query) {
    const auto& blocks = trace.blocks();
    if (block < 0 || block >= static_cast<int>(blocks.size()))
        throw Error("attention over the image: block " + std::to_string(block) + " is out of range");
    PatchOverlay o;
    o.grid = patchGrid(blocks[static_cast<std::size_t>(block)].keyTokens);
    if (query < 0 || query >= map.rows)
        throw Error("overlay: query " + std::to_string(query) + " is outside the map's " + std::to_string(map.rows) +
                    " rows");
    o.query = query;
    for (int p : o.grid.positions) o.patches.push_back(map.at(query, p));
    for (int t : o.grid.others) o.otherWeight += map.at(query, t);
    for (double v : o.patches) o.maxPatch = std::max(o.maxPatch, v);
    return o;
}

PatchOverlay overPatchesOnly(PatchOverlay o) {
    const double sum = std::accumulate(o.patches.begin(), o.patches.end(), 0.0);
    if (!(sum > 0)) return o;
    for (double& p : o.patches) p /= sum;
    o.maxPatch /= sum;
    o.renormalised = true;
    return o;
}

}  // namespace attnscope
