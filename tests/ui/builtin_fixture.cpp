#include "builtin_fixture.h"

#include "gpt2_fixture.h"

namespace attnscope::testing {

const std::vector<std::string>& builtinFixtureNames() {
    static const std::vector<std::string> names = {"reverse-additive",   "reverse-dot",     "reverse-linear",
                                                   "sentiment-additive", "sentiment-dot",   "sentiment-linear"};
    return names;
}

std::filesystem::path writeBuiltinFixtures(const std::filesystem::path& dir) {
    unsigned seed = 11;
    for (const auto& name : builtinFixtureNames()) {
        Gpt2Spec spec;  // vocab 40, 24 positions, 2 layers x 4 heads
        writeGpt2Folder(dir / name, makeGpt2(spec, seed++));
    }
    return dir;
}

}  // namespace attnscope::testing
