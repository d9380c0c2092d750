// Head metrics, pattern classes, similarity, rollout and flow on hand-made maps whose answers
// are worked out here by hand (or by an independent max-flow for random maps).
#include "attnscope/runtime/error.h"
#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/rollout.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace test_head_metrics {

using namespace attnscope;

namespace {

HeadMap fromRows(const std::vector<std::vector<double>>& rows) {
    HeadMap m{static_cast<int>(rows.size()), static_cast<int>(rows[0].size()), {}};
    for (const auto& r : rows)
        for (double v : r) m.values.push_back(static_cast<float>(v));
    return m;
}

HeadMap byRule(int n, double (*p)(int i, int j, int n)) {
    HeadMap m{n, n, std::vector<float>(static_cast<std::size_t>(n) * n)};
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) m.values[i * n + j] = static_cast<float>(p(i, j, n));
    return m;
}

// Edmonds-Karp on a dense capacity matrix: an independent max-flow for the checks below.
double denseMaxFlow(std::vector<std::vector<double>> cap, int s, int t) {
    const int V = static_cast<int>(cap.size());
    double total = 0;
    while (true) {
        std::vector<int> parent(V, -1);
        parent[s] = s;
        std::vector<int> queue{s};
        for (std::size_t q = 0; q < queue.size() && parent[t] < 0; ++q)
            for (int u = 0; u < V; ++u)
                if (parent[u] < 0 && cap[queue[q]][u] > 1e-12) parent[u] = queue[q], queue.push_back(u);
        if (parent[t] < 0) return total;
        double f = 1e300;
        for (int v = t; v != s; v = parent[v]) f = std::min(f, cap[parent[v]][v]);
        for (int v = t; v != s; v = parent[v]) cap[parent[v]][v] -= f, cap[v][parent[v]] += f;
        total += f;
    }
}

}  // namespace

TEST_CASE("attention distance and attention to chosen keys", "[metrics]") {
    // Self-attention 3x3: rows see keys at distances 0; 1 (0.5) and 0 (0.5); 2 (0.25), 1 (0.25), 0 (0.5).
    const HeadMap m = fromRows({{1, 0, 0}, {0.5, 0.5, 0}, {0.25, 0.25, 0.5}});
    CHECK(meanAttentionDistance(m) == Approx((0 + 0.5 + 0.75) / 3));
    CHECK(attentionToKeys(m, {0}) == Approx((1 + 0.5 + 0.25) / 3));
    CHECK(attentionToKeys(m, {2, 2, 7, -1}) == Approx(0.5 / 3));  // repeated and outside columns ignored
    // Cross map 2x3: query i aligned with key i + 1.
    const HeadMap cross = fromRows({{0.5, 0, 0.5}, {1, 0, 0}});
    CHECK(meanAttentionDistance(cross) == Approx((1.0 + 2.0) / 2));
    // An all-zero row (padding) is skipped.
    const HeadMap padded = fromRows({{1, 0}, {0, 0}});
    CHECK(attentionToKeys(padded, {0}) == Approx(1.0));
}

TEST_CASE("pattern classes follow the documented rules", "[metrics]") {
    const HeadMap diagonal = byRule(4, [](int i, int j, int) { return i == j ? 1.0 : 0.0; });
    const PatternScores d = patternScores(diagonal);
    CHECK(d.diagonal == Approx(1.0));
    CHECK(classifyPattern(diagonal) == PatternClass::Diagonal);

    const HeadMap previous = byRule(4, [](int i, int j, int) { return (i == 0 && j == 0) || j == i - 1 ? 1.0 : 0.0; });
    const PatternScores p = patternScores(previous);
    CHECK(p.diagonal == Approx(0.25));
    CHECK(p.previous == Approx(1.0));
    CHECK(meanAttentionDistance(previous) == Approx(0.75));
    CHECK(classifyPattern(previous) == PatternClass::PreviousToken);

    const HeadMap global = byRule(4, [](int, int j, int) { return j == 0 ? 1.0 : 0.0; });
    const PatternScores g = patternScores(global);
    CHECK(g.global == Approx(1.0));
    CHECK(g.globalKey == 0);
    CHECK(g.previous == Approx(1.0 / 3));  // only row 1's previous token is key 0
    CHECK(classifyPattern(global) == PatternClass::Global);

    // Uniform over |j - i| <= 1 on 8 tokens: D = (1/2 + 6/3 + 1/2) / 8, P = (6/3 + 1/2) / 7.
    const HeadMap local = byRule(8, [](int i, int j, int n) {
        const int lo = std::max(0, i - 1), hi = std::min(n - 1, i + 1);
        return j >= lo && j <= hi ? 1.0 / (hi - lo + 1) : 0.0;
    });
    const PatternScores l = patternScores(local);
    CHECK(l.diagonal == Approx(3.0 / 8));
    CHECK(l.previous == Approx(2.5 / 7));
    CHECK(l.local == Approx(1.0));
    CHECK(l.global == Approx((0.5 + 2.0 / 3) / 8));  // column 1: rows 0, 1, 2
    CHECK(classifyPattern(local) == PatternClass::Local);

    // Each query picks two far keys, (i + 5) mod 10 and (i + 7) mod 10: nothing positional.
    const HeadMap sparse =
            byRule(10, [](int i, int j, int) { return j == (i + 5) % 10 || j == (i + 7) % 10 ? 0.5 : 0.0; });
    const PatternScores s = patternScores(sparse);
    CHECK(s.local == Approx(0.0));
    CHECK(s.global == Approx(0.1));
    CHECK(s.sparse == Approx(1.0));
    CHECK(classifyPattern(sparse) == PatternClass::Sparse);

    const HeadMap uniform = byRule(10, [](int, int, int) { return 0.1; });
    CHECK(patternScores(uniform).sparse == Approx(0.3));
    CHECK(classifyPattern(uniform) == PatternClass::Mixed);
    CHECK(std::string(patternName(PatternClass::PreviousToken)) == "previous-token");

    SECTION("thresholds are parameters") {
        PatternThresholds t;
        t.sparse = 0.25;
        CHECK(classifyPattern(uniform, t) == PatternClass::Sparse);
    }
}

TEST_CASE("cosine similarity of maps, over the shared positions", "[metrics]") {
    const HeadMap id2 = fromRows({{1, 0}, {0, 1}});
    const HeadMap flat = fromRows({{0.5, 0.5}, {0.5, 0.5}});
    CHECK(mapCosine(id2, flat) == Approx(1 / std::sqrt(2.0)));
    const HeadMap id3 = fromRows({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}});
    CHECK(mapCosine(id3, id2) == Approx(1.0));  // the leading 2x2 of id3 is id2
    const HeadMap zero = fromRows({{0, 0}, {0, 0}});
    CHECK(mapCosine(zero, id2) == 0.0);
    const auto s = similarityMatrix({id2, flat, id3});
    REQUIRE(s.size() == 9);
    CHECK(s[0] == Approx(1.0));
    CHECK(s[1] == Approx(1 / std::sqrt(2.0)));
    CHECK(s[3] == s[1]);
    CHECK(s[5] == Approx(1 / std::sqrt(2.0)));
}

TEST_CASE("rollout and flow on a two-layer example worked by hand", "[rollout]") {
    // Â1 = 0.5·A1 + 0.5·I = [[1, 0], [0.25, 0.75]], Â2 = [[1, 0], [0.5, 0.5]].
    const HeadMap a1 = fromRows({{1, 0}, {0.5, 0.5}});
    const HeadMap a2 = fromRows({{1, 0}, {1, 0}});
    const HeadMap r = attentionRollout({a1, a2});
    CHECK(r.at(0, 0) == Approx(1.0));
    CHECK(r.at(0, 1) == Approx(0.0));
    CHECK(r.at(1, 0) == Approx(0.625));  // 0.5·1 + 0.5·0.25
    CHECK(r.at(1, 1) == Approx(0.375));  // 0.5·0.75
    // Flow from the top of position 1 to input 0: via (1,0) min(0.5, 1) + via (1,1) min(0.5, 0.25).
    const HeadMap f = attentionFlow({a1, a2});
    CHECK(f.at(0, 0) == Approx(1.0));
    CHECK(f.at(0, 1) == Approx(0.0).margin(1e-12));
    CHECK(f.at(1, 0) == Approx(0.75));
    CHECK(f.at(1, 1) == Approx(0.5));  // via (1,1): min(0.5, 0.75)

    SECTION("a flow that needs a reverse edge") {
        // residual 0, positions 0..2, 3 layers. From (3,0): a1=(2,1), a2=(2,2) with 0.5 each;
        // a1 -> b1=(1,1), b2=(1,2) 0.5 each; a2 -> b1 1; b1 -> (0,0) 0.5; b2 -> (0,0) 0.5.
        // A path through a1 -> b1 first blocks a2; the maximum 1 routes a1 -> b2 and a2 -> b1.
        const HeadMap top = fromRows({{0, 0.5, 0.5}, {0, 1, 0}, {0, 0, 1}});
        const HeadMap mid = fromRows({{1, 0, 0}, {0, 0.5, 0.5}, {0, 1, 0}});
        const HeadMap low = fromRows({{1, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}});
        FlowOptions o;
        o.residual = 0;
        o.rows = {0};
        const HeadMap g = attentionFlow({low, mid, top}, o);
        CHECK(g.at(0, 0) == Approx(1.0));
        CHECK(g.at(0, 1) == Approx(0.5));
        CHECK(g.at(0, 2) == Approx(0.5));
        CHECK(g.at(1, 0) == 0.0f);  // rows not asked for stay zero
        // With residual 0 rollout is the plain product low·… : row 0 of top·mid·low.
        const HeadMap r3 = attentionRollout({low, mid, top}, 0.0);
        CHECK(r3.at(0, 0) == Approx(0.5 * 0.5 * 0.5 + 0.5 * 0.5 * 0.5 + 0.5 * 1 * 0.5));
    }
    SECTION("bad input is an Error") {
        CHECK_THROWS_WITH(attentionRollout({}), Catch::Contains("at least one layer"));
        CHECK_THROWS_WITH(attentionFlow({a1, fromRows({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}})}),
                          Catch::Contains("square maps of one size"));
        FlowOptions o;
        o.rows = {2};
        CHECK_THROWS_WITH(attentionFlow({a1}, o), Catch::Contains("row 2 is out of range"));
        o.rows = {};
        o.progress = [](long long, long long) { return false; };
        CHECK_THROWS_AS(attentionFlow({a1}, o), Cancelled);
    }
}

TEST_CASE("attention flow equals an independent max-flow on random causal and full maps", "[rollout]") {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (bool causal : {true, false}) {
        const int n = 5, L = 3;
        std::vector<HeadMap> layers;
        for (int l = 0; l < L; ++l) {
            HeadMap m{n, n, std::vector<float>(n * n, 0.f)};
            for (int i = 0; i < n; ++i) {
                double sum = 0;
                std::vector<double> row(n, 0.0);
                for (int j = 0; j < n; ++j)
                    if (!causal || j <= i) sum += row[j] = u(rng) < 0.3 ? 0.0 : u(rng);
                if (sum == 0) row[0] = sum = 1;
                for (int j = 0; j < n; ++j) m.values[i * n + j] = static_cast<float>(row[j] / sum);
            }
            layers.push_back(m);
        }
        const HeadMap flow = attentionFlow(layers);
        // The same graph as a dense matrix, Â built here from the float maps.
        const int V = (L + 1) * n;
        std::vector<std::vector<double>> cap(V, std::vector<double>(V, 0.0));
        for (int l = 0; l < L; ++l)
            for (int i = 0; i < n; ++i) {
                double sum = 0;
                for (int j = 0; j < n; ++j) sum += 0.5 * layers[l].at(i, j) + (i == j ? 0.5 : 0.0);
                for (int j = 0; j < n; ++j)
                    cap[(l + 1) * n + i][l * n + j] = (0.5 * layers[l].at(i, j) + (i == j ? 0.5 : 0.0)) / sum;
            }
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                INFO("causal " << causal << " row " << i << " key " << j);
                CHECK(flow.at(i, j) == Approx(denseMaxFlow(cap, L * n + i, j)).margin(1e-6));
            }
    }
}

}  // namespace test_head_metrics
