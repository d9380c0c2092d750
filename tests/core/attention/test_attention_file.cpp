// Attention files (attention_file.h, NpyFile): maps written by the project's own npy writer
// from a real forward open as a maps-only Trace equal to the model's (maps, display temperature,
// pooled maps, per-head metrics), and hand-made .npy headers are refused with one line naming
// the file (dtype, byte order, Fortran order, shapes, sizes, a shape far larger than the file).
#include "attnscope/analysis/trace_metrics.h"
#include "attnscope/attention/attention_file.h"
#include "attnscope/attention/trace.h"
#include "attnscope/io/npy.h"
#include "attnscope/lab/lab.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>

namespace test_attention_file {

using namespace attnscope;

namespace {

std::shared_ptr<const Trace> sentimentTrace(const std::string& text) {
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    const auto model = Model::load("builtin:sentiment-dot", options);
    return model->forward(model->encodeText(text));
}

// Every map of block b as [layers, heads, n, m] through NpyWriter, as `attention` writes it.
void writeBlock(const Trace& trace, int b, const std::filesystem::path& file, bool batchAxis = false) {
    const BlockInfo& info = trace.blocks()[b];
    const HeadMap first = trace.map(b, 0, 0);
    std::vector<std::int64_t> shape = {info.layers, info.heads, first.rows, first.cols};
    if (batchAxis) shape.insert(shape.begin() + 1, 1);
    NpyWriter w(file, shape);
    for (int l = 0; l < info.layers; ++l)
        for (int h = 0; h < info.heads; ++h) {
            const HeadMap m = trace.map(b, l, h);
            w.append(m.values.data(), m.values.size());
        }
    w.finish();
}

double maxDiff(const HeadMap& a, const HeadMap& b) {
    REQUIRE(a.rows == b.rows);
    REQUIRE(a.cols == b.cols);
    double worst = 0;
    for (std::size_t i = 0; i < a.values.size(); ++i)
        worst = std::max(worst, std::abs(double(a.values[i]) - b.values[i]));
    return worst;
}

// A .npy with the given header dict and raw data bytes (version 1, padded to 64 as NumPy does).
void writeRaw(const std::filesystem::path& file, std::string dict, const std::string& data, int version = 1) {
    const std::size_t lengthBytes = version == 1 ? 2 : 4;
    const std::size_t unpadded = 8 + lengthBytes + dict.size() + 1;
    dict.append((64 - unpadded % 64) % 64, ' ');
    dict += '\n';
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(version);
    out += '\0';
    for (std::size_t i = 0; i < lengthBytes; ++i) out += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
    out += dict + data;
    std::ofstream(file, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
}

template <typename T>
std::string bytesOf(const std::vector<T>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

}  // namespace

TEST_CASE("maps written by the npy writer open as a maps-only trace equal to the model's", "[attention-file]") {
    const auto dir = testing::freshDir("attention-file");
    const auto trace = sentimentTrace("the plot was great");
    REQUIRE(trace->blocks().size() == 1);
    const BlockInfo& model = trace->blocks()[0];
    writeBlock(*trace, 0, dir / "attention.npy");
    nlohmann::json tokens = {{"ids", trace->ids()}, {"tokens", trace->tokens()}};
    tokens["blocks"]["self"] = {{"kind", "dot"}, {"queries", model.queryTokens}, {"keys", model.keyTokens}};
    std::ofstream(dir / "tokens.json") << tokens.dump(2);

    REQUIRE(tokensBeside(dir / "attention.npy") == dir / "tokens.json");
    const auto given = openAttentionFile(dir / "attention.npy", tokensBeside(dir / "attention.npy"));
    CHECK(mapsOnly(*given));
    CHECK_FALSE(mapsOnly(*trace));
    CHECK(attentionFileOf(*given) == (dir / "attention.npy").string());
    REQUIRE(given->blocks().size() == 1);
    const BlockInfo& info = given->blocks()[0];
    CHECK(info.name == "self");
    CHECK(info.layers == model.layers);
    CHECK(info.heads == model.heads);
    CHECK(info.causal == model.causal);
    CHECK(info.queryTokens == model.queryTokens);
    CHECK(given->tokens() == trace->tokens());
    CHECK(given->ids() == trace->ids());

    for (int l = 0; l < info.layers; ++l)
        for (int h = 0; h < info.heads; ++h) {
            CHECK(given->map(0, l, h).values == trace->map(0, l, h).values);  // the same floats
            // softmax(log A / T) equals the model's softmax(logits / T) up to float32 rounding.
            for (double t : {0.3, 2.5}) {
                MapOptions o;
                o.temperature = t;
                CHECK(maxDiff(given->map(0, l, h, o), trace->map(0, l, h, o)) < 2e-5);
            }
            PoolRequest pool;
            pool.outRows = pool.outCols = 2;
            CHECK(maxDiff(given->pooledMap(0, l, h, pool), trace->pooledMap(0, l, h, pool)) < 1e-6);
        }

    MetricsOptions mo;
    const auto a = headMetrics(*given, mo), b = headMetrics(*trace, mo);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].entropy == Approx(b[i].entropy).margin(1e-6));
        CHECK(a[i].meanDistance == Approx(b[i].meanDistance).margin(1e-6));
        CHECK(a[i].firstToken == Approx(b[i].firstToken).margin(1e-6));
        CHECK(a[i].pattern == b[i].pattern);
        CHECK(a[i].klDotLinear == 0.0);  // no Q/K: no linear map to compare with
    }

    MapOptions linear;
    linear.variant = MapVariant::Linear;
    REQUIRE_THROWS_WITH(given->map(0, 0, 0, linear),
                        Catch::Contains("attention.npy") && Catch::Contains("no queries and keys"));
    REQUIRE_THROWS_WITH(fitAdditive(*given, 0, 0, 0),
                        Catch::Contains("attention.npy") && Catch::Contains("no queries and keys"));

    SECTION("a plain token list, the batch axis of torch.stack(attentions), one layer, no tokens") {
        writeBlock(*trace, 0, dir / "batch.npy", true);
        std::ofstream(dir / "list.json") << nlohmann::json(model.queryTokens).dump();
        const auto batch = openAttentionFile(dir / "batch.npy", dir / "list.json");
        CHECK(batch->blocks()[0].layers == model.layers);
        CHECK(batch->blocks()[0].queryTokens == model.queryTokens);
        CHECK(batch->map(0, 1, 1).values == trace->map(0, 1, 1).values);

        const HeadMap m = trace->map(0, 1, 0);
        const HeadMap m1 = trace->map(0, 1, 1);
        std::vector<float> both = m.values;
        both.insert(both.end(), m1.values.begin(), m1.values.end());
        writeNpy(dir / "layer.npy", {2, m.rows, m.cols}, both);
        const auto layer = openAttentionFile(dir / "layer.npy");
        CHECK(layer->blocks()[0].layers == 1);
        CHECK(layer->blocks()[0].heads == 2);
        CHECK(layer->blocks()[0].queryTokens.front() == "0");
        CHECK(layer->map(0, 0, 1).values == m1.values);

        std::ofstream(dir / "short.json") << R"(["a","b"])";
        REQUIRE_THROWS_WITH(openAttentionFile(dir / "layer.npy", dir / "short.json"),
                            Catch::Contains("short.json") && Catch::Contains("has 2 entries"));
    }
}

TEST_CASE("float16 and float64 attention files, and the display temperature on stored maps", "[attention-file]") {
    const auto dir = testing::freshDir("attention-file-dtypes");
    // One head, 2 tokens, rows (1, 0) and (0.25, 0.75) (exact in float16).
    const std::vector<std::uint16_t> half = {0x3C00, 0x0000, 0x3400, 0x3A00};
    writeRaw(dir / "h.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2, 2), }", bytesOf(half));
    const std::vector<double> wide = {1.0, 0.0, 0.25, 0.75};
    writeRaw(dir / "d.npy", "{\"shape\": (1, 1, 2, 2), \"fortran_order\": False, \"descr\": \"<f8\"}", bytesOf(wide),
             2);
    for (const char* name : {"h.npy", "d.npy"}) {
        const auto t = openAttentionFile(dir / name);
        CHECK(t->blocks()[0].causal);  // nothing above the diagonal
        CHECK(t->map(0, 0, 0).values == std::vector<float>{1, 0, 0.25f, 0.75f});
        MapOptions o;
        o.temperature = 0.5;  // p^2 renormalised: 1/16, 9/16 -> 0.1, 0.9
        const HeadMap m = t->map(0, 0, 0, o);
        CHECK(m.at(0, 0) == 1.0f);
        CHECK(m.at(0, 1) == 0.0f);  // stays 0
        CHECK(m.at(1, 0) == Approx(0.1).epsilon(1e-6));
        CHECK(m.at(1, 1) == Approx(0.9).epsilon(1e-6));
    }
}

TEST_CASE("malformed attention files are refused with one line naming the file", "[attention-file]") {
    const auto dir = testing::freshDir("attention-file-bad");
    const std::vector<float> four = {1, 0, 0.5f, 0.5f};
    const auto refused = [&](const std::string& dict, const std::string& data, const std::string& why) {
        writeRaw(dir / "bad.npy", dict, data);
        INFO(dict);
        REQUIRE_THROWS_WITH(openAttentionFile(dir / "bad.npy"), Catch::Contains("bad.npy: ") && Catch::Contains(why));
    };
    refused("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2, 2), }", bytesOf(four), "Fortran");
    refused("{'descr': '>f4', 'fortran_order': False, 'shape': (1, 2, 2), }", bytesOf(four), "big-endian");
    refused("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", bytesOf(four),
            "dtype '<i8' is not supported");
    refused("{'descr': '|O', 'fortran_order': False, 'shape': (4,), }", bytesOf(four), "dtype '|O'");
    refused("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", bytesOf(four), "is not attention maps");
    refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 1, 1, 1), }", bytesOf(four), "a batch of 2");
    refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }", bytesOf(four),
            "does not match the 16 data bytes");
    // A header announcing 10^15 maps over 16 bytes: refused from the size, nothing allocated.
    refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000, 1000000, 1000000), }", bytesOf(four),
            "does not match the 16 data bytes");
    refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), 'extra': 1}", bytesOf(four),
            "unexpected key 'extra'");
    refused("{'descr': '<f4', 'shape': (1, 2, 2), }", bytesOf(four), "lacks descr, fortran_order or shape");
    refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), ", bytesOf(four), "malformed .npy header");
    refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }",
            bytesOf(std::vector<float>{1, 0, 0.5f, 0.9f}), "row 1 sums to 1.4, not 1");
    refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }",
            bytesOf(std::vector<float>{2, -1, 0.5f, 0.5f}), "negative values");
    refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }",
            bytesOf(std::vector<float>{NAN, 0, 0.5f, 0.5f}), "not finite");

    std::ofstream(dir / "text.npy") << "just text, no magic";
    REQUIRE_THROWS_WITH(openAttentionFile(dir / "text.npy"), Catch::Contains("text.npy: not a .npy file"));
    REQUIRE_THROWS_WITH(openAttentionFile(dir / "missing.npy"), Catch::Contains("missing.npy: cannot open"));
}

TEST_CASE("attention files numpy.save wrote from torch.stack(output_attentions) open with their values",
          "[attention-file]") {
    // tests/data/attention/make.py wrote them (float16 and float64, [layers, 1, heads, n, n]).
    const auto dir = std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA).parent_path() / "attention";
    nlohmann::json expected;
    std::ifstream(dir / "hf_stack_expected.json") >> expected;
    for (const auto& [name, key] :
         {std::pair<std::string, std::string>{"hf_stack_f16.npy", "f16_as_float"}, {"hf_stack_f64.npy", "f64"}}) {
        INFO(name);
        const auto trace = openAttentionFile(dir / name, tokensBeside(dir / name));
        const BlockInfo& b = trace->blocks().front();
        REQUIRE(b.layers == 2);
        REQUIRE(b.heads == 3);
        CHECK(b.causal);
        const std::vector<double> values = expected[key].get<std::vector<double>>();
        std::size_t i = 0;
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 3; ++h)
                for (float v : trace->map(0, l, h).values) CHECK(v == static_cast<float>(values[i++]));
        if (name == "hf_stack_f16.npy")
            CHECK(b.queryTokens == std::vector<std::string>{"The", "▁quick", "▁brown", "▁fox"});
        else
            CHECK(b.queryTokens.back() == "3");  // no tokens file: positions
    }
}

}  // namespace test_attention_file
