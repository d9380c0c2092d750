#include "builtin_fixture.h"

#include "gpt2_fixture.h"

namespace attnscope::testing {

namespace {
std::filesystem::path& standIn() {
    static std::filesystem::path dir;
    return dir;
}
}  // namespace

std::filesystem::path writeStandInModel(const std::filesystem::path& dir) {
    Gpt2Spec spec;  // vocab 40, 24 positions, 2 layers x 4 heads
    writeGpt2Folder(dir, makeGpt2(spec, 11));
    return dir;
}

const std::filesystem::path& standInModel() { return standIn(); }
void setStandInModel(const std::filesystem::path& dir) { standIn() = dir; }

}  // namespace attnscope::testing
