// Attention rollout and attention flow (see rollout.h). The rollout's products go to the BLAS
// (ATen, float32), over the lower triangles of causal maps (lower_bands.h); the flow is a
// max-flow problem, solved with Dinic's algorithm on a compact arc array.
#include "attnscope/analysis/rollout.h"

#include "attnscope/analysis/metrics.h"
#include "attnscope/runtime/error.h"
#include "attention/blocked_attention.h"
#include "lower_bands.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <utility>

namespace attnscope {

namespace {

using Matrix = std::vector<double>;  // row-major n×n

std::string shapeOf(const HeadMap& m) { return std::to_string(m.rows) + "x" + std::to_string(m.cols); }

// Checks that the layers are square maps of one size and the residual is in [0, 1].
void checkLayers(const std::vector<HeadMap>& layers, double residual, const char* what) {
    if (layers.empty()) throw Error(std::string(what) + " needs at least one layer");
    checkRolloutResidual(residual, what);
    const int n = layers[0].rows;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const HeadMap& a = layers[l];
        checkMapShape(a, what);
        if (a.rows != a.cols || a.rows != n)
            throw Error(std::string(what) + " needs square maps of one size (self-attention); layer " +
                        std::to_string(l) + " is " + shapeOf(a) + ", layer 0 is " + shapeOf(layers[0]));
    }
}

// Row i of Â from row i of a map over its first `width` columns (the rest are 0):
// ((1 - residual)·a_j + residual·[i = j]) / the row's sum, the identity's row where that sum is 0.
// Each value in double; `put(j, value)` takes them in order and may overwrite a[j] (read before).
template <class Out>
void residualRow(const float* a, int width, int i, double residual, Out&& put) {
    const auto term = [&](int j) { return (1 - residual) * a[j] + (i == j ? residual : 0.0); };
    double sum = 0;
    for (int j = 0; j < width; ++j) sum += term(j);
    for (int j = 0; j < width; ++j) put(j, sum > 0 ? term(j) / sum : (i == j ? 1.0 : 0.0));
}

// Â of one checked layer, in double, row by row; `put` receives each entry (i, j, value).
template <class Out>
void residualLayer(const HeadMap& a, double residual, Out&& put) {
    const int n = a.rows;
    for (int i = 0; i < n; ++i)
        residualRow(a.values.data() + static_cast<std::size_t>(i) * n, n, i, residual,
                    [&](int j, double v) { put(i, j, v); });
}

// Â_l for every layer, after checking them.
std::vector<Matrix> residualLayers(const std::vector<HeadMap>& layers, double residual, const char* what) {
    checkLayers(layers, residual, what);
    const int n = layers[0].rows;
    std::vector<Matrix> out;
    for (const HeadMap& a : layers) {
        Matrix m(static_cast<std::size_t>(n) * n);
        residualLayer(a, residual, [&](int i, int j, double v) { m[static_cast<std::size_t>(i) * n + j] = v; });
        out.push_back(std::move(m));
    }
    return out;
}

HeadMap toHeadMap(const Matrix& m, int n) {
    HeadMap out{n, n, std::vector<float>(m.size())};
    std::transform(m.begin(), m.end(), out.values.begin(), [](double v) { return static_cast<float>(v); });
    return out;
}

// The layered flow graph. Node (level, pos) = level * n + pos. Each node's arcs are contiguous:
// forward arcs down to level - 1 (capacity Â) and the reverse arcs of the edges from level + 1
// (capacity 0).
class FlowGraph {
public:
    FlowGraph(const std::vector<Matrix>& layers, int n) : n_(n), levels_(static_cast<int>(layers.size()) + 1) {
        const int nodes = levels_ * n;
        std::vector<std::vector<std::pair<int, double>>> out(nodes);
        std::vector<int> inDegree(nodes, 0);
        for (int l = 0; l + 1 < levels_; ++l)
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j) {
                    const double c = layers[l][static_cast<std::size_t>(i) * n + j];
                    if (c > 0) {
                        out[(l + 1) * n + i].push_back({l * n + j, c});
                        ++inDegree[l * n + j];
                    }
                }
        head_.assign(nodes + 1, 0);
        for (int v = 0; v < nodes; ++v) head_[v + 1] = head_[v] + static_cast<int>(out[v].size()) + inDegree[v];
        to_.resize(head_[nodes]);
        cap_.resize(head_[nodes]);
        rev_.resize(head_[nodes]);
        // Forward arcs first in each node's range, then the reverse arcs of its incoming edges.
        std::vector<int> reverseFill(nodes);
        for (int v = 0; v < nodes; ++v) reverseFill[v] = head_[v] + static_cast<int>(out[v].size());
        for (int v = 0; v < nodes; ++v)
            for (std::size_t k = 0; k < out[v].size(); ++k) {
                const int u = out[v][k].first;
                const int a = head_[v] + static_cast<int>(k), b = reverseFill[u]++;
                to_[a] = u, cap_[a] = out[v][k].second, rev_[a] = b;
                to_[b] = v, cap_[b] = 0, rev_[b] = a;
            }
        res_ = cap_;
        level_.assign(nodes, -1);
        iter_.assign(nodes, 0);
        active_.assign(nodes, 0);
    }

    int nodes() const { return levels_ * n_; }

    // Nodes reachable from v along forward arcs (down) or reverse-of-forward arcs (up).
    std::vector<char> reach(int start, bool down) const {
        std::vector<char> seen(nodes(), 0);
        std::vector<int> stack{start};
        seen[start] = 1;
        while (!stack.empty()) {
            const int v = stack.back();
            stack.pop_back();
            for (int a = head_[v]; a < head_[v + 1]; ++a) {
                const bool forward = cap_[a] > 0;
                if (forward != down || seen[to_[a]]) continue;
                if (!down && cap_[rev_[a]] <= 0) continue;
                seen[to_[a]] = 1;
                stack.push_back(to_[a]);
            }
        }
        return seen;
    }

    // Max flow from s to t using only the nodes of fromS (those reachable from s) that toT marks.
    // Walking the list rather than every node keeps the set-up per pair proportional to what s
    // reaches.
    double maxFlow(int s, int t, const std::vector<int>& fromS, const std::vector<char>& toT) {
        activeList_.clear();
        for (int v : fromS)
            if (toT[v]) activeList_.push_back(v);
        for (int v : activeList_) {
            active_[v] = 1;
            for (int a = head_[v]; a < head_[v + 1]; ++a) res_[a] = cap_[a];
        }
        double total = 0;
        while (bfs(s, t)) {
            for (int v : activeList_) iter_[v] = head_[v];
            while (true) {
                const double f = push(s, t, std::numeric_limits<double>::infinity());
                if (f <= kEps) break;
                total += f;
            }
        }
        for (int v : activeList_) active_[v] = 0, level_[v] = -1;
        return total;
    }

private:
    static constexpr double kEps = 1e-12;

    bool bfs(int s, int t) {
        for (int v : activeList_) level_[v] = -1;
        queue_.clear();
        queue_.push_back(s);
        level_[s] = 0;
        for (std::size_t q = 0; q < queue_.size(); ++q) {
            const int v = queue_[q];
            if (v == t) break;
            for (int a = head_[v]; a < head_[v + 1]; ++a) {
                const int u = to_[a];
                if (active_[u] && level_[u] < 0 && res_[a] > kEps) {
                    level_[u] = level_[v] + 1;
                    queue_.push_back(u);
                }
            }
        }
        return level_[t] >= 0;
    }

    // Pushes up to `limit` along level-increasing arcs; returns the amount pushed.
    double push(int v, int t, double limit) {
        if (v == t) return limit;
        double pushed = 0;
        for (int& a = iter_[v]; a < head_[v + 1]; ++a) {
            const int u = to_[a];
            if (!active_[u] || level_[u] != level_[v] + 1 || res_[a] <= kEps) continue;
            if (level_[u] > level_[t] || (level_[u] == level_[t] && u != t)) continue;
            const double d = push(u, t, std::min(limit - pushed, res_[a]));
            if (d > 0) {
                res_[a] -= d;
                res_[rev_[a]] += d;
                pushed += d;
                if (limit - pushed <= kEps) break;  // this arc may still have room: keep iter_
            }
        }
        return pushed;
    }

    int n_, levels_;
    std::vector<int> head_, to_, rev_;
    std::vector<double> cap_, res_;
    std::vector<int> level_, iter_, queue_, activeList_;
    std::vector<char> active_;
};

}  // namespace

void checkRolloutResidual(double residual, const std::string& what) {
    if (!(residual >= 0 && residual <= 1)) throw Error(what + ": residual must be in [0, 1]");
}

HeadMap averageHeads(const std::vector<HeadMap>& heads) {
    if (heads.empty()) throw Error("averaging heads needs at least one map");
    HeadMap out{heads[0].rows, heads[0].cols, std::vector<float>(heads[0].values.size(), 0.0f)};
    std::vector<double> sum(out.values.size(), 0.0);
    for (const HeadMap& h : heads) {
        checkMapShape(h, "averaging heads");
        if (h.rows != out.rows || h.cols != out.cols)
            throw Error("averaging heads needs maps of one shape, got " + shapeOf(heads[0]) + " and " + shapeOf(h));
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += h.values[i];
    }
    for (std::size_t i = 0; i < sum.size(); ++i) out.values[i] = static_cast<float>(sum[i] / heads.size());
    return out;
}

namespace {

// residualRow into `out` (which may be `a`), each value rounded once to float.
void residualRowInto(const float* a, int width, int i, double residual, float* out) {
    residualRow(a, width, i, residual, [&](int j, double v) { out[j] = static_cast<float>(v); });
}

// work(b) for every band on `workers` threads, the widest bands first (a band's product costs
// about its width squared).
void forBandsWidestFirst(int bands, const std::function<void(int worker, int band)>& work) {
    std::atomic<int> next{bands - 1};
    onThreads(std::min(coreCount(), bands), [&](int w) {
        for (int b = next.fetch_sub(1); b >= 0; b = next.fetch_sub(1)) work(w, b);
    });
}

bool lowerTriangular(const HeadMap& a) {
    for (int i = 0; i < a.rows; ++i)
        for (int j = i + 1; j < a.cols; ++j)
            if (a.at(i, j) != 0.0f) return false;
    return true;
}

at::Tensor floatView(float* p, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    return at::from_blob(p, {rows, cols}, {ld, 1}, at::TensorOptions().dtype(at::kFloat));
}

// Rollout of maps that are not all lower triangular: dense float32 BLAS products, each Â_l's
// rows made on every core.
HeadMap denseRollout(const std::vector<HeadMap>& layers, double residual) {
    const int n = layers[0].rows;
    const at::TensorOptions f32 = at::TensorOptions().dtype(at::kFloat);
    at::Tensor r = at::empty({n, n}, f32), next = at::empty({n, n}, f32), al = at::empty({n, n}, f32);
    const auto residualInto = [&](const HeadMap& a, at::Tensor& out) {
        float* p = out.data_ptr<float>();
        const int workers = std::min(coreCount(), n);
        onThreads(workers, [&](int w) {
            for (int i = w; i < n; i += workers)
                residualRowInto(a.values.data() + static_cast<std::size_t>(i) * n, n, i, residual,
                                p + static_cast<std::size_t>(i) * n);
        });
    };
    residualInto(layers[0], r);
    for (std::size_t l = 1; l < layers.size(); ++l) {
        residualInto(layers[l], al);
        at::mm_out(next, al, r);
        std::swap(r, next);
    }
    HeadMap out{n, n, std::vector<float>(static_cast<std::size_t>(n) * n)};
    std::copy_n(r.data_ptr<float>(), out.values.size(), out.values.data());
    return out;
}

}  // namespace

void rolloutInPlace(std::vector<LowerBands>& layers, double residual) {
    const int bands = layers[0].bands(), S = LowerBands::kRows;
    for (LowerBands& a : layers)
        forBandsWidestFirst(bands, [&](int, int b) {
            for (int i = a.firstRow(b); i < a.firstRow(b) + a.rows(b); ++i)
                residualRowInto(a.row(i), a.width(b), i, residual, a.row(i));
        });
    // R_l's band b = Â_l's band b times the rows of R_{l-1} it reaches: Σ over the bands c <= b
    // of R_{l-1}, Â_l's columns of band c times R_{l-1}'s band c (its columns up to c's end),
    // written over Â_l's band b, which nothing else reads. No n×n matrix beyond the layers.
    std::vector<std::vector<float>> scratch(static_cast<std::size_t>(std::min(coreCount(), bands)));
    for (std::size_t l = 1; l < layers.size(); ++l) {
        LowerBands &prev = layers[l - 1], &cur = layers[l];
        forBandsWidestFirst(bands, [&](int w, int b) {
            std::vector<float>& tmp = scratch[static_cast<std::size_t>(w)];
            const std::int64_t rows = cur.rows(b), width = cur.width(b);
            tmp.resize(static_cast<std::size_t>(rows * width));
            for (int c = b; c >= 0; --c) {  // band b first: it writes every column of tmp
                const at::Tensor a =
                        floatView(cur.band(b) + static_cast<std::ptrdiff_t>(c) * S, rows, prev.rows(c), width);
                const at::Tensor r = floatView(prev.band(c), prev.rows(c), prev.width(c), prev.width(c));
                at::Tensor out = floatView(tmp.data(), rows, prev.width(c), width);
                if (c == b)
                    at::mm_out(out, a, r);
                else
                    out.addmm_(a, r);
            }
            std::copy(tmp.begin(), tmp.end(), cur.band(b));
        });
        prev = LowerBands(0);  // R_{l-1} is not needed any more
    }
}

HeadMap attentionRollout(const std::vector<HeadMap>& layers, double residual) {
    // Every layer is checked before any product is taken.
    checkLayers(layers, residual, "attention rollout");
    // Causal maps: float32 BLAS products over their lower triangles (LowerBands), n³/3 FLOP a
    // layer; otherwise dense products. At 4,096 tokens the double loops took minutes. The rows of
    // R stay within ~1e-6 of double-precision products (tests/core/analysis/test_sinks_products.cpp).
    if (!std::all_of(layers.begin(), layers.end(), lowerTriangular)) return denseRollout(layers, residual);
    const int n = layers[0].rows;
    std::vector<LowerBands> bands;
    for (const HeadMap& a : layers) {
        bands.emplace_back(n);
        for (int i = 0; i < n; ++i)
            std::copy_n(a.values.data() + static_cast<std::size_t>(i) * n, bands.back().rowWidth(i),
                        bands.back().row(i));
    }
    rolloutInPlace(bands, residual);
    return bands.back().toHeadMap();
}

HeadMap attentionFlow(const std::vector<HeadMap>& layers, const FlowOptions& options) {
    const std::vector<Matrix> a = residualLayers(layers, options.residual, "attention flow");
    const int n = layers[0].rows, L = static_cast<int>(layers.size());
    std::vector<int> rows = options.rows;
    if (rows.empty())
        for (int i = 0; i < n; ++i) rows.push_back(i);
    for (int r : rows)
        if (r < 0 || r >= n)
            throw Error("attention flow: row " + std::to_string(r) + " is out of range (0.." + std::to_string(n - 1) +
                        ")");
    Matrix flow(static_cast<std::size_t>(n) * n, 0.0);
    const long long total = static_cast<long long>(rows.size()) * n;
    if (L == 1) {  // one arc from (1, i) to (0, j): the flow is its capacity (a 1,500-token map took 20 s)
        for (int i : rows)
            std::copy_n(&a[0][static_cast<std::size_t>(i) * n], n, &flow[static_cast<std::size_t>(i) * n]);
        if (options.progress && !options.progress(total, total)) throw Cancelled();
        return toHeadMap(flow, n);
    }
    FlowGraph graph(a, n);
    std::vector<std::vector<char>> toSink(n);
    for (int j = 0; j < n; ++j) toSink[j] = graph.reach(j, /*down=*/false);
    long long done = 0;
    for (int i : rows) {
        const int s = L * n + i;
        const std::vector<char> fromSource = graph.reach(s, /*down=*/true);
        std::vector<int> sourceNodes;
        for (int v = 0; v < graph.nodes(); ++v)
            if (fromSource[v]) sourceNodes.push_back(v);
        for (int j = 0; j < n; ++j, ++done) {
            // Progress (and so cancel) within a row too: a row of a long input is n max-flows.
            if (options.progress && done % 64 == 0 && !options.progress(done, total)) throw Cancelled();
            if (fromSource[j]) flow[static_cast<std::size_t>(i) * n + j] = graph.maxFlow(s, j, sourceNodes, toSink[j]);
        }
    }
    if (options.progress && !options.progress(done, total)) throw Cancelled();
    return toHeadMap(flow, n);
}

}  // namespace attnscope
