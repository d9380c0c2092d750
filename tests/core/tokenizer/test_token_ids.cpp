// attnscope::parseTokenIds / parseNumberList: the one parser of typed token ids (CLI and ui).
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/token_ids.h"

#include <catch2/catch.hpp>

#include <limits>

namespace test_token_ids {

using namespace attnscope;
using Ids = std::vector<std::int64_t>;

TEST_CASE("token ids parse from commas, spaces or both", "[ids]") {
    CHECK(parseTokenIds("3,17,42") == Ids{3, 17, 42});
    CHECK(parseTokenIds("3 17 42") == Ids{3, 17, 42});
    CHECK(parseTokenIds(" 3, 1 4,1\t5\n") == Ids{3, 1, 4, 1, 5});
    CHECK(parseTokenIds("3 ,17 , 42") == Ids{3, 17, 42});
    CHECK(parseTokenIds("0") == Ids{0});
    CHECK(parseTokenIds("007") == Ids{7});
    CHECK(parseTokenIds("9223372036854775807") == Ids{std::numeric_limits<std::int64_t>::max()});
}

TEST_CASE("token id errors name the bad entry in one line", "[ids]") {
    SECTION("nothing given") {
        CHECK_THROWS_WITH(parseTokenIds(""), "no token ids given");
        CHECK_THROWS_WITH(parseTokenIds(" \t\n"), "no token ids given");
    }
    SECTION("empty entries: a comma needs an id on each side") {
        CHECK_THROWS_WITH(parseTokenIds("1,,2"), "entry 2 is empty: every comma must sit between two token ids");
        CHECK_THROWS_WITH(parseTokenIds("1, ,2"), Catch::StartsWith("entry 2 is empty"));
        CHECK_THROWS_WITH(parseTokenIds(",1"), Catch::StartsWith("entry 1 is empty"));
        CHECK_THROWS_WITH(parseTokenIds("1 2,"), Catch::StartsWith("entry 3 is empty"));
        CHECK_THROWS_WITH(parseTokenIds(" , "), Catch::StartsWith("entry 1 is empty"));
    }
    SECTION("garbage") {
        const std::string expected = " (expected whole numbers separated by commas or spaces, e.g. 3,17,42)";
        CHECK_THROWS_WITH(parseTokenIds("1,x"), "'x' is not a token id" + expected);
        CHECK_THROWS_WITH(parseTokenIds("1 2x 3"), "'2x' is not a token id" + expected);
        CHECK_THROWS_WITH(parseTokenIds("1;2"), "'1;2' is not a token id" + expected);
        CHECK_THROWS_WITH(parseTokenIds("+3"), "'+3' is not a token id" + expected);
        CHECK_THROWS_WITH(parseTokenIds("0x10"), "'0x10' is not a token id" + expected);
        CHECK_THROWS_WITH(parseTokenIds("1.5"), "'1.5' is not a token id" + expected);
        CHECK_THROWS_WITH(parseTokenIds("-"), "'-' is not a token id" + expected);
    }
    SECTION("negative ids and ids beyond int64 are errors, never wrapped") {
        CHECK_THROWS_WITH(parseTokenIds("1 -1"), "'-1' is not a token id: it is negative");
        CHECK_THROWS_WITH(parseTokenIds("9223372036854775808"),
                          "'9223372036854775808' is not a token id: it is larger than 9223372036854775807");
        CHECK_THROWS_WITH(parseTokenIds("1,18446744073709551617"),
                          Catch::StartsWith("'18446744073709551617' is not a token id"));
        CHECK_THROWS_WITH(parseTokenIds("99999999999999999999999999"), Catch::Contains("larger than"));
    }
    SECTION("other lists name their entries") {
        CHECK(parseNumberList("0 1,1", "token type") == Ids{0, 1, 1});
        CHECK_THROWS_WITH(parseNumberList("0,x", "token type"), Catch::StartsWith("'x' is not a token type ("));
        CHECK_THROWS_WITH(parseNumberList("", "0/1 value"), "no 0/1 values given");
    }
    CHECK_THROWS_AS(parseTokenIds("x"), Error);
}

}  // namespace test_token_ids
