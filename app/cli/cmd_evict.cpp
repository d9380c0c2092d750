// attnscope-cli evict: the KV-eviction what-if (analysis/kv_eviction.h).
#include "commands.h"
#include "common.h"
#include "model_input.h"

#include "attnscope/analysis/kv_eviction.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/npy.h"
#include "attnscope/models/model.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>

namespace attnscope::cli {

namespace {

int runEvict(const std::vector<std::string>& argv) {
    Args args(argv,
              {"ids", "text", "policy", "budget", "recent", "window", "kernel", "sinks", "max-new-tokens", "out",
               "device", "weights", "capture-dtype", "revision"},
              {"progress"});
    args.expectPositionals(1);
    const std::string outArg = args.required("out");
    EvictionOptions o;
    o.policy = parseEvictionPolicy(args.required("policy"));
    if (!args.value("budget")) throw UsageError("missing --budget B (prompt keys each kv head keeps)");
    o.budget = static_cast<int>(*args.integer("budget", 1, kMaxInt));
    o.recent = static_cast<int>(args.integer("recent", 0, kMaxInt).value_or(-1));
    o.window = static_cast<int>(args.integer("window", 1, kMaxInt).value_or(32));
    o.kernel = static_cast<int>(args.integer("kernel", 1, kMaxInt).value_or(5));
    o.sinks = static_cast<int>(args.integer("sinks", 0, kMaxInt).value_or(4));
    if (!args.value("max-new-tokens")) throw UsageError("missing --max-new-tokens N");
    o.newTokens = static_cast<int>(*args.integer("max-new-tokens", 1, kMaxNewTokens));
    for (const auto& [option, policy] : {std::pair{"recent", EvictionPolicy::H2O},
                                         {"window", EvictionPolicy::SnapKV},
                                         {"kernel", EvictionPolicy::SnapKV},
                                         {"sinks", EvictionPolicy::Streaming}})
        if (args.value(option) && o.policy != policy)
            throw UsageError(std::string("--") + option + " applies to --policy " + evictionPolicyName(policy));
    auto model = loadModel(args);
    applyRunFlags(args, o.run);
    const std::vector<std::int64_t> ids = inputIds(args, *model);
    checkEvictionOptions(o, static_cast<std::int64_t>(ids.size()));
    if (args.flag("progress")) o.progress = stderrProgress("evict", "steps");
    const EvictionResult r = evictionWhatIf(*model, ids, o);

    const std::filesystem::path out = prepareOutDir(outArg);
    StagedOutputs staged(out);  // every file, or none
    const EvictionSelection& s = r.selection;
    const std::vector<std::int64_t> shape = {s.layers, s.kvHeads, s.n};
    writeNpy(staged.path("scores.npy"), shape, s.scores);
    writeNpyBool(staged.path("kept.npy"), shape, s.kept);
    nlohmann::json report = {{"policy", evictionPolicyName(o.policy)},
                             {"budget", o.budget},
                             {"prompt_length", s.n},
                             {"max_new_tokens", o.newTokens},
                             {"agreement", r.agreement},
                             {"kl_per_step", r.klPerStep},
                             {"first_difference", r.firstDifference},
                             {"tokens_full", r.tokensFull},
                             {"tokens_evicted", r.tokensEvicted}};
    if (o.policy == EvictionPolicy::H2O) report["recent"] = o.recent >= 0 ? o.recent : o.budget / 2;
    if (o.policy == EvictionPolicy::SnapKV) report["window"] = o.window, report["kernel"] = o.kernel;
    if (o.policy == EvictionPolicy::Streaming) report["sinks"] = o.sinks;
    writeFileAtomically(staged.path("report.json"), report.dump(2) + "\n");
    staged.commit();
    std::cout << evictionPolicyName(o.policy) << ", budget " << o.budget << " of " << s.n << " prompt keys: agreement "
              << r.agreement << " over " << o.newTokens << " tokens, first difference " << r.firstDifference << "\n";
    for (const char* name : {"scores.npy", "kept.npy", "report.json"})
        std::cerr << "wrote " << (out / name).string() << "\n";
    return 0;
}

}  // namespace

Command evictCommand() {
    return {"evict", "KV-eviction what-if: generate with a policy's kept keys and compare with the full cache",
            "usage: attnscope-cli evict MODEL (--ids IDS | --text TEXT) --policy h2o|snapkv|streaming --budget B\n"
            "                           [--recent R] [--window W] [--kernel K] [--sinks S] --max-new-tokens N --out DIR\n"
            "                           [--device cpu|cuda|auto] [--weights auto|convert|stream]\n"
            "                           [--capture-dtype compute|float16|bfloat16] [--progress]\n\n"
            "After the prompt's forward, each layer's kv heads keep B prompt keys chosen by the policy and lose\n"
            "the others for every later step; N tokens are generated greedily with and without eviction (each\n"
            "on its own prefix). Kept keys keep their positions; the first generated token always agrees.\n"
            "  h2o        keep the R last prompt positions (default B/2) and the top B - R by the attention\n"
            "             each key received from the prompt's rows (summed, averaged over the kv group)\n"
            "  snapkv     keep the last W prompt positions (default 32) and the top B - W by the attention the\n"
            "             window's rows give each earlier key, averaged over the kv group and pooled over K\n"
            "             keys (default 5, odd)\n"
            "  streaming  keep the first S (default 4) and the last B - S prompt positions\n"
            "Writes DIR/scores.npy float32 [layers, kv heads, prompt] (the policy's score per key; NaN for\n"
            "snapkv's window; streaming 1 kept, 0 evicted), DIR/kept.npy bool [layers, kv heads, prompt] and\n"
            "DIR/report.json: agreement (share of steps with equal tokens), kl_per_step (KL(p_full || p_evicted),\n"
            "nats), first_difference (-1 if none), tokens_full, tokens_evicted.\n"
            "A budget that cannot hold the forced keys (recent, window, sinks) is refused (exit 2).\n",
            runEvict};
}

}  // namespace attnscope::cli
