// blockProducts (trace_metrics.h): the Gram matrix of a block's head maps and each layer's head
// mean in one pass over the maps, block of query rows by block. Before it, the head-to-head
// similarity held every head's n×n map and took k² pairwise passes (615 s at 4,096 tokens).
#include "attnscope/analysis/trace_metrics.h"

#include "attnscope/attention/map_rows.h"
#include "attnscope/runtime/error.h"
#include "attention/blocked_attention.h"
#include "attention/map_rows_internal.h"
#include "block_pass.h"
#include "lower_bands.h"
#include "attnscope/analysis/rollout.h"
#include "attention/trace_impl.h"
#include "runtime/torch_errors.h"

#include <ATen/ATen.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>

namespace attnscope {

namespace {

// cblas_ssyrk when the BLAS has it (OpenBLAS does; looked up at run time so any BLAS links):
// the Gram matrix's upper triangle is half a product's work.
using Ssyrk = void (*)(int order, int uplo, int trans, int n, int k, float alpha, const float* a, int lda, float beta,
                       float* c, int ldc);
Ssyrk blasSyrk() {
    static const Ssyrk f = reinterpret_cast<Ssyrk>(dlsym(RTLD_DEFAULT, "cblas_ssyrk"));
    return f;
}

// P (k×k, float, upper triangle) = X Xᵀ for X [k, width] float, rows ld apart.
void gramProduct(const float* x, int k, std::int64_t width, std::int64_t ld, float* p) {
    if (const Ssyrk syrk = blasSyrk(); syrk && ld <= std::numeric_limits<int>::max()) {
        syrk(101 /*row major*/, 121 /*upper*/, 111 /*no trans*/, k, static_cast<int>(width), 1.0f, x,
             static_cast<int>(ld), 0.0f, p, k);
        return;
    }
    const at::Tensor t =
            at::from_blob(const_cast<float*>(x), {k, width}, {ld, 1}, at::TensorOptions().dtype(at::kFloat));
    at::Tensor out = at::from_blob(p, {k, k}, at::TensorOptions().dtype(at::kFloat));
    at::mm_out(out, t, t.t());
}

// G (k×k, double, full) += X Xᵀ for X [k, width] float row-major: one float product per chunk of
// kGramChunk columns, chunks on `workers` threads (each product single-threaded: OpenBLAS split
// this shape's k×k output poorly over 2 cores, 2.4 s of 5.6 at 4,096 tokens), added into G in
// chunk order, so the sums do not depend on the core count. 8,192 columns: a causal pass's first
// row blocks are a few chunks wide, and with chunks of 32,768 one core did their products alone
// (the Gram's wall time 12 % over an even split at 4,096 tokens; 3 % now).
constexpr std::int64_t kGramChunk = 1 << 13;
void addGram(std::vector<double>& gram, const float* x, int k, std::int64_t width, int workers) {
    if (width == 0) return;
    const std::int64_t chunks = (width + kGramChunk - 1) / kGramChunk;
    std::vector<std::vector<float>> parts(static_cast<std::size_t>(chunks),
                                          std::vector<float>(static_cast<std::size_t>(k) * k));
    const int threads = static_cast<int>(std::min<std::int64_t>(workers, chunks));
    onThreads(threads, [&](int w) {
        for (std::int64_t c = w; c < chunks; c += threads)
            gramProduct(x + c * kGramChunk, k, std::min(kGramChunk, width - c * kGramChunk), width,
                        parts[static_cast<std::size_t>(c)].data());
    });
    // Symmetric by construction: the upper triangle gives both halves.
    for (const std::vector<float>& g : parts)
        for (int a = 0; a < k; ++a)
            for (int b = a; b < k; ++b) {
                const double v = g[static_cast<std::size_t>(a) * k + b];
                gram[static_cast<std::size_t>(a) * k + b] += v;
                if (b != a) gram[static_cast<std::size_t>(b) * k + a] += v;
            }
}

// Whether every row block's keys end within its rows' LowerBands band (causal maps, sliding
// windows): then each layer's mean fits the bands.
bool fitsBands(const Trace::Impl& impl, int block, int L, int n, std::int64_t rowsPer) {
    if (LowerBands::kRows % rowsPer != 0) return false;
    for (std::int64_t r0 = 0; r0 < n; r0 += rowsPer)
        for (int l = 0; l < L; ++l) {
            const KeySpan span = keySpan(impl.blocks[static_cast<std::size_t>(block)].layers[l].mask, n, n, r0,
                                         std::min<std::int64_t>(rowsPer, n - r0));
            if (span.size() && span.hi > std::min<std::int64_t>(n, (r0 / LowerBands::kRows + 1) * LowerBands::kRows))
                return false;
        }
    return true;
}

// Each layer's mean over its heads, added row block by row block: into dense maps (zeros where
// no block writes), or, when only the rollout needs them and they fit (fitsBands), into
// LowerBands, half the memory, whose rows each block writes whole.
class LayerMeans {
public:
    LayerMeans(const Trace::Impl& impl, int block, int L, int n, int m, std::int64_t rowsPer,
               const ProductsAsked& asked, int workers)
        : L_(L), m_(m), rollout_(asked.rollout && n == m) {
        if (!asked.layerMeans && !rollout_) return;
        if (!asked.layerMeans && fitsBands(impl, block, L, n, rowsPer)) {
            for (int l = 0; l < L; ++l) bands_.emplace_back(n);
            return;
        }
        dense_.resize(static_cast<std::size_t>(L));  // layers·n² floats, zeroed on every core
        onThreads(std::min(workers, L), [&](int w) {
            for (int l = w; l < L; l += std::min(workers, L))
                dense_[static_cast<std::size_t>(l)] =
                        HeadMap{n, m, std::vector<float>(static_cast<std::size_t>(n) * m, 0.0f)};
        });
    }

    // Rows [r0, r0 + len) over keys [lo, lo + width) from the pass's buffer x ([heads of all
    // layers, len, width]); width 0: rows that see no key.
    void add(const float* x, std::int64_t r0, std::int64_t len, std::int64_t lo, std::int64_t width, int H,
             int workers) {
        if (bands_.empty() && dense_.empty()) return;
        const std::int64_t cells = len * width;
        onThreads(std::min(workers, L_), [&](int w) {
            // Heads added in order in double, then divided: averageHeads's values bit for bit. One
            // row at a time, so that the row's sums stay in L1 while the heads are added.
            std::vector<double> sum(static_cast<std::size_t>(width));
            for (int l = w; l < L_; l += std::min(workers, L_))
                for (std::int64_t r = 0; r < len; ++r) {
                    std::fill(sum.begin(), sum.end(), 0.0);
                    for (int h = 0; h < H; ++h) {
                        const float* src = x + static_cast<std::size_t>(l * H + h) * cells + r * width;
                        for (std::int64_t j = 0; j < width; ++j) sum[static_cast<std::size_t>(j)] += src[j];
                    }
                    float* dst = bands_.empty() ? dense_[static_cast<std::size_t>(l)].values.data() + (r0 + r) * m_
                                                : bands_[static_cast<std::size_t>(l)].row(static_cast<int>(r0 + r));
                    for (std::int64_t j = 0; j < width; ++j)
                        dst[lo + j] = static_cast<float>(sum[static_cast<std::size_t>(j)] / H);
                    if (bands_.empty()) continue;
                    std::fill(dst, dst + lo, 0.0f);
                    std::fill(dst + lo + width, dst + bands_[0].rowWidth(static_cast<int>(r0 + r)), 0.0f);
                }
        });
    }

    void finish(BlockProducts& out, const ProductsAsked& asked) {
        if (!bands_.empty()) {
            rolloutInPlace(bands_, asked.residual);
            out.rollout = bands_.back().toHeadMap();
            return;
        }
        if (rollout_) out.rollout = attentionRollout(dense_, asked.residual);
        if (asked.layerMeans) out.layerMeans = std::move(dense_);
    }

private:
    int L_, m_;
    bool rollout_;
    std::vector<LowerBands> bands_;
    std::vector<HeadMap> dense_;
};

}  // namespace

std::vector<double> cosineFromGram(const std::vector<double>& gram) {
    const std::size_t k = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(gram.size()))));
    if (k * k != gram.size())
        throw Error("a Gram matrix must be square, got " + std::to_string(gram.size()) + " values");
    std::vector<double> out(gram.size(), 0.0);
    for (std::size_t a = 0; a < k; ++a)
        for (std::size_t b = 0; b < k; ++b) {
            const double na = gram[a * k + a], nb = gram[b * k + b];
            out[a * k + b] = na <= 0 || nb <= 0 ? 0.0 : gram[a * k + b] / std::sqrt(na * nb);
        }
    return out;
}

BlockProducts blockProducts(const Trace& trace, int block, const MapOptions& options, bool gram, bool layerMeans) {
    ProductsAsked asked;
    asked.layerMeans = layerMeans;
    return blockProductsVisiting(trace, block, options, gram, asked, {});
}

BlockProducts blockProductsVisiting(const Trace& trace, int block, const MapOptions& options, bool gram,
                                    const ProductsAsked& asked, const HeadRowsVisit& visit) {
    if (block < 0 || block >= static_cast<int>(trace.blocks().size()))
        throw Error("block " + std::to_string(block) + " is out of range");
    const BlockInfo& info = trace.blocks()[static_cast<std::size_t>(block)];
    const int L = info.layers, H = info.heads, k = L * H;
    BlockProducts out;
    if (gram) out.gram.assign(static_cast<std::size_t>(k) * k, 0.0);
    if (k == 0) return out;
    const std::pair<int, int> shape = mapShape(trace, block, 0);
    for (int l = 1; l < L; ++l)
        if (mapShape(trace, block, l) != shape)
            throw Error("block '" + info.name + "': layer " + std::to_string(l) + "'s maps are " +
                        std::to_string(mapShape(trace, block, l).first) + "x" +
                        std::to_string(mapShape(trace, block, l).second) + ", layer 0's " +
                        std::to_string(shape.first) + "x" + std::to_string(shape.second));
    const int n = shape.first, m = shape.second;
    if (asked.rollout) checkRolloutResidual(asked.residual);  // before the pass, not after it
    const Trace::Impl& impl = trace.impl();
    const int workers = std::min(coreCount(), k);
    const std::int64_t rowsPer = blockedConfig().rows;
    LayerMeans means(impl, block, L, n, m, rowsPer, asked, workers);
    // Each head's reader once (its keys packed, or its whole map for the variants that have no
    // row blocks), then one of forEachRowBlock's blocks at a time, so each value is Trace::map's.
    std::vector<RowsOf> readers(static_cast<std::size_t>(k));
    SharedKeys keys;
    translateTorchErrors("computing an attention map", [&] {
        onThreads(workers, [&](int w) {
            for (int a = w; a < k; a += workers)
                readers[static_cast<std::size_t>(a)] = rowsOf(impl, block, a / H, a % H, options, &keys);
        });
    });
    // [k, len, width]: every head's rows [r0, r0 + len) over keys [lo, lo + width). Allocated once
    // at its largest (a vector resized as the causal span widens reallocated, zeroed and copied it
    // block after block: a tenth of the pass at 4,096 tokens, docs/benchmarks.md).
    const std::unique_ptr<float[]> x(
            new float[static_cast<std::size_t>(k) * static_cast<std::size_t>(std::min<std::int64_t>(rowsPer, n)) *
                      static_cast<std::size_t>(m)]);
    for (std::int64_t r0 = 0; r0 < n; r0 += rowsPer) {
        const std::int64_t len = std::min<std::int64_t>(rowsPer, n - r0);
        // The keys any layer's rows may see here (layers differ under sliding windows).
        std::vector<KeySpan> spans;
        std::int64_t lo = m, hi = 0;
        for (int l = 0; l < L; ++l) {
            spans.push_back(keySpan(impl.blocks[static_cast<std::size_t>(block)].layers[l].mask, n, m, r0, len));
            if (spans.back().size()) lo = std::min(lo, spans.back().lo), hi = std::max(hi, spans.back().hi);
        }
        if (hi <= lo) {  // no row sees a key: all zero
            means.add(x.get(), r0, len, 0, 0, H, workers);
            continue;
        }
        const std::int64_t width = hi - lo, cells = len * width;
        translateTorchErrors("computing an attention map", [&] {
            onThreads(workers, [&](int w) {
                for (int a = w; a < k; a += workers) {
                    float* dst = x.get() + static_cast<std::size_t>(a) * cells;
                    const KeySpan span = spans[static_cast<std::size_t>(a / H)];
                    if (span.lo == lo && span.hi == hi) {  // the common case: rows as they come, in place
                        at::Tensor logs;
                        const at::Tensor rows =
                                readers[static_cast<std::size_t>(a)](r0, len, span, visit ? &logs : nullptr, dst);
                        if (visit)
                            visit(a, r0, len, span, rows.data_ptr<float>(),
                                  logs.defined() ? logs.data_ptr<float>() : nullptr);
                        if (rows.data_ptr<float>() != dst) std::copy_n(rows.data_ptr<float>(), cells, dst);
                        continue;
                    }
                    std::fill(dst, dst + cells, 0.0f);
                    if (!span.size()) continue;
                    at::Tensor logs;
                    const at::Tensor rows =
                            readers[static_cast<std::size_t>(a)](r0, len, span, visit ? &logs : nullptr, nullptr);
                    const float* src = rows.data_ptr<float>();
                    if (visit) visit(a, r0, len, span, src, logs.defined() ? logs.data_ptr<float>() : nullptr);
                    for (std::int64_t r = 0; r < len; ++r)
                        std::copy_n(src + r * span.size(), span.size(), dst + r * width + (span.lo - lo));
                }
            });
        });
        if (gram) translateTorchErrors("the head similarity", [&] { addGram(out.gram, x.get(), k, cells, workers); });
        means.add(x.get(), r0, len, lo, width, H, workers);
    }
    means.finish(out, asked);
    return out;
}

}  // namespace attnscope
