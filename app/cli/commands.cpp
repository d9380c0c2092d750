#include "commands.h"

#include "attnscope/error.h"
#include "attnscope/model.h"
#include "attnscope/npy.h"
#include "attnscope/trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace attnscope::cli {

namespace {

std::shared_ptr<const Model> loadModel(const Args& args) {
    LoadOptions options;
    options.device = parseDeviceChoice(args.value("device").value_or("auto"));
    return Model::load(args.positional(0, "MODEL (a model folder)"), options);
}

std::vector<std::int64_t> parseIds(const std::string& text) {
    std::vector<std::int64_t> ids;
    std::string token;
    std::istringstream in(text);
    while (std::getline(in, token, ',')) {
        token.erase(0, token.find_first_not_of(" \t"));
        token.erase(token.find_last_not_of(" \t") + 1);
        std::size_t used = 0;
        long long id = -1;
        try {
            id = std::stoll(token, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (token.empty() || used != token.size()) throw Error("--ids: '" + token + "' is not a token id (expected e.g. 3,17,42)");
        ids.push_back(id);
    }
    if (ids.empty()) throw Error("--ids: no token ids given");
    return ids;
}

// Writes text to path via a temporary file, so a failure never leaves a half-written file.
void writeTextFile(const std::filesystem::path& path, const std::string& text) {
    auto tmp = path;
    tmp += ".tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw Error(path.string() + ": cannot write here");
        out << text;
        if (!out.flush()) throw Error(path.string() + ": write failed");
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw Error(path.string() + ": cannot be written");
    }
}

std::filesystem::path prepareOutDir(const std::string& dir) {
    std::filesystem::path out(dir);
    std::error_code ec;
    if (std::filesystem::exists(out, ec) && !std::filesystem::is_directory(out, ec))
        throw Error("--out " + dir + ": exists and is not a folder");
    std::filesystem::create_directories(out, ec);
    if (ec) throw Error("--out " + dir + ": cannot create the folder: " + ec.message());
    if (::access(out.c_str(), W_OK) != 0) throw Error("--out " + dir + ": the folder is not writable");
    return out;
}

int runInfo(const std::vector<std::string>& argv) {
    Args args(argv, {"device"}, {"json"});
    args.expectPositionals(1);
    auto model = loadModel(args);
    const ModelInfo& i = model->info();
    if (args.flag("json")) {
        nlohmann::json j = {{"family", i.family},       {"layers", i.layers},     {"heads", i.heads},
                            {"kv_heads", i.kvHeads},    {"head_dim", i.headDim},  {"hidden", i.hidden},
                            {"vocab_size", i.vocabSize}, {"max_positions", i.maxPositions},
                            {"parameters", i.parameters}, {"dtype", i.dtype},     {"device", i.device}};
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << "family:        " << i.family << "\n"
              << "layers:        " << i.layers << "\n"
              << "heads:         " << i.heads << (i.kvHeads != i.heads ? " (" + std::to_string(i.kvHeads) + " key/value heads)" : "") << "\n"
              << "head dim:      " << i.headDim << "\n"
              << "hidden:        " << i.hidden << "\n"
              << "vocab size:    " << i.vocabSize << "\n"
              << "parameters:    " << i.parameters << "\n"
              << "dtype:         " << i.dtype << "\n"
              << "max positions: " << i.maxPositions << "\n"
              << "device:        " << i.device << "\n";
    return 0;
}

int runAttention(const std::vector<std::string>& argv) {
    Args args(argv, {"ids", "out", "device", "temperature"}, {});
    args.expectPositionals(1);
    const std::string outArg = args.required("out");
    const std::vector<std::int64_t> ids = parseIds(args.required("ids"));
    MapOptions mapOptions;
    mapOptions.temperature = args.number("temperature").value_or(1.0);
    if (!(mapOptions.temperature > 0) || !std::isfinite(mapOptions.temperature))
        throw Error("--temperature must be a finite number > 0");

    auto model = loadModel(args);
    auto trace = model->forward(ids);
    const std::filesystem::path out = prepareOutDir(outArg);

    const BlockInfo& block = trace->blocks().at(0);
    const auto n = static_cast<std::int64_t>(ids.size());
    NpyWriter npy(out / "attention.npy", {block.layers, block.heads, n, n});
    for (int l = 0; l < block.layers; ++l)
        for (int h = 0; h < block.heads; ++h) {
            const HeadMap map = trace->map(0, l, h, mapOptions);
            npy.append(map.values.data(), map.values.size());
        }
    const nlohmann::json tokens = {{"ids", trace->ids()}, {"tokens", trace->tokens()}};
    npy.finish();
    writeTextFile(out / "tokens.json", tokens.dump(2) + "\n");
    std::cerr << "wrote " << (out / "attention.npy").string() << " [" << block.layers << ", " << block.heads << ", " << n
              << ", " << n << "] and tokens.json\n";
    return 0;
}

int runBench(const std::vector<std::string>& argv) {
    Args args(argv, {"seq", "repeat", "warmup", "device", "seed"}, {"json"});
    args.expectPositionals(1);
    const long long seq = args.integer("seq").value_or(512);
    const long long repeat = args.integer("repeat").value_or(5);
    const long long warmup = args.integer("warmup").value_or(1);
    if (seq < 1 || repeat < 1 || warmup < 0) throw UsageError("--seq and --repeat must be >= 1, --warmup >= 0");
    auto model = loadModel(args);
    const ModelInfo& info = model->info();
    std::mt19937_64 rng(static_cast<std::uint64_t>(args.integer("seed").value_or(0)));
    std::uniform_int_distribution<std::int64_t> pick(0, info.vocabSize - 1);
    std::vector<std::int64_t> ids(static_cast<std::size_t>(seq));
    for (auto& id : ids) id = pick(rng);

    std::vector<double> ms;
    for (long long r = 0; r < warmup + repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        auto trace = model->forward(ids);
        const auto t1 = std::chrono::steady_clock::now();
        if (r >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2], best = ms.front();
    if (args.flag("json")) {
        nlohmann::json j = {{"family", info.family}, {"seq", seq}, {"device", info.device}, {"runs", ms},
                            {"median_ms", median}, {"min_ms", best}, {"threads", std::thread::hardware_concurrency()}};
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << std::fixed << std::setprecision(1) << "forward+capture " << info.family << " " << info.layers << "x"
                  << info.heads << "x" << info.hidden << ", " << seq << " tokens on " << info.device << ": median "
                  << median << " ms, min " << best << " ms over " << repeat << " runs\n";
    }
    return 0;
}

const char* kInfoUsage =
    "usage: attnscope-cli info MODEL [--device cpu|cuda|auto] [--json]\n\n"
    "Prints the model's family, layers, heads, head dim, parameters, dtype and max positions.\n"
    "MODEL is a folder with config.json and model.safetensors.\n";
const char* kAttentionUsage =
    "usage: attnscope-cli attention MODEL --ids 3,17,42 --out DIR [--device cpu|cuda|auto] [--temperature T]\n\n"
    "Runs the model on the token ids (used exactly as given) and writes\n"
    "  DIR/attention.npy  float32, C order, [layers, heads, seq, seq]; row = query, column = key\n"
    "  DIR/tokens.json    {\"ids\": [...], \"tokens\": [...]}\n"
    "--temperature T divides the attention logits by T before the softmax (display only).\n"
    "Invalid input exits with code 2 and one 'error: ...' line.\n";
const char* kBenchUsage =
    "usage: attnscope-cli bench MODEL [--seq N] [--repeat R] [--warmup W] [--device cpu|cuda|auto] [--seed S] [--json]\n\n"
    "Times forward+capture on N random token ids (default 512), R timed runs after W warm-up runs.\n";

}  // namespace

const std::vector<Command>& commands() {
    static const std::vector<Command> all = {
        {"info", "describe a model", kInfoUsage, runInfo},
        {"attention", "run a model and write its attention maps (.npy)", kAttentionUsage, runAttention},
        {"bench", "time forward+capture", kBenchUsage, runBench},
    };
    return all;
}

}  // namespace attnscope::cli
