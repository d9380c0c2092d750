#include "commands.h"
#include "common.h"

#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace attnscope::cli {

namespace {

int runListBuiltin(const std::vector<std::string>& argv) {
    Args args(argv, {}, {"json"});
    args.expectPositionals(0);
    nlohmann::json list = nlohmann::json::array();
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    const auto models = builtinModels();
    if (models.empty())
        throw Error(
                "no built-in models found (looked in $ATTNSCOPE_BUILTIN_DIR and <install prefix>/share/attnscope/builtin)");
    for (const BuiltinModel& b : models) {
        const auto model = Model::load(b.folder, options);
        const ModelInfo& i = model->info();
        if (args.flag("json")) {
            list.push_back({{"name", b.name},
                            {"spec", "builtin:" + b.name},
                            {"task", i.task},
                            {"attention", i.attention},
                            {"family", i.family},
                            {"parameters", i.parameters},
                            {"path", b.folder.string()}});
        } else {
            char line[160];
            std::snprintf(line, sizeof line, "%-20s %-10s %-9s %7lld parameters\n", b.name.c_str(), i.task.c_str(),
                          i.attention.c_str(), static_cast<long long>(i.parameters));
            std::cout << line;
        }
    }
    if (args.flag("json")) std::cout << list.dump(2) << "\n";
    return 0;
}

}  // namespace

Command listBuiltinCommand() {
    return {"list-builtin", "list the built-in models",
            "usage: attnscope-cli list-builtin [--json]\n\n"
            "One line per built-in model: name (use it as builtin:NAME wherever a model is accepted),\n"
            "task, attention kind and parameter count. --json prints a list of objects instead.\n",
            runListBuiltin};
}

}  // namespace attnscope::cli
