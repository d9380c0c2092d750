// Attention files: the .npy header (magic, version, header length, the dict, the shape against
// the file size) read by NpyFile::open, then openAttentionFile's shape, value and token checks
// and one map at two temperatures, as File > Open Attention File does. The input's first line,
// when it starts with "[" or "{", is taken as the tokens JSON and the rest as the .npy.
#include "fuzz_util.h"

#include "attnscope/attention/attention_file.h"
#include "attnscope/attention/trace.h"
#include "attnscope/runtime/error.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    std::string_view bytes = fuzz::asView(data, size);
    std::filesystem::path tokens;
    if (!bytes.empty() && (bytes[0] == '[' || bytes[0] == '{')) {
        const std::size_t end = bytes.find('\n');
        if (end == std::string_view::npos) return 0;
        tokens = fuzz::scratch() / "tokens.json";
        fuzz::writeBytes(tokens, bytes.substr(0, end));
        bytes.remove_prefix(end + 1);
    }
    const auto file = fuzz::scratch() / "attention.npy";
    fuzz::writeBytes(file, bytes);
    try {
        const auto trace = openAttentionFile(file, tokens);
        const BlockInfo& b = trace->blocks().front();
        volatile float sum = 0;
        for (double t : {1.0, 0.25}) {
            MapOptions o;
            o.temperature = t;
            const HeadMap m = trace->map(0, b.layers - 1, b.heads - 1, o);
            for (float v : m.values) sum = sum + v;
        }
        PoolRequest pool;
        pool.outRows = pool.outCols = 3;
        for (float v : trace->pooledMap(0, 0, 0, pool).values) sum = sum + v;
    } catch (const Error&) {
    }
    return 0;
}
