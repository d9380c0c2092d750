// Attention over the image (overlay.h) against independent double-precision computations: the
// ViT reference's own maps (tests/support), a full n×n rollout product written out here, and a
// discard done by sorting every entry.
#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/analysis/overlay.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace test_overlay {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

using Matrix = std::vector<std::vector<double>>;

RgbImage noiseImage(int size, unsigned seed) {
    std::mt19937 rng(seed);
    RgbImage image{size, size, std::vector<std::uint8_t>(static_cast<std::size_t>(size) * size * 3)};
    for (auto& p : image.pixels) p = static_cast<std::uint8_t>(rng() % 256);
    return image;
}

std::vector<double> preprocessHalf(const RgbImage& image) {
    const std::size_t plane = static_cast<std::size_t>(image.width) * image.height;
    std::vector<double> out(3 * plane);
    for (std::size_t i = 0; i < plane; ++i)
        for (int c = 0; c < 3; ++c) out[c * plane + i] = (image.pixels[i * 3 + c] / 255.0 - 0.5) / 0.5;
    return out;
}

Matrix toMatrix(const std::vector<double>& flat, int n) {
    Matrix m(n, std::vector<double>(n));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) m[i][j] = flat[static_cast<std::size_t>(i) * n + j];
    return m;
}

Matrix toMatrix(const HeadMap& map) {
    Matrix m(map.rows, std::vector<double>(map.cols));
    for (int i = 0; i < map.rows; ++i)
        for (int j = 0; j < map.cols; ++j) m[i][j] = map.at(i, j);
    return m;
}

// vit-explain's fusion, discard and residual with each row divided by its own sum, then the full
// product R = Â_{L-1} ··· Â_0.
Matrix referenceRollout(const std::vector<std::vector<Matrix>>& layers, double ratio, const std::string& fusion) {
    const int n = static_cast<int>(layers[0][0].size());
    Matrix r(n, std::vector<double>(n, 0.0));
    for (int i = 0; i < n; ++i) r[i][i] = 1;
    for (const auto& heads : layers) {
        Matrix a(n, std::vector<double>(n));
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                double v = fusion == "mean" ? 0.0 : heads[0][i][j];
                for (const Matrix& h : heads) {
                    if (fusion == "mean")
                        v += h[i][j] / heads.size();
                    else if (fusion == "max")
                        v = std::max(v, h[i][j]);
                    else
                        v = std::min(v, h[i][j]);
                }
                a[i][j] = v;
            }
        // Sort every (value, index) pair; the lowest floor(ratio·n²) go, (0, 0) excepted.
        std::vector<std::pair<double, int>> all;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) all.push_back({static_cast<double>(static_cast<float>(a[i][j])), i * n + j});
        std::sort(all.begin(), all.end());
        const int k = static_cast<int>(std::floor(ratio * n * n));
        for (int t = 0; t < k; ++t)
            if (all[t].second != 0) a[all[t].second / n][all[t].second % n] = 0;
        for (int i = 0; i < n; ++i) {
            double sum = 0;
            for (int j = 0; j < n; ++j) sum += (a[i][j] + (i == j ? 1.0 : 0.0)) / 2;
            for (int j = 0; j < n; ++j) a[i][j] = (a[i][j] + (i == j ? 1.0 : 0.0)) / 2 / sum;
        }
        Matrix next(n, std::vector<double>(n, 0.0));
        for (int i = 0; i < n; ++i)
            for (int k2 = 0; k2 < n; ++k2)
                for (int j = 0; j < n; ++j) next[i][j] += a[i][k2] * r[k2][j];
        r = next;
    }
    return r;
}

struct VitRun {
    VitSpec spec;
    Checkpoint checkpoint;
    std::shared_ptr<const Model> model;
    std::shared_ptr<const Trace> trace;
    Reference reference;
};

VitRun runVit(unsigned seed) {
    VitRun v;
    v.spec.layers = 3;
    v.spec.imageSize = 16;
    v.spec.patch = 4;
    v.checkpoint = makeVit(v.spec, seed);
    v.model = writeAndLoad(v.checkpoint, "overlay-vit");
    const RgbImage image = noiseImage(16, seed + 1);
    v.trace = v.model->forwardImage(image);
    v.reference = referenceVit(v.checkpoint, v.spec, preprocessHalf(image));
    return v;
}

}  // namespace

TEST_CASE("Patch grids come from the rRcC labels; holes and non-image tokens are errors", "[overlay]") {
    const PatchGrid g = patchGrid({"[CLS]", "r0c0", "r0c1", "r0c2", "r1c0", "r1c1", "r1c2"});
    CHECK(g.rows == 2);
    CHECK(g.cols == 3);
    CHECK(g.positions == std::vector<int>{1, 2, 3, 4, 5, 6});
    CHECK(g.others == std::vector<int>{0});
    // Patches out of order still land on their cells.
    CHECK(patchGrid({"r1c0", "[CLS]", "r0c0"}).positions == std::vector<int>{2, 0});
    CHECK_THROWS_WITH(patchGrid({"[CLS]", "r0c0", "r1c1"}), Catch::Contains("has no patch r0c1"));
    CHECK_THROWS_WITH(patchGrid({"r0c0", "r0c0"}), Catch::Contains("patch r0c0 appears twice"));
    CHECK_THROWS_WITH(patchGrid({"The", "r0c0x", "rc1"}), Catch::Contains("no token is an image patch"));
}

TEST_CASE("Discarding keeps [CLS] to itself, breaks ties by index and counts floor(ratio · n²)", "[overlay]") {
    // 3×3: values with a tie at 0.1 (indices 1 and 5) and the smallest at (0, 0).
    const HeadMap m{3, 3, {0.01f, 0.1f, 0.89f, 0.3f, 0.4f, 0.1f, 0.2f, 0.2f, 0.6f}};
    // floor(0.3 · 9) = 2: (0, 0) is among the two lowest but stays; index 1 goes.
    HeadMap d = discardLowest(m, 0.3);
    CHECK(d.values == std::vector<float>{0.01f, 0.0f, 0.89f, 0.3f, 0.4f, 0.1f, 0.2f, 0.2f, 0.6f});
    // floor(0.34 · 9) = 3: indices 0 (kept), 1 and 5.
    d = discardLowest(m, 0.34);
    CHECK(d.values == std::vector<float>{0.01f, 0.0f, 0.89f, 0.3f, 0.4f, 0.0f, 0.2f, 0.2f, 0.6f});
    // floor(0.45 · 9) = 4: the tie at 0.2 goes to index 6 before 7.
    d = discardLowest(m, 0.45);
    CHECK(d.values == std::vector<float>{0.01f, 0.0f, 0.89f, 0.3f, 0.4f, 0.0f, 0.0f, 0.2f, 0.6f});
    CHECK(discardLowest(m, 0.0).values == m.values);
    CHECK_THROWS_WITH(discardLowest(m, 1.0), Catch::Contains("discard ratio must be in [0, 1)"));
    CHECK_THROWS_WITH(discardLowest(m, -0.1), Catch::Contains("discard ratio"));
}

TEST_CASE("Head fusion: entry-wise mean, max and min", "[overlay]") {
    const HeadMap a{1, 3, {0.2f, 0.5f, 0.3f}}, b{1, 3, {0.6f, 0.1f, 0.3f}};
    CHECK(fuseHeads({a, b}, HeadFusion::Max).values == std::vector<float>{0.6f, 0.5f, 0.3f});
    CHECK(fuseHeads({a, b}, HeadFusion::Min).values == std::vector<float>{0.2f, 0.1f, 0.3f});
    const HeadMap mean = fuseHeads({a, b}, HeadFusion::Mean);
    CHECK(mean.values[0] == Approx(0.4));
    CHECK(mean.values[1] == Approx(0.3));
    CHECK_THROWS_WITH(fuseHeads({a, HeadMap{3, 1, {0, 0, 0}}}, HeadFusion::Max), Catch::Contains("one shape"));
}

TEST_CASE("ViT overlays: the [CLS] row of a head and of the layer mean equal the reference's maps", "[overlay][vit]") {
    const VitRun v = runVit(41);
    const int n = 17, g = 4;
    OverlayOptions o;
    for (int l = 0; l < v.spec.layers; ++l)
        for (int h = 0; h < v.spec.heads; ++h) {
            o.source = OverlaySource::Head;
            o.layer = l;
            o.head = h;
            const PatchOverlay p = patchOverlay(*v.trace, 0, o);
            REQUIRE(p.grid.rows == g);
            REQUIRE(p.grid.cols == g);
            REQUIRE(p.patches.size() == 16u);
            double sum = 0, mx = 0;
            for (int r = 0; r < g; ++r)
                for (int c = 0; c < g; ++c) {
                    const double want = v.reference.probs[l][h][1 + r * g + c];  // row 0 = [CLS], patch after it
                    CHECK(p.patches[r * g + c] == Approx(want).margin(2e-6));
                    sum += p.patches[r * g + c];
                    mx = std::max(mx, p.patches[r * g + c]);
                }
            CHECK(p.otherWeight == Approx(v.reference.probs[l][h][0]).margin(2e-6));
            CHECK(sum + p.otherWeight == Approx(1.0).margin(1e-5));
            CHECK(p.maxPatch == mx);
        }
    // The layer mean of patch r1c2's row (query 1 + 1·4 + 2 = 7).
    o.source = OverlaySource::LayerMean;
    o.layer = 1;
    o.query = 7;
    const PatchOverlay mean = patchOverlay(*v.trace, 0, o);
    for (int p = 0; p < 16; ++p) {
        double want = 0;
        for (int h = 0; h < v.spec.heads; ++h) want += v.reference.probs[1][h][7 * n + 1 + p] / v.spec.heads;
        CHECK(mean.patches[p] == Approx(want).margin(2e-6));
    }
}

TEST_CASE("ViT rollout without discard equals the full product of the reference's maps, rows summing to 1",
          "[overlay][vit]") {
    const VitRun v = runVit(43);
    const int n = 17;
    std::vector<std::vector<Matrix>> layers;
    for (int l = 0; l < v.spec.layers; ++l) {
        layers.emplace_back();
        for (int h = 0; h < v.spec.heads; ++h) layers.back().push_back(toMatrix(v.reference.probs[l][h], n));
    }
    for (int top = 0; top < v.spec.layers; ++top) {
        const Matrix r = referenceRollout({layers.begin(), layers.begin() + top + 1}, 0.0, "mean");
        for (int q : {0, 5, 16}) {
            OverlayOptions o;
            o.source = OverlaySource::Rollout;
            o.layer = top;
            o.query = q;
            const PatchOverlay p = patchOverlay(*v.trace, 0, o);
            double sum = p.otherWeight;
            for (int k = 0; k < 16; ++k) {
                CHECK(p.patches[k] == Approx(r[q][1 + k]).margin(2e-6));
                sum += p.patches[k];
            }
            CHECK(p.otherWeight == Approx(r[q][0]).margin(2e-6));
            CHECK(sum == Approx(1.0).margin(1e-9));
        }
    }
}

TEST_CASE("ViT rollout with a discard ratio and each fusion equals a sorted-discard reference", "[overlay][vit]") {
    const VitRun v = runVit(47);
    // The selection of discarded entries is compared on the maps core computes (float), so a
    // rounding difference at the threshold cannot pick another entry; the arithmetic is the reference's.
    std::vector<std::vector<Matrix>> layers;
    for (int l = 0; l < v.spec.layers; ++l) {
        layers.emplace_back();
        for (int h = 0; h < v.spec.heads; ++h) layers.back().push_back(toMatrix(v.trace->map(0, l, h)));
    }
    for (const auto& [fusion, name] :
         {std::pair{HeadFusion::Mean, "mean"}, {HeadFusion::Max, "max"}, {HeadFusion::Min, "min"}})
        for (double ratio : {0.5, 0.9}) {
            INFO("fusion " << name << ", discard " << ratio);
            const Matrix r = referenceRollout(layers, ratio, name);
            OverlayOptions o;
            o.source = OverlaySource::Rollout;
            o.layer = v.spec.layers - 1;
            o.rollout.discardRatio = ratio;
            o.rollout.fusion = fusion;
            const PatchOverlay p = patchOverlay(*v.trace, 0, o);
            double sum = p.otherWeight, mx = 0;
            for (int k = 0; k < 16; ++k) {
                CHECK(p.patches[k] == Approx(r[0][1 + k]).margin(1e-6));
                sum += p.patches[k];
                mx = std::max(mx, r[0][1 + k]);
            }
            CHECK(sum == Approx(1.0).margin(1e-9));  // normalised by each row's own sum
            CHECK(p.maxPatch == Approx(mx).margin(1e-6));
        }
}

TEST_CASE("Overlays follow the temperature and refuse what is not an image block", "[overlay]") {
    const VitRun v = runVit(53);
    OverlayOptions o;
    o.layer = 1;
    o.head = 2;
    o.map.temperature = 0.5;
    const PatchOverlay p = patchOverlay(*v.trace, 0, o);
    const HeadMap sharp = v.trace->map(0, 1, 2, o.map);
    for (int k = 0; k < 16; ++k) CHECK(p.patches[k] == sharp.at(0, 1 + k));
    o.query = 17;
    CHECK_THROWS_WITH(patchOverlay(*v.trace, 0, o), Catch::Contains("query 17 is out of range"));
    o.query = 0;
    o.layer = 3;
    CHECK_THROWS_WITH(patchOverlay(*v.trace, 0, o), Catch::Contains("layer 3 is out of range"));
    o.layer = 0;
    o.source = OverlaySource::Rollout;
    o.rollout.discardRatio = 1.0;
    CHECK_THROWS_WITH(patchOverlay(*v.trace, 0, o), Catch::Contains("discard ratio"));
    // A text model's tokens are no patch grid.
    const auto text = writeAndLoad(makeBert(BertSpec{}, 3), "overlay-bert")->forward({2, 7, 9, 4});
    CHECK_THROWS_WITH(patchOverlay(*text, 0, OverlayOptions{}), Catch::Contains("no token is an image patch"));
}

TEST_CASE("The head metric list reads each metric of HeadMetrics and names its unit", "[overlay][metrics]") {
    HeadMetrics m;
    m.entropy = 1.5;
    m.meanDistance = 2.25;
    m.firstToken = 0.125;
    m.scores.previous = 0.75;
    m.klDotLinear = 0.0625;
    CHECK(headMetric("entropy").value(m) == 1.5);
    CHECK(std::string(headMetric("entropy").unit) == "nats");
    CHECK(headMetric("mean_distance").value(m) == 2.25);
    CHECK(headMetric("first_token").value(m) == 0.125);
    CHECK(headMetric("previous").value(m) == 0.75);
    CHECK(headMetric("kl_dot_linear").value(m) == 0.0625);
    std::vector<std::string> ids;
    for (const auto& info : headMetricList()) ids.push_back(info.key);
    CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == ids.size());  // ids are unique
    CHECK_THROWS_WITH(headMetric("nope"), Catch::Contains("unknown head metric 'nope'") && Catch::Contains("entropy"));
}

}  // namespace test_overlay
