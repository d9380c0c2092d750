// The CLI's streamed JSON writer (app/cli/json_stream.h) by itself: floatMatrix's rows read back
// as the same float32 values whatever their zeros (a causal map's trailing zeros are written as
// one run, a row of zeros included), -0.0 keeps its sign, and non-finite values are null.
#include "json_stream.h"

#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace test_cli_json_stream {

using namespace attnscope;

TEST_CASE("cli JSON writer: a matrix's rows read back as its float32 values, zeros and signs included", "[cli][json]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    HeadMap m{4, 5, {1.0f,  0.0f, 0.0f,  0.0f,  0.0f,     // trailing zeros after the first value
                     0.0f,  0.0f, 0.0f,  0.0f,  0.0f,     // a row of zeros
                     0.25f, 0.0f, 3e-7f, -0.0f, 0.0f,     // a zero inside, -0.0 before the run
                     nan,   0.1f, 0.0f,  1e30f, -0.0f}};  // NaN, a large value, a trailing -0.0
    const auto dir = testing::freshDir("cli-json-stream");
    const auto path = dir / "m.json";
    {
        cli::JsonFileWriter out(path);
        out.raw("{\"m\": ");
        out.floatMatrix(m, 1);
        out.raw("}\n");
        out.commit();
    }
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    INFO(text.str());
    const auto j = nlohmann::json::parse(text.str());
    REQUIRE(j["m"].size() == 4);
    for (int r = 0; r < m.rows; ++r) {
        REQUIRE(j["m"][r].size() == 5);
        for (int c = 0; c < m.cols; ++c) {
            const float want = m.values[std::size_t(r * m.cols + c)];
            const auto& v = j["m"][r][c];
            INFO("row " << r << " column " << c);
            if (std::isnan(want)) {
                CHECK(v.is_null());
                continue;
            }
            REQUIRE(v.is_number_float());
            CHECK(static_cast<float>(v.get<double>()) == want);
            CHECK(std::signbit(static_cast<float>(v.get<double>())) == std::signbit(want));
        }
    }
    CHECK(text.str().find("[0.0,0.0,0.0,0.0,0.0]") != std::string::npos);
    CHECK(text.str().find("-0.0]") != std::string::npos);
}

}  // namespace test_cli_json_stream
