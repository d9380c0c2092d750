// The query–key space (analysis/qk_space.h) against an independent computation: the same points
// built here from the reference forward's q and k, translated, centred, and their two leading
// principal axes found by plain power iteration with deflation in double precision.
#include "attnscope/analysis/qk_space.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "reference_gpt2.h"

#include <cmath>
#include <numeric>

namespace test_qk_space {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

using Matrix = std::vector<std::vector<double>>;  // [points][dim]

// The leading eigenvector of the covariance XᵀX of centred points, by power iteration from a
// fixed start, after removing the directions in `found`.
std::vector<double> powerAxis(const Matrix& X, const std::vector<std::vector<double>>& found) {
    const std::size_t d = X[0].size();
    std::vector<double> v(d);
    for (std::size_t c = 0; c < d; ++c) v[c] = 1.0 + 0.1 * c;
    for (int it = 0; it < 5000; ++it) {
        std::vector<double> w(d, 0.0);
        for (const auto& x : X) {
            const double t = std::inner_product(x.begin(), x.end(), v.begin(), 0.0);
            for (std::size_t c = 0; c < d; ++c) w[c] += t * x[c];
        }
        for (const auto& f : found) {  // deflate
            const double t = std::inner_product(w.begin(), w.end(), f.begin(), 0.0);
            for (std::size_t c = 0; c < d; ++c) w[c] -= t * f[c];
        }
        const double norm = std::sqrt(std::inner_product(w.begin(), w.end(), w.begin(), 0.0));
        for (auto& x : w) x /= norm;
        v = w;
    }
    // The sign qk_space.h fixes: the largest-magnitude entry positive.
    std::size_t big = 0;
    for (std::size_t c = 1; c < d; ++c)
        if (std::abs(v[c]) > std::abs(v[big])) big = c;
    if (v[big] < 0)
        for (auto& x : v) x = -x;
    return v;
}

// One head's points the way qk_space.h describes, from reference vectors q[i*d+c], k[j*d+c].
void addHead(Matrix& X, const std::vector<double>& q, const std::vector<double>& k, int n, int d, bool translate) {
    std::vector<double> qm(d, 0.0), km(d, 0.0);
    for (int i = 0; i < n; ++i)
        for (int c = 0; c < d; ++c) qm[c] += q[i * d + c] / n, km[c] += k[i * d + c] / n;
    for (int i = 0; i < n; ++i) X.emplace_back(q.begin() + i * d, q.begin() + (i + 1) * d);
    for (int j = 0; j < n; ++j) {
        std::vector<double> p(k.begin() + j * d, k.begin() + (j + 1) * d);
        if (translate)
            for (int c = 0; c < d; ++c) p[c] += qm[c] - km[c];
        X.push_back(p);
    }
}

void requireSameProjection(const QkSpace& got, Matrix X) {
    REQUIRE(got.points() == static_cast<int>(X.size()));
    const std::size_t d = X[0].size();
    std::vector<double> mean(d, 0.0);
    for (const auto& x : X)
        for (std::size_t c = 0; c < d; ++c) mean[c] += x[c] / X.size();
    for (auto& x : X)
        for (std::size_t c = 0; c < d; ++c) x[c] -= mean[c];
    const auto a1 = powerAxis(X, {});
    const auto a2 = powerAxis(X, {a1});
    double axisDiff = 0, coordDiff = 0, meanDiff = 0;
    for (std::size_t c = 0; c < d; ++c) {
        axisDiff = std::max({axisDiff, std::abs(got.axes[c] - a1[c]), std::abs(got.axes[d + c] - a2[c])});
        meanDiff = std::max(meanDiff, std::abs(got.mean[c] - mean[c]));
    }
    double total = 0, var1 = 0;
    for (std::size_t p = 0; p < X.size(); ++p) {
        const double x = std::inner_product(X[p].begin(), X[p].end(), a1.begin(), 0.0);
        const double y = std::inner_product(X[p].begin(), X[p].end(), a2.begin(), 0.0);
        coordDiff = std::max({coordDiff, std::abs(got.x[p] - x), std::abs(got.y[p] - y)});
        total += std::inner_product(X[p].begin(), X[p].end(), X[p].begin(), 0.0);
        var1 += x * x;
    }
    INFO("axes " << axisDiff << ", coordinates " << coordDiff << ", mean " << meanDiff);
    CHECK(axisDiff < 1e-4);
    CHECK(coordDiff < 1e-4);
    CHECK(meanDiff < 1e-5);
    CHECK(got.explained[0] == Approx(var1 / total).epsilon(1e-4));
    CHECK(got.explained[0] >= got.explained[1]);
}

}  // namespace

TEST_CASE("query-key space: PCA of one head equals power iteration on the reference vectors", "[qk-space]") {
    Gpt2Spec spec;
    spec.layers = 2;
    const auto c = makeGpt2(spec, 9);
    const auto dir = freshDir("qk-gpt2");
    writeGpt2Folder(dir, c);
    const std::vector<long long> ids = {3, 17, 0, 39, 22, 5, 5, 11, 30, 1, 8, 14};
    auto trace = loadCpu(dir)->forward(ids64(ids));
    const auto ref = referenceGpt2(c, ids);
    const int n = static_cast<int>(ids.size());
    const int d = static_cast<int>(ref.q[0][0].size()) / n;

    for (bool translate : {true, false}) {
        QkSpaceOptions o;
        o.head = 2;
        o.translateKeys = translate;
        const QkSpace s = qkSpace(*trace, 0, 1, o);
        CHECK(s.dim == d);
        Matrix X;
        addHead(X, ref.q[1][2], ref.k[1][2], n, d, translate);
        requireSameProjection(s, X);
        REQUIRE(s.points() == 2 * n);
        CHECK(!s.isKey[n - 1]);
        CHECK(s.isKey[n]);
        CHECK(s.position[n + 3] == 3);
        if (translate) {  // both clouds share a centre, in the plane too
            double qx = 0, kx = 0, qy = 0, ky = 0;
            for (int i = 0; i < n; ++i) qx += s.x[i], qy += s.y[i], kx += s.x[n + i], ky += s.y[n + i];
            CHECK(std::abs(qx - kx) / n < 1e-4);
            CHECK(std::abs(qy - ky) / n < 1e-4);
        }
    }

    SECTION("every head of a layer, projected jointly") {
        const QkSpace all = qkSpace(*trace, 0, 0, QkSpaceOptions{-1, true});
        Matrix X;
        for (int h = 0; h < spec.heads; ++h) addHead(X, ref.q[0][h], ref.k[0][h], n, d, true);
        requireSameProjection(all, X);
        CHECK(all.head.front() == 0);
        CHECK(all.head.back() == spec.heads - 1);
    }
    SECTION("bad indices and additive layers are refused by name") {
        CHECK_THROWS_WITH(qkSpace(*trace, 0, 2), Catch::Contains("layer 2"));
        CHECK_THROWS_WITH(qkSpace(*trace, 0, 0, QkSpaceOptions{4, true}), Catch::Contains("head 4"));
        LoadOptions lo;
        lo.device = DeviceChoice::Cpu;
        auto model = Model::load("builtin:reverse-additive", lo);
        auto add = model->forward(model->encodeText("abc12"));
        CHECK_THROWS_WITH(qkSpace(*add, 0, 0), Catch::Contains("additive"));
    }
}

TEST_CASE("query-key space with grouped-query attention gives each query head its group's keys", "[qk-space]") {
    LlamaSpec spec;  // 4 heads, 2 key groups
    const Checkpoint c = makeLlama(spec, 7);
    const std::vector<long long> ids = {3, 17, 0, 47, 22, 5, 5, 11};
    auto trace = writeAndLoad(c, "qk-llama")->forward(ids64(ids));
    const int n = 8, per = 2 * n;
    const QkSpace raw = qkSpace(*trace, 0, 1, QkSpaceOptions{-1, false});
    REQUIRE(raw.points() == spec.heads * per);
    // Untranslated, heads 2 and 3 (group 1) carry the same keys: the same points in the plane;
    // heads 1 and 2 (groups 0 and 1) do not.
    double same = 0, other = 0;
    for (int j = 0; j < n; ++j) {
        same = std::max(same, (double)std::abs(raw.x[2 * per + n + j] - raw.x[3 * per + n + j]));
        other = std::max(other, (double)std::abs(raw.x[1 * per + n + j] - raw.x[2 * per + n + j]));
    }
    CHECK(same == 0.0f);
    CHECK(other > 1e-3);
    // Translated, each copy moves to its own head's queries.
    const QkSpace moved = qkSpace(*trace, 0, 1);
    double qx2 = 0, kx2 = 0, qx3 = 0, kx3 = 0;
    for (int i = 0; i < n; ++i) {
        qx2 += moved.x[2 * per + i], kx2 += moved.x[2 * per + n + i];
        qx3 += moved.x[3 * per + i], kx3 += moved.x[3 * per + n + i];
    }
    CHECK(std::abs(qx2 - kx2) / n < 1e-4);
    CHECK(std::abs(qx3 - kx3) / n < 1e-4);
    CHECK(moved.explained[0] + moved.explained[1] <= 1.0 + 1e-9);
}

}  // namespace test_qk_space
