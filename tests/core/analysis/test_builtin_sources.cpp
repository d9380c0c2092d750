// The value and ALTI map sources of the built-in models (dot, additive and linear attention, the
// classifier's 'self' block and the encoder-decoder's three blocks) against the double-precision
// definitions over the independent built-in forward (tests/support/reference_builtin.h): α, the
// head outputs f_h(x̃_j) = v_j^h W_O^h, the residual entering each encoder layer and b_O.
#include "alti_ref.h"
#include "builtin_checks.h"
#include "reference_builtin.h"

#include "attnscope/analysis/alti.h"
#include "attnscope/analysis/map_source.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/models/model.h"

#include <cmath>

namespace test_builtin_sources {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

double norm2(const Vec& v) {
    double s = 0;
    for (double e : v) s += e * e;
    return std::sqrt(s);
}

// value-norm of head h and value-norm-layer of layer l from the definition.
Vec refValueNorm(const RefBlock& r, int l, int h) {
    const int n = r.rows, m = r.cols;
    Vec out(static_cast<std::size_t>(n) * m);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) out[i * m + j] = r.maps[l][h][i * m + j] * norm2(r.f[l][h][j]);
    return out;
}

Vec refValueNormLayer(const RefBlock& r, int l) {
    const int n = r.rows, m = r.cols, H = static_cast<int>(r.maps[l].size());
    const std::size_t E = r.f[l][0][0].size();
    Vec out(static_cast<std::size_t>(n) * m);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            Vec sum(E, 0.0);
            for (int h = 0; h < H; ++h)
                for (std::size_t e = 0; e < E; ++e) sum[e] += r.maps[l][h][i * m + j] * r.f[l][h][j][e];
            out[i * m + j] = norm2(sum);
        }
    return out;
}

void checkClose(const HeadMap& got, const Vec& want, double relative, const std::string& what) {
    const auto [worst, biggest] = diff(got, want);
    INFO(what << ": max |got - reference| " << worst << " of " << biggest);
    if (biggest == 0) {  // a head the run masked: exactly nothing
        CHECK(worst == 0);
        return;
    }
    CHECK(biggest > 0.05);
    CHECK(worst <= relative * biggest);
}

// Every value-norm and value-norm-layer map of the block; ALTI and its rollout where `alti`.
void checkBlock(const Trace& trace, const std::string& name, const RefBlock& ref, bool alti) {
    const int b = trace.blockIndex(name);
    const BlockInfo& info = trace.blocks()[b];
    REQUIRE(hasValues(trace, b));
    REQUIRE(info.layers == static_cast<int>(ref.f.size()));
    for (int l = 0; l < info.layers; ++l) {
        for (int h = 0; h < info.heads; ++h)
            checkClose(sourceMap(trace, MapSource::ValueNorm, b, l, h), refValueNorm(ref, l, h), 1e-5,
                       name + " value-norm layer " + std::to_string(l) + " head " + std::to_string(h));
        checkClose(sourceMap(trace, MapSource::ValueNormLayer, b, l, 0), refValueNormLayer(ref, l), 1e-5,
                   name + " value-norm-layer " + std::to_string(l));
    }
    if (!alti) {
        CHECK_FALSE(hasAltiInputs(trace, b));
        CHECK_THROWS_WITH(altiMap(trace, b, 0), Catch::Contains("mixes the decoder's and the encoder's streams"));
        return;
    }
    REQUIRE(hasAltiInputs(trace, b));
    Vec rollout;
    const int n = ref.rows;
    for (int l = 0; l < info.layers; ++l) {
        AltiRef a;
        for (int h = 0; h < info.heads; ++h) {
            a.heads.alpha.push_back(ref.maps[l][h]);
            a.heads.f.push_back(ref.f[l][h]);
        }
        a.x = ref.residual[l];
        a.bias = ref.outBias[l];
        const Vec c = refAlti(a, n);
        const HeadMap got = sourceMap(trace, MapSource::Alti, b, l, 0);
        checkClose(got, c, 2e-5, name + " alti layer " + std::to_string(l));
        for (int i = 0; i < n; ++i) {  // rows sum to 1
            double sum = 0;
            for (int j = 0; j < n; ++j) sum += got.values[i * n + j];
            CHECK(std::abs(sum - 1.0) < 1e-5);
        }
        if (l == 0) {
            rollout = c;
        } else {  // R^l = C^l · R^(l-1), in double from the reference's C
            Vec next(rollout.size(), 0.0);
            for (int i = 0; i < n; ++i)
                for (int k = 0; k < n; ++k)
                    for (int j = 0; j < n; ++j) next[i * n + j] += c[i * n + k] * rollout[k * n + j];
            rollout = next;
        }
        checkClose(sourceMap(trace, MapSource::AltiRollout, b, l, 0), rollout, 5e-5,
                   name + " alti-rollout layer " + std::to_string(l));
    }
}

}  // namespace

TEST_CASE("value-norm and ALTI of the built-in models (dot, additive, linear) equal the double-precision definitions",
          "[builtin_sources]") {
    // A propagated temperature and a masked head in each block: the sources read the maps the
    // model ran with, and a zeroed head adds nothing.
    RunOptions run;
    run.captureValues = true;
    run.temperature = 2.5;
    run.temperatureLayers = {1};
    run.maskHeads = {{"cross", 0, 1}, {"encoder", 1, 0}, {"self", 0, 1}, {"decoder", 1, 1}};
    BuiltinRefOptions opt;
    opt.temperature = 2.5;
    opt.temperatureLayers = {1};
    opt.masked = {{"cross", 0, 1}, {"encoder", 1, 0}, {"self", 0, 1}, {"decoder", 1, 1}};
    for (const std::string kind : {"dot", "additive", "linear"}) {
        SECTION("sentiment-" + kind) {
            const auto model = builtin("sentiment-" + kind);
            const auto ids = model->encodeText("a really dull film and the ending is never good");
            const auto trace = model->forward(ids, run);
            checkBlock(*trace, "self", referenceClassifier(folderOf("sentiment-" + kind), asLong(ids), opt).self, true);
        }
        SECTION("reverse-" + kind) {
            const auto model = builtin("reverse-" + kind);
            const auto ids = model->encodeText("hello42");
            const auto trace = model->forward(ids, run);
            std::vector<long long> fed = {1};
            for (auto id : trace->outputIds()) fed.push_back(id);
            const RefSeq2seq ref = referenceSeq2seq(folderOf("reverse-" + kind), asLong(ids), fed, opt);
            checkBlock(*trace, "encoder", ref.encoder, true);
            checkBlock(*trace, "decoder", ref.decoder, false);
            checkBlock(*trace, "cross", ref.cross, false);
        }
    }
}

}  // namespace test_builtin_sources
