// Per-head metrics, rollout/flow and similarity of a Trace's blocks and KL between variants
// (trace_metrics.h). Plain C++ over the public Trace API.
#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/attention/attention_file.h"

#include "attnscope/attention/map_rows.h"
#include "attnscope/runtime/error.h"
#include "row_measures.h"
#include "block_pass.h"
#include "attention/map_rows_internal.h"
#include "attention/blocked_attention.h"
#include "runtime/blas_threads.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <limits>
#include <memory>
#include <tuple>
#include <mutex>
#include <string>
#include <thread>

namespace attnscope {

double variantKl(const Trace& trace, int block, int layer, int head, const MapOptions& p, const MapOptions& q) {
    return meanRowKl(trace.map(block, layer, head, p), trace.map(block, layer, head, q));
}

double sinkRate(const std::vector<HeadMetrics>& heads, double threshold) {
    if (heads.empty()) return 0.0;
    const auto sinks =
            std::count_if(heads.begin(), heads.end(), [&](const HeadMetrics& m) { return m.sink > threshold; });
    return static_cast<double>(sinks) / static_cast<double>(heads.size());
}

std::vector<int> separatorColumns(const BlockInfo& block, const std::vector<std::string>& labels) {
    std::vector<int> cols;
    for (std::size_t j = 0; j < block.keyTokens.size(); ++j)
        if (std::find(labels.begin(), labels.end(), block.keyTokens[j]) != labels.end())
            cols.push_back(static_cast<int>(j));
    return cols;
}

namespace {

int metricWorkerCount(int asked) {
    return asked > 0 ? asked : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Feeds a row block's rows into an accumulator (q: the second map's rows when KL is wanted).
void addRows(RowMeasures& m, const MapRowBlock& b, bool withSecond) {
    m.addRows(b.rowBegin, b.rows, b.values, b.colBegin, b.colEnd, withSecond ? b.second : nullptr, b.logValues);
}

// One head of headMetrics, on the calling thread (its row blocks one after another).
struct MetricsHead {
    int block = 0, layer = 0, head = 0;
};

// How one head's metrics are taken: which sums, and whether and how its KL to the linear map.
struct HeadPlan {
    MapOptions dot, linear;
    bool mapIsDot = false;     // the map measured is the dot map: its KL comes in the same pass
    bool compare = false;      // KL(dot ‖ linear) is computed
    bool undefinedKl = false;  // asked for, but the logits carry what a linear map has no place for
    unsigned want = 0;
    int n = 0, m = 0;
};

HeadPlan planHead(const Trace& trace, const MetricsOptions& options, int bi, int l) {
    const BlockInfo& b = trace.blocks()[static_cast<std::size_t>(bi)];
    HeadPlan p;
    p.dot = p.linear = options.map;
    p.dot.variant = MapVariant::Dot;
    p.linear.variant = MapVariant::Linear;
    p.linear.featureMap = options.compareFeatureMap;
    // On a dot-product block the Native map is the Dot map: its KL to the linear map comes in
    // the same pass; otherwise a second pass reads the dot and linear maps.
    p.mapIsDot = options.map.variant == MapVariant::Dot ||
                 (options.map.variant == MapVariant::Native && b.kind == AttentionKind::Dot);
    std::tie(p.n, p.m) = mapShape(trace, bi, l);
    const bool compareAsked =
            options.compareLinear && b.kind == AttentionKind::Dot && !mapsOnly(trace);  // no Q/K, no linear map
    // A soft-cap, ALiBi or a position bias has no place in linear attention: no KL to report.
    p.undefinedKl = compareAsked && !linearMapRefusal(trace, bi, l).empty();
    p.compare = compareAsked && !p.undefinedKl;
    p.want = RowMeasures::Entropy | RowMeasures::Distance | RowMeasures::Patterns | RowMeasures::Keys |
             RowMeasures::FirstKey | RowMeasures::Sink | (p.compare && p.mapIsDot ? RowMeasures::Kl : 0u);
    return p;
}

// A head's HeadMetrics from its sums; the KL's second pass when the map measured is not the dot map.
HeadMetrics finishHead(const Trace& trace, const HeadPlan& p, const RowMeasures& main, int bi, int l, int h,
                       bool separators) {
    HeadMetrics r = main.headMetrics(trace.blocks()[static_cast<std::size_t>(bi)].name, l, h, separators);
    if (p.undefinedKl) r.klDotLinear = std::numeric_limits<double>::quiet_NaN();
    if (p.compare && p.mapIsDot) {
        r.klDotLinear = main.kl();
    } else if (p.compare) {
        RowMeasures kl(p.n, p.m, RowMeasures::Kl);
        forEachRowBlock(
                trace, bi, l, h, p.dot, 1, [&](int, const MapRowBlock& rows) { addRows(kl, rows, true); }, &p.linear, 0,
                0, true);
        r.klDotLinear = kl.kl();
    }
    return r;
}

HeadMetrics oneHeadMetrics(const Trace& trace, const MetricsOptions& options, const MetricsHead& at,
                           const std::vector<int>& separators) {
    const int bi = at.block, l = at.layer, h = at.head;
    const HeadPlan p = planHead(trace, options, bi, l);
    RowMeasures main(p.n, p.m, p.want, separators, options.thresholds);
    forEachRowBlock(
            trace, bi, l, h, options.map, 1, [&](int, const MapRowBlock& rows) { addRows(main, rows, true); },
            p.compare && p.mapIsDot ? &p.linear : nullptr, 0, 0, true);
    return finishHead(trace, p, main, bi, l, h, !separators.empty());
}

}  // namespace

std::vector<HeadMetrics> headMetrics(const Trace& trace, const MetricsOptions& options) {
    std::vector<MetricsHead> heads;
    std::vector<std::vector<int>> separators;  // per block
    for (int bi = 0; bi < static_cast<int>(trace.blocks().size()); ++bi) {
        const BlockInfo& b = trace.blocks()[static_cast<std::size_t>(bi)];
        separators.push_back(separatorColumns(b, options.separatorLabels));
        for (int l = 0; l < b.layers; ++l)
            for (int h = 0; h < b.heads; ++h) heads.push_back({bi, l, h});
    }
    const std::size_t total = heads.size();
    std::vector<HeadMetrics> out(total);
    // Whole heads on every core, each head's rows on one (no thread start per head, and no core
    // waits at a head's end for the other's last row block). Workers take the next head in
    // order; this thread works too and hands each head to onHead and progress in order as soon
    // as it and all before it are done.
    std::mutex mutex;
    std::condition_variable doneOne;
    std::vector<char> ready(total, 0);
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    const auto take = [&]() {
        const std::size_t i = next.fetch_add(1);
        if (i >= total || stop.load()) return false;
        const MetricsHead& at = heads[i];
        HeadMetrics r = oneHeadMetrics(trace, options, at, separators[static_cast<std::size_t>(at.block)]);
        {
            std::lock_guard<std::mutex> lock(mutex);
            out[i] = std::move(r);
            ready[i] = 1;
        }
        doneOne.notify_all();
        return true;
    };
    const int workers = static_cast<int>(
            std::min<std::size_t>(static_cast<std::size_t>(metricWorkerCount(options.workers)), total));
    // Every head's products on one thread, whatever the number of workers: the same values bit
    // for bit on one worker or several (OpenBLAS may split a product, and round it, otherwise).
    const SingleThreadedBlas blas;
    onThreads(workers, [&](int worker) {
        try {
            if (worker > 0) {
                while (take()) {
                }
                return;
            }
            for (std::size_t delivered = 0; delivered < total;) {
                bool have = false;
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    have = ready[delivered] != 0;
                }
                if (have) {
                    if (options.onHead) options.onHead(out[delivered]);
                    ++delivered;
                    if (options.progress &&
                        !options.progress(static_cast<long long>(delivered), static_cast<long long>(total)))
                        throw Cancelled();
                    continue;
                }
                if (take()) continue;
                // Every head is taken: wait for the next one in order (or for a worker's failure).
                std::unique_lock<std::mutex> lock(mutex);
                doneOne.wait(lock, [&] { return ready[delivered] != 0 || stop.load(); });
                if (!ready[delivered]) return;  // a worker failed; onThreads rethrows its exception
            }
        } catch (...) {
            stop = true;  // the others take no further head
            doneOne.notify_all();
            throw;
        }
    });
    return out;
}

std::vector<HeadMap> layerMaps(const Trace& trace, int block, int layer, const MapOptions& options) {
    if (block < 0 || block >= static_cast<int>(trace.blocks().size()))
        throw Error("block " + std::to_string(block) + " is out of range");
    std::vector<HeadMap> maps;
    for (int h = 0; h < trace.blocks()[block].heads; ++h) maps.push_back(trace.map(block, layer, h, options));
    return maps;
}

namespace {

void checkSelfAttention(const Trace& trace, int block) {
    if (block < 0 || block >= static_cast<int>(trace.blocks().size()))
        throw Error("block " + std::to_string(block) + " is out of range");
    const BlockInfo& b = trace.blocks()[block];
    if (b.queryTokens.size() != b.keyTokens.size())
        throw Error("rollout and flow need a self-attention block; '" + b.name + "' maps " +
                    std::to_string(b.queryTokens.size()) + " queries onto " + std::to_string(b.keyTokens.size()) +
                    " keys");
}

std::vector<HeadMap> averagedLayers(const Trace& trace, int block, const MapOptions& options) {
    checkSelfAttention(trace, block);
    return blockProducts(trace, block, options, false, true).layerMeans;
}

}  // namespace

HeadMap blockRollout(const Trace& trace, int block, const MapOptions& options, double residual) {
    checkSelfAttention(trace, block);
    if (trace.blocks()[block].layers * trace.blocks()[block].heads == 0)  // attentionRollout's check
        throw Error("attention rollout needs at least one layer");
    ProductsAsked asked;
    asked.rollout = true;
    asked.residual = residual;
    return blockProductsVisiting(trace, block, options, false, asked, {}).rollout;
}

HeadMap blockFlow(const Trace& trace, int block, const MapOptions& options, const FlowOptions& flow) {
    return attentionFlow(averagedLayers(trace, block, options), flow);
}

HeadMap blockRolloutRows(const Trace& trace, int block, const std::vector<int>& rows, const MapOptions& options,
                         double residual, const Progress& progress) {
    if (block < 0 || block >= static_cast<int>(trace.blocks().size()))
        throw Error("block " + std::to_string(block) + " is out of range");
    const BlockInfo& b = trace.blocks()[block];
    for (int l = 0; l < b.layers; ++l)
        if (mapShape(trace, block, l).first != mapShape(trace, block, l).second ||
            mapShape(trace, block, l) != mapShape(trace, block, 0))
            throw Error("rollout needs a self-attention block; '" + b.name + "' maps " +
                        std::to_string(mapShape(trace, block, l).first) + " queries onto " +
                        std::to_string(mapShape(trace, block, l).second) + " keys");
    checkRolloutResidual(residual);
    const int n = b.layers > 0 ? mapShape(trace, block, 0).first : 0;
    for (int r : rows)
        if (r < 0 || r >= n)
            throw Error("attention rollout: row " + std::to_string(r) + " is out of range (0.." +
                        std::to_string(n - 1) + ")");
    const std::size_t R = rows.size(), N = static_cast<std::size_t>(n);
    // v: the rows asked for of Â_{L-1}·…·Â_{l+1}, starting from the identity's rows; each layer
    // multiplies it by Â_l from the right, one block of Â_l's rows (all heads averaged) at a time.
    std::vector<double> v(R * N, 0.0), next(R * N);
    for (std::size_t i = 0; i < R; ++i) v[i * N + static_cast<std::size_t>(rows[i])] = 1.0;
    const int blockRows = 128, workers = std::min(metricWorkerCount(0), std::max(1, b.heads));
    for (int l = b.layers - 1; l >= 0; --l) {
        std::fill(next.begin(), next.end(), 0.0);
        for (int r0 = 0; r0 < n; r0 += blockRows) {
            const int len = std::min(blockRows, n - r0);
            // Sum over heads of rows [r0, r0 + len), one buffer per worker; each worker takes
            // whole heads, its matrix products single-threaded.
            std::vector<std::vector<double>> sums(static_cast<std::size_t>(workers),
                                                  std::vector<double>(static_cast<std::size_t>(len) * N, 0.0));
            std::vector<std::exception_ptr> failed(static_cast<std::size_t>(workers));
            const auto work = [&](int w) {
                try {
                    for (int h = w; h < b.heads; h += workers)
                        forEachRowBlock(
                                trace, block, l, h, options, 1,
                                [&](int, const MapRowBlock& rb) {
                                    const std::size_t width = static_cast<std::size_t>(rb.colEnd - rb.colBegin);
                                    for (int r = 0; r < rb.rows; ++r) {
                                        double* dst = sums[static_cast<std::size_t>(w)].data() +
                                                      static_cast<std::size_t>(rb.rowBegin - r0 + r) * N + rb.colBegin;
                                        const float* src = rb.values + r * width;
                                        for (std::size_t j = 0; j < width; ++j) dst[j] += src[j];
                                    }
                                },
                                nullptr, r0, r0 + len);
                } catch (...) {
                    failed[static_cast<std::size_t>(w)] = std::current_exception();
                }
            };
            if (workers > 1) {
                SingleThreadedBlas blas;
                std::vector<std::thread> pool;
                for (int w = 0; w < workers; ++w) pool.emplace_back(work, w);
                for (auto& t : pool) t.join();
            } else {
                work(0);
            }
            for (auto& f : failed)
                if (f) std::rethrow_exception(f);
            std::vector<double>& avg = sums[0];
            for (int w = 1; w < workers; ++w)
                for (std::size_t i = 0; i < avg.size(); ++i) avg[i] += sums[static_cast<std::size_t>(w)][i];
            for (int r = 0; r < len; ++r) {
                const int k = r0 + r;
                double* row = avg.data() + static_cast<std::size_t>(r) * N;
                // Â_l's row k: residual·e_k + (1 - residual)·(head mean), renormalised; a row that
                // comes out all zero is the identity's (as attentionRollout does).
                double sum = 0;
                for (std::size_t j = 0; j < N; ++j) {
                    row[j] = (1 - residual) * row[j] / b.heads + (j == static_cast<std::size_t>(k) ? residual : 0.0);
                    sum += row[j];
                }
                if (sum > 0) {
                    for (std::size_t j = 0; j < N; ++j) row[j] /= sum;
                } else {
                    std::fill(row, row + N, 0.0);
                    row[k] = 1.0;
                }
                for (std::size_t i = 0; i < R; ++i) {
                    const double w = v[i * N + static_cast<std::size_t>(k)];
                    if (w == 0) continue;
                    double* dst = next.data() + i * N;
                    for (std::size_t j = 0; j < N; ++j) dst[j] += w * row[j];
                }
            }
        }
        v.swap(next);
        if (progress && !progress(b.layers - l, b.layers)) throw Cancelled();
    }
    HeadMap out{static_cast<int>(R), n, std::vector<float>(v.size())};
    std::transform(v.begin(), v.end(), out.values.begin(), [](double x) { return static_cast<float>(x); });
    return out;
}

MetricsAndProducts headMetricsAndProducts(const Trace& trace, const MetricsOptions& options,
                                          const ProductsAsked& asked) {
    MetricsAndProducts out;
    for (int bi = 0; bi < static_cast<int>(trace.blocks().size()); ++bi) {
        const BlockInfo& b = trace.blocks()[static_cast<std::size_t>(bi)];
        const std::vector<int> separators = separatorColumns(b, options.separatorLabels);
        const int k = b.layers * b.heads;
        std::vector<HeadPlan> plans;
        for (int l = 0; l < b.layers; ++l) plans.push_back(planHead(trace, options, bi, l));
        std::vector<std::unique_ptr<RowMeasures>> sums(static_cast<std::size_t>(k));
        std::vector<RowsOf> linear(static_cast<std::size_t>(k));
        SharedKeys linearKeys;
        for (int a = 0; a < k; ++a) {
            const HeadPlan& p = plans[static_cast<std::size_t>(a / b.heads)];
            sums[static_cast<std::size_t>(a)] =
                    std::make_unique<RowMeasures>(p.n, p.m, p.want, separators, options.thresholds);
        }
        // Each head's rows go to its sums as headMetrics feeds them (the same blocks, in order),
        // with the linear map's rows beside them for the KL: the values are headMetrics's.
        const auto visit = [&](int a, std::int64_t r0, std::int64_t len, KeySpan span, const float* values,
                               const float* logs) {
            const int l = a / b.heads;
            const HeadPlan& p = plans[static_cast<std::size_t>(l)];
            RowsOf& lin = linear[static_cast<std::size_t>(a)];
            at::Tensor q;
            if (p.compare && p.mapIsDot) {
                if (!lin) lin = rowsOf(trace.impl(), bi, l, a % b.heads, p.linear, &linearKeys);
                q = lin(r0, len, span, nullptr, nullptr);
            }
            sums[static_cast<std::size_t>(a)]->addRows(static_cast<int>(r0), static_cast<int>(len), values,
                                                       static_cast<int>(span.lo), static_cast<int>(span.hi),
                                                       q.defined() ? q.data_ptr<float>() : nullptr, logs);
        };
        ProductsAsked ofBlock = asked;  // rollout and flow need self-attention
        if (b.queryTokens.size() != b.keyTokens.size()) ofBlock.layerMeans = ofBlock.rollout = false;
        out.blocks.push_back(blockProductsVisiting(trace, bi, options.map, true, ofBlock, visit));
        for (int a = 0; a < k; ++a) {
            const int l = a / b.heads, h = a % b.heads;
            HeadMetrics r = finishHead(trace, plans[static_cast<std::size_t>(l)], *sums[static_cast<std::size_t>(a)],
                                       bi, l, h, !separators.empty());
            if (options.onHead) options.onHead(r);
            out.heads.push_back(std::move(r));
        }
    }
    return out;
}

std::vector<double> blockSimilarity(const Trace& trace, int block, const MapOptions& options) {
    return cosineFromGram(blockProducts(trace, block, options, true, false).gram);
}

}  // namespace attnscope
