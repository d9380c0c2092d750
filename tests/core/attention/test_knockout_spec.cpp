// The knockout spec parser shared by `attention --knockout` and the Lab dock: the fields it reads,
// formatting back to the same spec, and one-line refusals naming the bad part.
#include "attnscope/attention/knockout_spec.h"
#include "attnscope/runtime/error.h"

#include <catch2/catch.hpp>

namespace test_knockout_spec {

using namespace attnscope;

TEST_CASE("knockout specs parse into queries, keys and layer ranges and format back", "[attention][knockout]") {
    const auto ks = parseKnockouts("4,3:0,1@0-1; 2:0@1");
    REQUIRE(ks.size() == 2);
    CHECK(ks[0].queries == std::vector<std::int64_t>{4, 3});
    CHECK(ks[0].keys == std::vector<std::int64_t>{0, 1});
    CHECK(ks[0].firstLayer == 0);
    CHECK(ks[0].lastLayer == 1);
    CHECK(ks[1].queries == std::vector<std::int64_t>{2});
    CHECK(ks[1].keys == std::vector<std::int64_t>{0});
    CHECK(ks[1].firstLayer == 1);
    CHECK(ks[1].lastLayer == 1);
    CHECK(formatKnockouts(ks) == "4,3:0,1@0-1;2:0@1");
    const auto again = parseKnockouts(formatKnockouts(ks));
    REQUIRE(again.size() == 2);
    CHECK(again[1].keys == ks[1].keys);
    CHECK(parseKnockouts("5:0@2;").size() == 1);  // a trailing separator is not a knockout
}

TEST_CASE("malformed knockout specs are refused with the bad part named", "[attention][knockout]") {
    CHECK_THROWS_WITH(parseKnockouts("2:0"), Catch::Contains("'2:0' is not QUERIES:KEYS@LAYERS"));
    CHECK_THROWS_WITH(parseKnockouts("1@0:2"), Catch::Contains("is not QUERIES:KEYS@LAYERS"));
    CHECK_THROWS_WITH(parseKnockouts("1:0@1,2,3"), Catch::Contains("layers are A or A-B"));
    CHECK_THROWS_WITH(parseKnockouts("x:0@1"), Catch::Contains("'x' is not a query position"));
    CHECK_THROWS_WITH(parseKnockouts("1:-1@0"), Catch::Contains("key position"));
    CHECK_THROWS_WITH(parseKnockouts(""), Catch::Contains("no knockout given"));
}

}  // namespace test_knockout_spec
