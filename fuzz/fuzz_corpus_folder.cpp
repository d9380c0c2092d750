// Corpus shard folders through mergeCorpus, the reader of `attnscope-cli corpus-merge` (run.json
// checked field by field, record lines strictly). The input's parts,
// separated by lines "#=====#", are shard 0's run.json, stats.jsonl, importance.jsonl and
// pruning.jsonl, then shard 1's four files; a part that is absent is a file that is absent.
// (Corpus data files are not read here: readCorpus on every mutated input, two exceptions per bad
// line under ASan, took five times the merge's time.)
//
// Beyond the contract of every target (rejections only as attnscope::Error): a merge that
// succeeds must report as many examples as its run.json says, and must leave the shards' files
// as they were.
#include "fuzz_util.h"

#include "attnscope/corpus/corpus_run.h"
#include "attnscope/runtime/error.h"

#include <fstream>
#include <iterator>

namespace {

std::string bytesOf(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    namespace fs = std::filesystem;
    static const auto root = [] {
        auto d = fuzz::scratch() / "corpus";
        fs::create_directories(d);
        return d;
    }();
    const std::vector<fs::path> shards = {root / "s0", root / "s1"};
    const char* names[] = {"run.json", "stats.jsonl", "importance.jsonl", "pruning.jsonl"};
    const auto parts = fuzz::splitParts(fuzz::asView(data, size), "\n#=====#\n");
    fs::remove_all(root / "merged");
    for (std::size_t s = 0; s < shards.size(); ++s) {
        fs::create_directories(shards[s]);
        for (std::size_t f = 0; f < 4; ++f) {
            const std::size_t part = s * 4 + f;
            if (part < parts.size())
                fuzz::writeBytes(shards[s] / names[f], parts[part]);
            else
                fs::remove(shards[s] / names[f]);
        }
    }
    try {
        const CorpusResult r = mergeCorpus(shards, root / "merged");
        if (r.examples <= 0) __builtin_trap();
        for (std::size_t s = 0; s < shards.size(); ++s)
            for (std::size_t f = 0; f < 4; ++f)
                if (s * 4 + f < parts.size() && bytesOf(shards[s] / names[f]) != parts[s * 4 + f]) __builtin_trap();
    } catch (const Error&) {
    }
    return 0;
}
