// RowMeasures' vectorised sums (analysis/row_measures.cpp: ATen's float log per block, 8-lane
// double sums, the chunked top-k) against plain double-precision loops over the same cells, on
// rows with zeros, tiny values, widths that are not a multiple of the lanes or the top-k chunk,
// key ranges that do not start at 0, and rows that are all zero; and the forward's memory check
// counting the capture at the capture dtype.
#include "analysis/row_measures.h"
#include "runtime/capture_type.h"
#include "runtime/memory.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

namespace test_row_measures {

using namespace attnscope;

namespace {

struct Reference {
    long long used = 0;
    double entropy = 0, distance = 0, keys = 0, first = 0, kl = 0, local = 0, sparse = 0, diagonal = 0;
    std::vector<double> column;
};

}  // namespace

TEST_CASE("RowMeasures' vectorised sums equal double-precision loops", "[row-measures]") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0, 1);
    const int rows = 37, cols = 301;
    const std::vector<int> keys = {0, 3, 150, 299, 3, -1, 400};
    PatternThresholds t;
    for (const int lo : {0, 5}) {
        const int hi = cols - 2, w = hi - lo;
        std::vector<float> p(static_cast<std::size_t>(rows) * w), q(p.size());
        for (int r = 0; r < rows; ++r) {
            double sp = 0, sq = 0;
            for (int j = 0; j < w; ++j) {
                float x = u(rng);
                x = x < 0.3f ? 0.0f : x < 0.35f ? x * 1e-30f : std::pow(x, 6.0f);  // zeros, tiny, peaked
                if (r == 4) x = 0;                                                 // an all-zero row
                p[static_cast<std::size_t>(r) * w + j] = x, sp += x;
                const float y = j % 11 == 0 ? 0.0f : u(rng);  // q = 0 where p > 0: the floor
                q[static_cast<std::size_t>(r) * w + j] = y, sq += y;
            }
            for (int j = 0; j < w; ++j) {
                if (sp > 0)
                    p[static_cast<std::size_t>(r) * w + j] =
                            static_cast<float>(p[static_cast<std::size_t>(r) * w + j] / sp);
                q[static_cast<std::size_t>(r) * w + j] =
                        static_cast<float>(q[static_cast<std::size_t>(r) * w + j] / sq);
            }
        }
        Reference ref;
        ref.column.assign(cols, 0.0);
        for (int r = 0; r < rows; ++r) {
            const float* row = p.data() + static_cast<std::size_t>(r) * w;
            const float* qr = q.data() + static_cast<std::size_t>(r) * w;
            if (std::all_of(row, row + w, [](float v) { return v == 0; })) continue;
            ++ref.used;
            const int a = r + (cols - rows);
            double kl = 0;
            for (int j = 0; j < w; ++j) {
                const double x = row[j];
                if (x > 0) ref.entropy -= x * std::log(x), kl += x * std::log(x / std::max<double>(qr[j], kKlFloor));
                ref.distance += x * std::abs(lo + j - a);
                if (lo + j == 0 || lo + j == 3 || lo + j == 150 || lo + j == 299) ref.keys += x;
                if (lo + j == 0) ref.first += x;
                if (std::abs(lo + j - a) <= t.localRadius) ref.local += x;
                if (lo + j == a) ref.diagonal += x;
                ref.column[static_cast<std::size_t>(lo + j)] += x;
            }
            ref.kl += std::max(kl, 0.0);
            std::vector<float> sorted(row, row + w);
            std::sort(sorted.begin(), sorted.end(), std::greater<float>());
            for (int j = 0; j < std::min(t.sparseKeys, w); ++j) ref.sparse += sorted[static_cast<std::size_t>(j)];
        }
        // Rows fed in uneven blocks, as forEachRowBlock's workers would.
        RowMeasures m(rows, cols, RowMeasures::All, keys, t);
        for (int r = 0; r < rows;) {
            const int count = std::min(rows - r, 1 + r % 9);
            m.addRows(r, count, p.data() + static_cast<std::size_t>(r) * w, lo, hi,
                      q.data() + static_cast<std::size_t>(r) * w);
            r += count;
        }
        const double n = static_cast<double>(ref.used);
        INFO("keys from " << lo);
        CHECK(ref.used == rows - 1);
        CHECK(m.entropy() == Approx(ref.entropy / n).epsilon(5e-7));    // float logs: 1 ulp each
        CHECK(m.distance() == Approx(ref.distance / n).epsilon(1e-7));  // float products
        CHECK(m.keyShare() == Approx(ref.keys / n).epsilon(1e-12));
        CHECK(m.firstShare() == Approx(ref.first / n).epsilon(1e-12));
        CHECK(m.kl() == Approx(ref.kl / n).epsilon(1e-6));
        const PatternScores s = m.patterns();
        CHECK(s.local == Approx(ref.local / n).epsilon(1e-12));
        CHECK(s.sparse == Approx(ref.sparse / n).epsilon(1e-12));
        const auto best = std::max_element(ref.column.begin(), ref.column.end());
        CHECK(s.globalKey == static_cast<int>(best - ref.column.begin()));
        CHECK(s.global == Approx(*best / n).epsilon(1e-6));
        if (lo == 0) CHECK(ref.first > 0);
    }
}

TEST_CASE("the forward's memory check counts the capture at the capture dtype", "[row-measures][memory]") {
    ForwardFootprint f;
    f.layers = 12, f.heads = 12, f.kvHeads = 4, f.headDim = 64, f.hidden = 768, f.inner = 2048;
    f.queries = f.keys = 4096;
    const std::uint64_t capture32 = 12ull * (4096 * 12 + 4096 * 4) * 64 * 4;
    const std::uint64_t full = f.bytes();
    {
        CaptureTypeScope half(at::kBFloat16);
        CHECK(full - f.bytes() == capture32 / 2);
        CaptureTypeScope none(std::nullopt);  // nested scopes restore the outer one
        CHECK(f.bytes() == full);
    }
    CHECK(f.bytes() == full);
    f.captureElementSize = 2;
    CHECK(full - f.bytes() == capture32 / 2);
}

TEST_CASE("the sparse score's top-k sum equals the sorted row's on long rows, with ties and peaks in one group",
          "[row-measures]") {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0, 1);
    PatternThresholds t;
    for (const int keys : {3, 1, 8, 9})
        for (const int w : {5, 17, 256, 700, 4099}) {
            t.sparseKeys = keys;
            for (int kind = 0; kind < 6; ++kind) {
                INFO("width " << w << ", row kind " << kind << ", " << keys << " keys");
                std::vector<float> row(static_cast<std::size_t>(w));
                for (int j = 0; j < w; ++j) {
                    float x = u(rng);
                    if (kind == 1) x = j % 16 == 5 ? 0.5f + 0.1f * u(rng) : 0.01f * x;  // the peaks share one lane
                    if (kind == 2) x = 0.25f;                                           // all ties
                    if (kind == 3) x = j >= w - 3 ? 0.9f : 0.001f * x;                  // the peaks in the tail
                    if (kind == 4) x = static_cast<float>(j) / static_cast<float>(w);   // rising: every value a new top
                    if (kind == 5) x = j % 3 == 0 ? 0.5f : 0.1f * x;  // ties at the top, a third of the row
                    row[static_cast<std::size_t>(j)] = x;
                }
                std::vector<float> sorted = row;
                std::sort(sorted.begin(), sorted.end(), std::greater<float>());
                double want = 0;
                for (int j = 0; j < std::min(t.sparseKeys, w); ++j) want += sorted[static_cast<std::size_t>(j)];
                RowMeasures m(1, w, RowMeasures::Patterns, {}, t);
                m.addRow(0, row.data(), 0, w);
                CHECK(m.patterns().sparse == want);
            }
        }
}

}  // namespace test_row_measures
