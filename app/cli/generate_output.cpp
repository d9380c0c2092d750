#include "generate_output.h"

#include "attnscope/runtime/error.h"

#include <cmath>

namespace attnscope::cli {

std::set<std::string> withGenerateOptions(std::set<std::string> options) {
    options.insert({"generate", "sample-temperature", "top-p"});
    return options;
}

std::set<std::string> withGenerateFlags(std::set<std::string> flags) {
    flags.insert("sample");
    return flags;
}

std::optional<GenerateRequest> parseGenerateRequest(const Args& args) {
    const bool sample = args.flag("sample");
    if (!args.value("generate")) {
        if (sample || args.value("sample-temperature") || args.value("top-p"))
            throw UsageError("--sample, --sample-temperature and --top-p need --generate N");
        return std::nullopt;
    }
    for (const char* other : {"propagate", "prune-least"})
        if (args.flag(other)) throw UsageError(std::string("--generate cannot be combined with --") + other);
    for (const char* other : {"mask-heads", "prune", "target-text", "target-ids", "max-new-tokens"})
        if (args.value(other)) throw UsageError(std::string("--generate cannot be combined with --") + other);
    GenerateRequest r;
    r.tokens = static_cast<int>(*args.integer("generate", 1, 4096));
    if (!sample && (args.value("sample-temperature") || args.value("top-p") || args.value("top-k")))
        throw UsageError("--sample-temperature, --top-k and --top-p with --generate need --sample (greedy otherwise)");
    r.sampling.sample = sample;
    if (auto t = args.number("sample-temperature")) {
        if (!(*t > 0)) throw Error("--sample-temperature must be a finite number > 0");
        r.sampling.temperature = *t;
    }
    if (auto k = args.integer("top-k", 0, kMaxInt)) r.sampling.topK = static_cast<int>(*k);
    if (auto p = args.number("top-p")) {
        if (!(*p > 0 && *p <= 1)) throw Error("--top-p must be in (0, 1]");
        r.sampling.topP = *p;
    }
    if (auto seed = args.integer("seed", 0, kMaxSeed)) r.sampling.seed = static_cast<std::uint64_t>(*seed);
    return r;
}

nlohmann::json generationJson(const Generation& g, const std::vector<std::string>& tokens, const GenerateRequest& r) {
    const std::size_t p = g.prompt.size();
    nlohmann::json j = {{"prompt_ids", g.prompt},
                        {"generated_ids", g.generated},
                        {"prompt_tokens", std::vector<std::string>(tokens.begin(), tokens.begin() + p)},
                        {"generated_tokens", std::vector<std::string>(tokens.begin() + p, tokens.end())},
                        {"mode", r.sampling.sample ? "sample" : "greedy"},
                        // Step s chose generated_ids[s] from query row prompt + s - 1.
                        {"step_query_rows", nlohmann::json::array()}};
    for (std::size_t s = 0; s < g.generated.size(); ++s) j["step_query_rows"].push_back(p + s - 1);
    if (r.sampling.sample)
        j["sampling"] = {{"sample_temperature", r.sampling.temperature},
                         {"top_k", r.sampling.topK},
                         {"top_p", r.sampling.topP},
                         {"seed", r.sampling.seed}};
    return j;
}

}  // namespace attnscope::cli
