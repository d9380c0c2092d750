// Tokenizer throughput (issue #4 target: >= 5 MB/s for GPT-2 byte-level BPE on English prose,
// one core). Google Benchmark reports bytes_per_second over CPU time.
//
// Prose: every file in /usr/share/common-licenses (Debian's base-files: GPL, Apache, Artistic,
// ... about 300 kB of English). Tokenizer: $ATTNSCOPE_BENCH_TOKENIZER (a tokenizer.json or a
// model folder) when set, else the pruned GPT-2 vocabulary in tests/data/tokenizers/gpt2.
#include "attnscope/tokenizer/tokenizer.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

const std::string& prose() {
    static const std::string text = [] {
        std::string all;
        std::vector<std::filesystem::path> files;
        for (const auto& e : std::filesystem::directory_iterator("/usr/share/common-licenses"))
            if (e.is_regular_file()) files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            std::ifstream in(f, std::ios::binary);
            std::stringstream s;
            s << in.rdbuf();
            all += s.str();
        }
        return all;
    }();
    return text;
}

std::unique_ptr<attnscope::Tokenizer> load() {
    const char* env = std::getenv("ATTNSCOPE_BENCH_TOKENIZER");
    const std::filesystem::path path = env && *env ? env : ATTNSCOPE_SOURCE_DIR "/tests/data/tokenizers/gpt2";
    return std::filesystem::is_directory(path) ? attnscope::Tokenizer::fromFolder(path)
                                               : attnscope::Tokenizer::fromFile(path);
}

// Repeated encodes with one tokenizer: its word cache is warm after the first.
void BM_Gpt2EncodeWarm(benchmark::State& state) {
    auto tok = load();
    const std::string& text = prose();
    std::size_t tokens = 0;
    for (auto _ : state) tokens = tok->encode(text, false).ids.size();
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
    state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_Gpt2EncodeWarm)->Unit(benchmark::kMillisecond);

// A fresh tokenizer each time (loading not timed): every word goes through the merges once.
void BM_Gpt2EncodeCold(benchmark::State& state) {
    const std::string& text = prose();
    for (auto _ : state) {
        state.PauseTiming();
        auto tok = load();
        state.ResumeTiming();
        benchmark::DoNotOptimize(tok->encode(text, false).ids.data());
        state.PauseTiming();
        tok.reset();
        state.ResumeTiming();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_Gpt2EncodeCold)->Unit(benchmark::kMillisecond);

}  // namespace
