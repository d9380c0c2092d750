// HeadTable (io/head_table.h): the per-head CSV writer of the metrics command and corpus results.
#include "attnscope/io/head_table.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

namespace test_head_table {

using namespace attnscope;

TEST_CASE("a head table is block, layer, head and its columns, one line per head in order", "[io][head-table]") {
    HeadTable t({"entropy", "pattern", "importance_mean"});
    t.addRow("self", 0, 3, {"0.5", "diagonal", ""});
    t.addRow("cross", 11, 0, {"1e-09", "global", "2"});
    const std::string want = "block,layer,head,entropy,pattern,importance_mean\n"
                             "self,0,3,0.5,diagonal,\n"
                             "cross,11,0,1e-09,global,2\n";
    CHECK(t.csv() == want);
    CHECK(HeadTable({"x"}).csv() == "block,layer,head,x\n");

    const auto dir = testing::freshDir("head-table");
    t.write(dir / "heads.csv");
    std::ifstream in(dir / "heads.csv", std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    CHECK(bytes.str() == want);
}

TEST_CASE("a head table row with the wrong number of cells is refused naming the head", "[io][head-table]") {
    HeadTable t({"a", "b"});
    REQUIRE_THROWS_AS(t.addRow("self", 2, 5, {"1"}), Error);
    REQUIRE_THROWS_WITH(t.addRow("self", 2, 5, {"1"}),
                        Catch::Contains("self:2:5") && Catch::Contains("1 cells for 2 columns"));
    CHECK(t.csv() == "block,layer,head,a,b\n");
}

TEST_CASE("head table numbers: %g with a digit count, or the shortest exact text", "[io][head-table]") {
    // The metrics command's cells are what an ostream with precision 8 writes.
    for (double v : {0.0, 1.0 / 3.0, -2.5e-7, 123456789.0, 1e300, std::numeric_limits<double>::infinity()}) {
        std::ostringstream s;
        s.precision(8);
        s << v;
        CHECK(numberText(v, 8) == s.str());
    }
    CHECK(numberText(1.0 / 3.0, 8) == "0.33333333");
    // Corpus cells read back to the same double, in as few digits as that takes (15 to 17).
    CHECK(exactNumberText(0.1) == "0.1");
    CHECK(exactNumberText(0.5) == "0.5");
    CHECK(exactNumberText(1.0 / 3.0) == "0.3333333333333333");
    for (double v : {1.0 / 3.0, 2.0 / 7.0, 1e-300, -123.456, 5e-324})
        CHECK(std::strtod(exactNumberText(v).c_str(), nullptr) == v);
}

}  // namespace test_head_table
