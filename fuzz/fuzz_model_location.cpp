// What a MODEL argument names (attnscope/io/model_location.h) against a Hugging Face hub cache
// made in this process's scratch folder ($HF_HUB_CACHE points there): the model "org/model" with
// refs/main and refs/pr/1 holding what the input says, one snapshot folder (its config.json a
// file, or a link to a missing blob), and the spec and --revision the input gives.
//
// The input: parts separated by "\n|": spec, revision, refs/main's bytes, refs/pr/1's bytes, and
// a flags byte (bit 0: no refs/main file; bit 1: config.json is a dangling link; bit 2: no
// snapshot folder). Checked (__builtin_trap on a violation):
//   - only attnscope::Error escapes;
//   - a spec that is a model id and no existing path resolves to a folder that exists and is
//     snapshots/<40 hex digits> of that model's cache folder, never anywhere else, whatever the
//     ref files and the revision say;
//   - a spec that is neither an existing path nor an id comes back unchanged.
#include "fuzz_util.h"

#include "attnscope/io/model_location.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace {

namespace fs = std::filesystem;

const char* const kCommit = "0123456789abcdef0123456789abcdef01234567";

const fs::path& cache() {
    static const fs::path dir = [] {
        const fs::path d = attnscope::fuzz::scratch() / "hub";
        ::setenv("HF_HUB_CACHE", d.c_str(), 1);
        return d;
    }();
    return dir;
}

void makeCache(std::string_view mainRef, std::string_view prRef, unsigned flags) {
    std::error_code ec;
    fs::remove_all(cache(), ec);
    const fs::path repo = cache() / "models--org--model";
    fs::create_directories(repo / "refs" / "pr");
    if (!(flags & 1)) attnscope::fuzz::writeBytes(repo / "refs" / "main", mainRef);
    attnscope::fuzz::writeBytes(repo / "refs" / "pr" / "1", prRef);
    if (flags & 4) return;
    const fs::path snapshot = repo / "snapshots" / kCommit;
    fs::create_directories(snapshot);
    if (flags & 2)
        fs::create_symlink("../../blobs/missing", snapshot / "config.json", ec);
    else
        attnscope::fuzz::writeBytes(snapshot / "config.json", "{}");
}

bool fortyHex(const std::string& s) {
    return s.size() == 40 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto parts = attnscope::fuzz::splitParts(attnscope::fuzz::asView(data, size), "\n|");
    const auto part = [&](std::size_t i) { return i < parts.size() ? std::string(parts[i]) : std::string(); };
    const std::string spec = part(0), revision = part(1);
    if (spec.find('\0') != std::string::npos || revision.find('\0') != std::string::npos) return 0;
    const unsigned flags = parts.size() > 4 && !parts[4].empty() ? static_cast<unsigned char>(parts[4][0]) : 0;
    makeCache(parts.size() > 2 ? parts[2] : std::string_view(), parts.size() > 3 ? parts[3] : std::string_view(),
              flags);

    std::error_code ec;
    const bool existing = fs::exists(spec, ec);
    fs::path resolved;
    try {
        resolved = attnscope::resolveModelLocation(spec, revision);
    } catch (const attnscope::Error&) {
        return 0;
    }
    if (existing || spec.rfind("builtin:", 0) == 0) return 0;
    if (!attnscope::isModelId(spec)) {
        if (resolved != fs::path(spec)) __builtin_trap();
        return 0;
    }
    // An id resolved: it must be a snapshot folder of that model, in the cache.
    std::string folder = "models--" + spec;
    if (const auto slash = folder.find('/'); slash != std::string::npos) folder.replace(slash, 1, "--");
    if (resolved.parent_path() != cache() / folder / "snapshots") __builtin_trap();
    if (!fortyHex(resolved.filename().string())) __builtin_trap();
    if (!fs::is_directory(resolved, ec)) __builtin_trap();
    return 0;
}
