#include "blocked_attention.h"

#include "dot_kernels.h"

#include "attnscope/runtime/error.h"
#include "runtime/blas_threads.h"
#include "runtime/vector_math.h"

#include <ATen/ThreadLocalState.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace attnscope {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

std::mutex configLock;

BlockedConfig& currentConfig() {
    static BlockedConfig config = [] {
        BlockedConfig c;
        if (const char* s = std::getenv("ATTNSCOPE_ATTN_STRIPING")) {
            if (!std::strcmp(s, "blas"))
                c.striping = Striping::Blas;
            else if (!std::strcmp(s, "heads"))
                c.striping = Striping::Heads;
            else if (!std::strcmp(s, "rows"))
                c.striping = Striping::Rows;
        }
        if (const char* s = std::getenv("ATTNSCOPE_ATTN_ROWS"); s && std::atoi(s) > 0) c.rows = std::atoi(s);
        if (const char* s = std::getenv("ATTNSCOPE_ATTN_KERNELS"); s && !std::strcmp(s, "blas")) c.ownKernels = false;
        if (const char* s = std::getenv("ATTNSCOPE_DEVICE_BLOCK_CELLS"); s && std::atoll(s) > 0)
            c.deviceCells = std::atoll(s);
        return c;
    }();
    return config;
}

int workerCount(const BlockedConfig& config, std::int64_t items) {
    if (config.striping == Striping::Blas) return 1;
    const int cores =
            config.threads > 0 ? config.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return static_cast<int>(std::min<std::int64_t>(cores, items));
}

// -inf where query row r (absolute start + r) may not see key column c (absolute lo + c), on a
// [..., len, W] block of logits (leading dims: heads). Only the bands where the limits fall are
// touched: the causal limit cuts at most len - 1 columns at the block's right edge, the window at
// most len - 1 at its left. bands = false: the padding mask only (the fused softmax applies the
// causal limit and window).
void maskBlock(at::Tensor& logits, const MaskSpec& mask, std::int64_t n, std::int64_t m, std::int64_t start,
               std::int64_t lo, bool bands = true) {
    const std::int64_t len = logits.size(-2), W = logits.size(-1), offset = m - n;
    const auto flags = logits.options().dtype(at::kBool);
    if (bands && mask.causal) {  // masked: lo + c > start + r + offset, i.e. c > r + u
        const std::int64_t u = start + offset - lo, first = std::max<std::int64_t>(0, u + 1);
        if (first < W)
            logits.narrow(-1, first, W - first)
                    .masked_fill_(at::ones({len, W - first}, flags).triu_(u + 1 - first), kNegInf);
    }
    if (bands && mask.window > 0) {  // masked: lo + c <= start + r + offset - window, i.e. c <= r + w0
        const std::int64_t w0 = start + offset - mask.window - lo, end = std::min(W, len + w0);
        if (end > 0) logits.narrow(-1, 0, end).masked_fill_(at::ones({len, end}, flags).tril_(w0), kNegInf);
    }
    if (mask.keyAllowed.defined())
        logits.masked_fill_(mask.keyAllowed.narrow(0, lo, W).logical_not().to(logits.device()).unsqueeze(0), kNegInf);
    if (mask.blocked.defined())
        logits.masked_fill_(mask.blocked.narrow(0, start, len).narrow(1, lo, W).to(logits.device()), kNegInf);
}

std::int64_t blockCount(std::int64_t n, std::int64_t rows) { return (n + rows - 1) / rows; }

}  // namespace

BlockedConfig blockedConfig() {
    std::lock_guard<std::mutex> hold(configLock);
    return currentConfig();
}

void setBlockedConfig(const BlockedConfig& config) {
    std::lock_guard<std::mutex> hold(configLock);
    currentConfig() = config;
    if (currentConfig().rows < 1) currentConfig().rows = 1;
    if (currentConfig().deviceCells < 1) currentConfig().deviceCells = 1;
}

KeySpan keySpan(const MaskSpec& mask, std::int64_t n, std::int64_t m, std::int64_t start, std::int64_t len) {
    const std::int64_t offset = m - n;
    KeySpan span{0, m};
    if (mask.causal) span.hi = std::clamp<std::int64_t>(start + len + offset, 0, m);  // the last row's last key + 1
    if (mask.window > 0)
        span.lo = std::clamp<std::int64_t>(start + offset - mask.window + 1, 0, m);  // the first row's first key
    return span;
}

PackedKeys packKeys(const at::Tensor& k) {
    PackedKeys packed;
    if (!blockedConfig().ownKernels || !dotk::supported() || k.scalar_type() != at::kFloat || k.dim() != 2 ||
        k.stride(1) != 1 || !k.device().is_cpu())
        return packed;
    const std::int64_t m = k.size(0), d = k.size(1);
    packed.panels = at::empty({dotk::panels(m), d, dotk::kPanel}, k.options());
    dotk::packKeys(k.data_ptr<float>(), m, d, k.stride(0), packed.panels.data_ptr<float>());
    return packed;
}

namespace {

// logits [len, span.size()] = alpha · qRows · k[span]ᵀ from the packed panels: straight into
// logits when the span starts on a panel, else through whole panels and a copy.
void packedScores(at::Tensor& logits, const at::Tensor& qRows, const PackedKeys& packed, KeySpan span, double alpha) {
    const std::int64_t len = qRows.size(0), d = qRows.size(1), W = span.size();
    const std::int64_t p0 = span.lo / dotk::kPanel, count = dotk::panels(span.hi) - p0,
                       offset = span.lo - p0 * dotk::kPanel;
    const float* q = qRows.data_ptr<float>();
    if (offset == 0)
        return dotk::scores(q, qRows.stride(0), len, d, packed.panels.data_ptr<float>(), p0, count, W,
                            static_cast<float>(alpha), logits.data_ptr<float>(), W);
    at::Tensor whole = at::empty({len, count * dotk::kPanel}, logits.options());
    dotk::scores(q, qRows.stride(0), len, d, packed.panels.data_ptr<float>(), p0, count, count * dotk::kPanel,
                 static_cast<float>(alpha), whole.data_ptr<float>(), whole.size(1));
    logits.copy_(whole.narrow(1, offset, W));
}

}  // namespace

at::Tensor packedRowProducts(const at::Tensor& qRows, const PackedKeys& packed, KeySpan span) {
    const at::Tensor q = qRows.scalar_type() == at::kFloat && qRows.stride(1) == 1 ? qRows : qRows.to(at::kFloat).contiguous();
    at::Tensor out = at::empty({q.size(0), span.size()}, q.options());
    if (span.size()) packedScores(out, q, packed, span, 1.0);
    return out;
}

at::Tensor blockProbs(const at::Tensor& qRows, const at::Tensor& k, const MaskSpec& mask, const ScoreSpec& score,
                      int head, double temperature, std::int64_t n, std::int64_t start, KeySpan span,
                      const PackedKeys& packed, at::Tensor* logs, float* into) {
    if (logs) *logs = at::Tensor();
    const std::int64_t len = qRows.size(0), W = span.size(), m = k.size(0);
    // The scale (and 1/T where there is no cap) rides in the product's alpha, as in attentionProbs.
    const double alpha = score.softcap > 0 ? score.scale / score.softcap : score.scale / temperature;
    at::Tensor logits = into && qRows.scalar_type() == at::kFloat && qRows.is_cpu()
                                ? at::from_blob(into, {len, W}, qRows.options())
                                : at::empty({len, W}, qRows.options());
    if (!packed.empty() && qRows.scalar_type() == at::kFloat && qRows.stride(1) == 1)
        packedScores(logits, qRows, packed, span, alpha);
    else
        at::addmm_out(logits, logits, qRows, k.narrow(0, span.lo, W).t(), /*beta=*/0, alpha);
    if (score.softcap > 0) logits.tanh_().mul_(score.softcap / temperature);
    if (!score.alibiSlopes.empty()) {
        const double slope = score.alibiSlopes.at(static_cast<std::size_t>(head));
        logits.add_(at::arange(span.lo, span.hi, logits.options()).mul_(slope / temperature).unsqueeze(0));
    }
    if (score.bias.defined())
        logits.add_(score.bias[head].narrow(0, start, len).narrow(1, span.lo, W).to(logits.options()),
                    1.0 / temperature);
    if (logits.scalar_type() == at::kFloat && logits.is_contiguous() && logits.is_cpu()) {
        // The fused row softmax (runtime/vector_math.h), the causal limit and the window as each
        // row's range of columns: row r sees columns (r + w0, r + u] (see maskBlock).
        maskBlock(logits, mask, n, m, start, span.lo, /*bands=*/false);
        const std::int64_t u = start + (m - n) - span.lo, w0 = start + (m - n) - mask.window - span.lo;
        float* data = logits.data_ptr<float>();
        if (logs) {
            *logs = at::empty({len, W}, logits.options());
            float* lg = logs->data_ptr<float>();
            for (std::int64_t r = 0; r < len; ++r)
                vmath::softmaxRowLogs(data + r * W, lg + r * W, W, mask.window > 0 ? r + w0 + 1 : 0,
                                      mask.causal ? r + u + 1 : W);
            return logits;
        }
        for (std::int64_t r = 0; r < len; ++r)
            vmath::softmaxRow(data + r * W, W, mask.window > 0 ? r + w0 + 1 : 0, mask.causal ? r + u + 1 : W);
        return logits;
    }
    maskBlock(logits, mask, n, m, start, span.lo);
    if (logits.scalar_type() == at::kHalf || logits.scalar_type() == at::kBFloat16)
        return at::softmax(logits, -1, at::kFloat);
    return at::softmax(logits, -1);
}

int coreCount() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void onThreads(int threads, const std::function<void(int)>& work) {
    if (threads <= 1) return work(0);
    // Grad mode, inference mode and the memory-reporting hooks are per thread: workers run
    // under the caller's.
    const at::ThreadLocalState callerState;
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(threads));
    SingleThreadedBlas blas;
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
        pool.emplace_back([&, t] {
            try {
                at::ThreadLocalStateGuard stateGuard(callerState);
                work(t);
            } catch (...) {
                failures[static_cast<std::size_t>(t)] = std::current_exception();
            }
        });
    }
    try {
        work(0);
    } catch (...) {
        failures[0] = std::current_exception();
    }
    for (auto& th : pool) th.join();
    for (auto& f : failures)
        if (f) std::rethrow_exception(f);
}

void stripedForEach(std::int64_t count, int threads, const std::function<void(std::int64_t)>& work) {
    if (threads <= 1 || count <= 1) {
        for (std::int64_t i = 0; i < count; ++i) work(i);
        return;
    }
    onThreads(threads, [&](int t) {
        for (std::int64_t i = t; i < count; i += threads) work(i);
    });
}

namespace {

// The forward's blocks through dot_kernels.h: each group's keys packed once, then per block the
// scores, exp(x - max) over each row's keys (vmath::expRow) and the weighted values scaled by
// each row's 1/Σ, in one [rows, keys] float buffer. Equal to blockProbs + mm within float
// rounding (the sums run in another order, the 1/Σ is applied after the sum).
struct KernelBlocks {
    bool on = false;
    std::vector<PackedKeys> packed;  // per key/value group

    void block(const at::Tensor& q, const at::Tensor& v, at::Tensor& context, const MaskSpec& mask, double alpha,
               std::int64_t h, std::int64_t g, std::int64_t start, std::int64_t len) const {
        const std::int64_t n = q.size(1), d = q.size(2), m = v.size(1), dv = v.size(2);
        const KeySpan span = keySpan(mask, n, m, start, len);
        float* out = context.data_ptr<float>() + (h * n + start) * dv;
        if (span.size() == 0) {  // rows that may see no key: softmax over nothing, as the unblocked path gives
            std::fill(out, out + len * dv, std::numeric_limits<float>::quiet_NaN());
            return;
        }
        const std::int64_t p0 = span.lo / dotk::kPanel, p1 = dotk::panels(span.hi), width = (p1 - p0) * dotk::kPanel;
        const std::int64_t offset = span.lo - p0 * dotk::kPanel, W = span.size();
        at::Tensor buffer = at::empty({len, width + 1}, context.options());  // the scores, then a column of 1/Σ
        float* s = buffer.data_ptr<float>();
        float* inverse = s + len * width;
        const float* qRows = q.data_ptr<float>() + h * q.stride(0) + start * q.stride(1);
        dotk::scores(qRows, q.stride(1), len, d, packed[static_cast<std::size_t>(g)].panels.data_ptr<float>(), p0,
                     p1 - p0, width, static_cast<float>(alpha), s, width);
        // Row r sees columns (r + w0, r + u] of the span (maskBlock's bands), offset in the buffer.
        const std::int64_t u = start + (m - n) - span.lo, w0 = start + (m - n) - mask.window - span.lo;
        for (std::int64_t r = 0; r < len; ++r) {
            const std::int64_t lo = mask.window > 0 ? std::max<std::int64_t>(0, r + w0 + 1) : 0;
            const std::int64_t hi = mask.causal ? std::min(W, r + u + 1) : W;
            inverse[r] = vmath::expRow(s + r * width, width, offset + lo, offset + std::max(lo, hi));
        }
        dotk::weightedSum(s + offset, width, len, W, v.data_ptr<float>() + g * v.stride(0) + span.lo * v.stride(1),
                          v.stride(1), dv, inverse, out, dv);
    }
};

KernelBlocks kernelBlocks(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                          const ScoreSpec& score, const BlockedConfig& config) {
    KernelBlocks fast;
    const auto f32 = [](const at::Tensor& t) { return t.scalar_type() == at::kFloat && t.stride(2) == 1; };
    if (!config.ownKernels || !dotk::supported() || !f32(q) || !f32(k) || !f32(v) || v.size(2) % dotk::kPanel != 0 ||
        score.softcap > 0 || !score.alibiSlopes.empty() || score.bias.defined() || mask.keyAllowed.defined() ||
        mask.blocked.defined())
        return fast;
    for (std::int64_t g = 0; g < k.size(0); ++g) {
        fast.packed.push_back(packKeys(k[g]));
        if (fast.packed.back().empty()) return KernelBlocks{};  // packKeys declined (e.g. not on the CPU)
    }
    fast.on = true;
    return fast;
}

}  // namespace

at::Tensor blockedAttend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                         const ScoreSpec& score, const LayerRun& run) {
    const std::int64_t H = q.size(0), n = q.size(1), m = k.size(1), Hkv = k.size(0), dv = v.size(2);
    if (!score.alibiSlopes.empty() && static_cast<std::int64_t>(score.alibiSlopes.size()) != H)
        throw Error("attention: " + std::to_string(score.alibiSlopes.size()) + " ALiBi slopes for " +
                    std::to_string(H) + " heads");
    const BlockedConfig config = blockedConfig();
    const std::int64_t rows = config.rows, blocks = blockCount(n, rows), perGroup = H / Hkv;
    at::Tensor context = at::zeros({H, n, dv}, v.options());
    std::vector<std::int64_t> heads;  // masked heads stay zero and are not computed
    for (std::int64_t h = 0; h < H; ++h)
        if (std::find(run.maskedHeads.begin(), run.maskedHeads.end(), h) == run.maskedHeads.end()) heads.push_back(h);
    const KernelBlocks fast = kernelBlocks(q, k, v, mask, score, config);
    const auto one = [&](std::int64_t h, std::int64_t b) {
        const std::int64_t g = h / perGroup, start = b * rows, len = std::min(rows, n - start);
        if (fast.on) return fast.block(q, v, context, mask, score.scale / run.temperature, h, g, start, len);
        const KeySpan span = keySpan(mask, n, m, start, len);
        at::Tensor out = context[h].narrow(0, start, len);
        if (span.size() == 0) {  // rows that may see no key: softmax over nothing, as the unblocked path gives
            out.fill_(std::numeric_limits<double>::quiet_NaN());
            return;
        }
        const at::Tensor probs = blockProbs(q[h].narrow(0, start, len), k[g], mask, score, static_cast<int>(h),
                                            run.temperature, n, start, span);
        at::mm_out(out, probs.to(v.scalar_type()), v[g].narrow(0, span.lo, span.size()));
    };
    const auto count = static_cast<std::int64_t>(heads.size()) * blocks;
    const int threads = workerCount(config, count);
    if (config.striping == Striping::Heads && threads > 1) {
        // Worker t takes whole heads t, t + threads, ...
        const auto H2 = static_cast<std::int64_t>(heads.size());
        stripedForEach(std::min<std::int64_t>(threads, H2), threads, [&](std::int64_t t) {
            for (std::int64_t i = t; i < H2; i += threads)
                for (std::int64_t b = 0; b < blocks; ++b) one(heads[static_cast<std::size_t>(i)], b);
        });
    } else {
        // Row-block-major order: item i is block i / heads of head i % heads, so with the
        // modulo striping each worker gets every head's blocks in turn (causal costs balance).
        const auto hs = static_cast<std::int64_t>(heads.size());
        stripedForEach(count, threads, [&](std::int64_t i) { one(heads[static_cast<std::size_t>(i % hs)], i / hs); });
    }
    return context;
}

std::int64_t deviceBlockRows(std::int64_t heads, std::int64_t n, std::int64_t m) {
    const std::int64_t rows = blockedConfig().deviceCells / std::max<std::int64_t>(1, heads * m);
    return std::clamp<std::int64_t>(rows, 1, std::max<std::int64_t>(1, n));
}

namespace {

// The context through LibTorch's fused attention (flash or memory-efficient kernels on a GPU: no
// [H, n, m] scores at all), where the logits are plain scaled products under a causal or no mask;
// undefined otherwise, and on LibTorch 1.x, which has no scaled_dot_product_attention. The maps
// never come from here: they are computed from the captured Q and K.
at::Tensor fusedAttend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                       const ScoreSpec& score, const LayerRun& run) {
#if TORCH_VERSION_MAJOR >= 2
    const std::int64_t H = q.size(0), Hkv = k.size(0), n = q.size(1), m = k.size(1);
    if (!score.plain() || mask.window > 0 || mask.keyAllowed.defined() || mask.blocked.defined() ||
        (mask.causal && n != m) || H % Hkv != 0)
        return {};
    // Query head h reads kv head h / (H / Hkv), as attentionProbs groups them.
    const at::Tensor kh = Hkv == H ? k : k.repeat_interleave(H / Hkv, 0);
    const at::Tensor vh = Hkv == H ? v : v.repeat_interleave(H / Hkv, 0);
    at::Tensor context = at::scaled_dot_product_attention(q.unsqueeze(0), kh.unsqueeze(0), vh.unsqueeze(0),
                                                          std::nullopt, 0.0, mask.causal, score.scale / run.temperature)
                                 .squeeze(0);
    zeroMaskedHeads(context, run);
    return context;
#else
    (void)q, (void)k, (void)v, (void)mask, (void)score, (void)run;
    return {};
#endif
}

}  // namespace

at::Tensor deviceBlockedAttend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                               const ScoreSpec& score, const LayerRun& run) {
    if (at::Tensor fused = fusedAttend(q, k, v, mask, score, run); fused.defined()) return fused;
    const std::int64_t H = q.size(0), n = q.size(1), m = k.size(1), dv = v.size(2);
    const std::int64_t rows = deviceBlockRows(H, n, m);
    const bool masked = mask.causal || mask.window > 0 || mask.keyAllowed.defined() || mask.blocked.defined();
    at::Tensor context = at::empty({H, n, dv}, v.options());
    for (std::int64_t start = 0; start < n; start += rows) {
        const std::int64_t len = std::min(rows, n - start);
        const KeySpan span = keySpan(mask, n, m, start, len);
        at::Tensor out = context.narrow(1, start, len);
        if (span.size() == 0) {  // rows that may see no key: softmax over nothing, as the unblocked path gives
            out.fill_(std::numeric_limits<double>::quiet_NaN());
            continue;
        }
        const std::int64_t W = span.size();
        ScoreSpec spanScore = score;  // the block's rows and keys of a position bias
        if (score.bias.defined()) spanScore.bias = score.bias.narrow(1, start, len).narrow(2, span.lo, W);
        at::Tensor additive;  // [len, W]: the causal and window bands and the padding mask of this block only
        if (masked) {
            additive = at::zeros({len, W}, q.options());
            maskBlock(additive, mask, n, m, start, span.lo);
        }
        const at::Tensor probs = attentionProbs(q.narrow(1, start, len), k.narrow(1, span.lo, W), additive, spanScore,
                                                run.temperature, span.lo);  // [H, len, W]
        out.copy_(weightedValues(probs, v.narrow(1, span.lo, W)));
    }
    zeroMaskedHeads(context, run);
    return context;
}

at::Tensor blockedHeadProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, const ScoreSpec& score,
                            int head, double temperature) {
    const std::int64_t n = q.size(0), m = k.size(0);
    const bool half = q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16;
    at::Tensor out = at::zeros({n, m}, q.options().dtype(half ? at::kFloat : q.scalar_type()));
    const BlockedConfig config = blockedConfig();
    const std::int64_t rows = config.rows, blocks = blockCount(n, rows);
    // Small maps are not worth a thread start.
    const int threads = n * m < (1 << 18) ? 1 : workerCount(config, blocks);
    const PackedKeys packed = packKeys(k);
    stripedForEach(blocks, threads, [&](std::int64_t b) {
        const std::int64_t start = b * rows, len = std::min(rows, n - start);
        const KeySpan span = keySpan(mask, n, m, start, len);
        if (span.size() == 0) {
            out.narrow(0, start, len).fill_(std::numeric_limits<double>::quiet_NaN());
            return;
        }
        out.narrow(0, start, len)
                .narrow(1, span.lo, span.size())
                .copy_(blockProbs(q.narrow(0, start, len), k, mask, score, head, temperature, n, start, span, packed));
    });
    return out;
}

}  // namespace attnscope
