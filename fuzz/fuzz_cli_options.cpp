// The CLI's option parsers, as every command uses them: Args (values, flags, "--name=value",
// integers and numbers in ranges) and the parsers of lists and specs that options take — token
// ids, integer lists, heads (L:H, BLOCK:L:H), knockouts (Q:K@A-B;...), devices, attention kinds,
// tasks. The input is a command line: arguments separated by NUL bytes. Checked: only
// attnscope::Error and UsageError escape (a crash, a sanitizer report or any other exception is a
// finding), and a parsed integer lies in the range it was asked for.
#include "../app/cli/args.h"
#include "../app/cli/common.h"
#include "fuzz_util.h"

#include "attnscope/attention/knockout_spec.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/models/builtin.h"
#include "attnscope/runtime/device.h"
#include "attnscope/runtime/error.h"

#include <string>
#include <vector>

namespace {

using attnscope::cli::Args;
using attnscope::cli::UsageError;

template <class F>
void tolerant(F f) {
    try {
        f();
    } catch (const attnscope::Error&) {
    } catch (const UsageError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> argv;
    for (std::string_view part :
         attnscope::fuzz::splitParts(attnscope::fuzz::asView(data, size), std::string_view("\0", 1)))
        argv.emplace_back(part);
    tolerant([&] {
        const Args args(
                argv, {"ids", "layer", "seed", "temperature", "knockout", "mask-heads", "device", "attention", "task"},
                {"progress", "propagate"});
        for (const std::string& name : {"layer", "seed"}) {
            tolerant([&] {
                if (const auto v = args.integer(name, -5, 1000); v && (*v < -5 || *v > 1000)) __builtin_trap();
            });
        }
        tolerant([&] { args.number("temperature"); });
        if (auto v = args.value("ids")) {
            tolerant([&] { attnscope::cli::parseIds(*v); });
            tolerant([&] { attnscope::cli::parseIntegers(*v, "--ids", "token id"); });
        }
        if (auto v = args.value("knockout")) {
            tolerant([&] {
                for (const auto& k : attnscope::parseKnockouts(*v))
                    for (const auto* list : {&k.queries, &k.keys})
                        for (std::int64_t p : *list)
                            if (p < 0) __builtin_trap();  // positions are whole numbers >= 0
            });
        }
        if (auto v = args.value("mask-heads")) tolerant([&] { attnscope::parseHeadList(*v); });
        if (auto v = args.value("device")) tolerant([&] { attnscope::parseDeviceChoice(*v); });
        if (auto v = args.value("attention")) tolerant([&] { attnscope::parseAttentionKind(*v); });
        if (auto v = args.value("task")) tolerant([&] { attnscope::parseTask(*v); });
        args.expectPositionals(1);
    });
    return 0;
}
