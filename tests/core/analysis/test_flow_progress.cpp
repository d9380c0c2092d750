// Attention flow on long inputs (analysis/rollout.h): one layer is its own flow, computed at
// once (a 1,500-token map took over 20 s of max-flows), and deeper flows report progress, and so
// can be cancelled, within a row rather than only after each row of n max-flows.
#include "attnscope/analysis/rollout.h"
#include "attnscope/runtime/error.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <random>

namespace test_flow_progress {

using namespace attnscope;

namespace {

HeadMap randomCausalMap(int n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    HeadMap m{n, n, std::vector<float>(static_cast<std::size_t>(n) * n, 0.0f)};
    for (int i = 0; i < n; ++i) {
        float sum = 0;
        for (int j = 0; j <= i; ++j) sum += m.values[static_cast<std::size_t>(i) * n + j] = u(rng);
        for (int j = 0; j <= i; ++j) m.values[static_cast<std::size_t>(i) * n + j] /= sum;
    }
    return m;
}

}  // namespace

TEST_CASE("attention flow of one layer is its residual-mixed map, at once for 1,500 tokens", "[rollout][flow]") {
    const int n = 1500;
    const HeadMap a = randomCausalMap(n, 3);
    long long calls = 0, last = -1, total = -1;
    FlowOptions o;
    o.progress = [&](long long done, long long all) {
        ++calls, last = done, total = all;
        return true;
    };
    const auto start = std::chrono::steady_clock::now();
    const HeadMap flow = attentionFlow({a}, o);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 10.0);  // was over 20 s; a copy now
    CHECK(calls >= 1);
    CHECK(last == total);
    CHECK(total == static_cast<long long>(n) * n);
    // The one arc from (1, i) to (0, j) carries Â[i][j] = (0.5 A[i][j] + 0.5 [i = j]) / row sum (= 1).
    for (int i : {0, 1, 700, n - 1})
        for (int j : {0, i / 2, i}) {
            INFO(i << "," << j);
            CHECK(flow.at(i, j) == Approx(0.5 * a.at(i, j) + (i == j ? 0.5 : 0.0)).margin(1e-6));
        }
    CHECK(flow.at(0, 1) == 0.0f);
}

TEST_CASE("attention flow reports progress within a row, and stops there when cancelled", "[rollout][flow]") {
    const int n = 200;
    const std::vector<HeadMap> layers = {randomCausalMap(n, 1), randomCausalMap(n, 2)};
    FlowOptions o;
    o.rows = {n - 1};  // one row: n max-flows
    long long calls = 0;
    o.progress = [&](long long, long long) {
        ++calls;
        return true;
    };
    attentionFlow(layers, o);
    CHECK(calls >= n / 64);  // one call per row before
    long long seen = 0, doneAtStop = -1;
    o.progress = [&](long long done, long long) {
        doneAtStop = done;
        return ++seen < 2;  // stop at the second report
    };
    CHECK_THROWS_AS(attentionFlow(layers, o), Cancelled);
    CHECK(seen == 2);
    CHECK(doneAtStop < n);  // inside the first row
}

}  // namespace test_flow_progress
