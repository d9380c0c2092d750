#include "alignment_output.h"
#include "attention_tokens.h"
#include "commands.h"
#include "generate_output.h"
#include "gradient_output.h"
#include "image_text_output.h"
#include "common.h"
#include "lab_output.h"
#include "model_input.h"
#include "router_output.h"
#include "terms_output.h"

#include "attnscope/runtime/error.h"
#include "attnscope/analysis/source_metrics.h"
#include "source_blocks.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/attention/knockout_spec.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/lab/lab.h"
#include "attnscope/models/model.h"
#include "attnscope/io/npy.h"
#include "attnscope/attention/trace.h"
#include "attnscope/attention/window_padding.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>

namespace attnscope::cli {

namespace {

struct AttentionSettings {
    VariantSpec lab;  // the map written for each head (lab.h)
    AdditiveFitOptions fit;
    RunOptions run;
    bool rerun = false;  // --propagate, --mask-heads or --prune
    bool prune = false;
    Importance importance = Importance::Entropy;
    int pruneCount = 0;
    bool pruneLeast = false;
    int topK = 5;
    std::string what;                       // the intervention, in words
    MapSource source = MapSource::Weights;  // --source: what each map shows
};

LabVariant parseVariant(const std::string& v) {
    if (v == "dot") return LabVariant::Dot;
    if (v == "linear") return LabVariant::Linear;
    if (v == "additive") return LabVariant::Additive;
    if (v == "hybrid") return LabVariant::Hybrid;
    if (v == "local") return LabVariant::Local;
    if (v == "topk") return LabVariant::TopK;
    if (v == "lsh") return LabVariant::Lsh;
    throw Error("--variant '" + v + "' is not one of dot, linear, additive, hybrid, local, topk, lsh, hedgehog");
}

FeatureMap parseFeatureMap(const std::string& v) {
    if (v == "elu") return FeatureMap::Elu;
    if (v == "relu") return FeatureMap::Relu;
    if (v == "favor") return FeatureMap::Favor;
    if (v == "cos") return FeatureMap::Cos;
    throw Error("--feature-map '" + v + "' is not one of elu, relu, favor, cos");
}

void requireWith(const Args& args, const char* option, bool allowed, const char* needs) {
    if (args.value(option) && !allowed) throw UsageError(std::string("--") + option + " needs " + needs);
}

// --window/--two-sided (local), --keep (topk), --buckets/--rounds (lsh), each only with its variant.
void parseSparse(const Args& args, VariantSpec& lab) {
    const LabVariant v = lab.variant;
    requireWith(args, "window", v == LabVariant::Local, "--variant local");
    if (args.flag("two-sided") && v != LabVariant::Local) throw UsageError("--two-sided needs --variant local");
    requireWith(args, "keep", v == LabVariant::TopK, "--variant topk");
    requireWith(args, "buckets", v == LabVariant::Lsh, "--variant lsh");
    requireWith(args, "rounds", v == LabVariant::Lsh, "--variant lsh");
    SparseOptions& o = lab.map.sparse;
    if (v == LabVariant::Local) o.window = static_cast<int>(args.integer("window", 1, kMaxInt).value_or(o.window));
    o.twoSided = args.flag("two-sided");
    if (v == LabVariant::TopK) o.keep = static_cast<int>(args.integer("keep", 1, kMaxInt).value_or(o.keep));
    if (v == LabVariant::Lsh) {
        o.buckets = static_cast<int>(args.integer("buckets", 2, 1 << 20).value_or(o.buckets));
        if (o.buckets % 2 != 0)
            throw Error("--buckets must be even (h(x) = argmax([xR; -xR])), got " + std::to_string(o.buckets));
        o.rounds = static_cast<int>(args.integer("rounds", 1, 64).value_or(o.rounds));
    }
}

// Everything is checked before the model is loaded, so a bad value costs nothing.
AttentionSettings parseSettings(const Args& args) {
    AttentionSettings s;
    const double temperature = args.number("temperature").value_or(1.0);
    if (!(temperature > 0) || !std::isfinite(temperature)) throw Error("--temperature must be a finite number > 0");
    const bool propagate = args.flag("propagate");
    if (propagate && !args.value("temperature")) throw UsageError("--propagate needs --temperature T");
    requireWith(args, "layers", propagate, "--propagate");
    if (propagate) {
        s.run.temperature = temperature;
        if (auto layers = args.value("layers")) s.run.temperatureLayers = parseLayerList(*layers);
        std::ostringstream w;
        w << "temperature " << temperature << " inside ";
        if (s.run.temperatureLayers.empty())
            w << "every layer";
        else {
            w << "layers ";
            for (std::size_t i = 0; i < s.run.temperatureLayers.size(); ++i)
                w << (i ? "," : "") << s.run.temperatureLayers[i];
        }
        s.what = w.str();
    } else {
        s.lab.map.temperature = temperature;
    }
    if (auto heads = args.value("mask-heads")) {
        s.run.maskHeads = parseHeadList(*heads);
        s.what += (s.what.empty() ? "" : "; ") + std::string("masked heads ") + *heads;
    }
    if (auto p = args.value("prune")) {
        if (*p == "entropy")
            s.importance = Importance::Entropy;
        else if (*p == "output")
            s.importance = Importance::OutputChange;
        else
            throw Error("--prune '" + *p + "' is not one of entropy, output");
        s.prune = true;
        s.pruneCount = static_cast<int>(args.integer("prune-count", 1, kMaxInt).value_or(1));
        s.pruneLeast = args.flag("prune-least");
        s.what += (s.what.empty() ? "" : "; ") + std::string("pruned the ") + std::to_string(s.pruneCount) +
                  (s.pruneLeast ? " least" : " most") + " important heads by " + *p;
    } else if (args.value("prune-count") || args.flag("prune-least")) {
        throw UsageError("--prune-count and --prune-least need --prune entropy|output");
    }
    if (auto spec = args.value("knockout")) {
        try {
            s.run.knockouts = attnscope::parseKnockouts(*spec);  // one parser for the CLI and the Lab dock
        } catch (const Error& e) {
            throw Error(std::string("--knockout ") + e.what());
        }
        s.what += (s.what.empty() ? "" : "; ") + std::string("knockout ") + *spec;
    }
    s.rerun = propagate || !s.run.maskHeads.empty() || s.prune || !s.run.knockouts.empty();
    s.topK = static_cast<int>(args.integer("top-k", 1, kMaxInt).value_or(5));

    s.run.linearHeads = hedgehogHeads(args);  // --variant hedgehog --feature-file DIR
    if (!s.run.linearHeads.empty()) {
        s.rerun = true;
        s.what += (s.what.empty() ? "" : "; ") + std::to_string(s.run.linearHeads.size()) +
                  " heads replaced by learned linear maps";
    } else if (auto v = args.value("variant")) {
        s.lab.variant = parseVariant(*v);
    }
    const bool linear = s.lab.variant == LabVariant::Linear;
    const bool fitted = s.lab.variant == LabVariant::Additive || s.lab.variant == LabVariant::Hybrid;
    requireWith(args, "feature-map", linear, "--variant linear");
    requireWith(args, "gate", s.lab.variant == LabVariant::Hybrid, "--variant hybrid");
    requireWith(args, "fit-width", fitted, "--variant additive or hybrid");
    requireWith(args, "fit-steps", fitted, "--variant additive or hybrid");
    parseSparse(args, s.lab);
    if (auto fm = args.value("feature-map")) s.lab.map.featureMap = parseFeatureMap(*fm);
    requireWith(args, "features", linear && s.lab.map.featureMap == FeatureMap::Favor, "--feature-map favor");
    if (auto m = args.integer("features", 1, 65536)) {
        s.lab.map.features = static_cast<int>(*m);
    }
    if (auto seed = args.integer("seed", 0, kMaxSeed)) {
        s.lab.map.seed = s.fit.seed = s.lab.map.sparse.seed = static_cast<std::uint64_t>(*seed);
    }
    if (args.value("gate") == std::optional<std::string>("learned"))
        // A per-query gate fitted, like the additive fit, to the head's own dot map has the trivial
        // optimum g = 0 (the dot part already is the target); learned gates come from training.
        throw Error("--gate learned is not available on a pretrained head (fitted to the head's own dot map the "
                    "gate's optimum is g = 0); train a built-in model with --attention hybrid for a learned gate");
    if (auto g = args.number("gate")) {
        if (!(*g >= 0 && *g <= 1)) throw Error("--gate must be in [0, 1]");
        s.lab.gate = *g;
    }
    if (auto w = args.integer("fit-width", 1, 512)) {
        s.fit.width = static_cast<int>(*w);
    }
    if (auto st = args.integer("fit-steps", 1, 100000)) {
        s.fit.steps = static_cast<int>(*st);
    }
    s.fit.temperature = s.lab.map.temperature;
    if (auto v = args.value("source")) s.source = parseMapSource(*v);
    if (s.source != MapSource::Weights) {
        // The value sources weight by the maps the model used: no display variant or temperature.
        const std::string name = sourceName(s.source);
        const std::string what =
                sourceNeedsTerms(s.source) ? " is the model's own scores" : " weights the model's own maps";
        if (args.value("variant")) throw Error("--source " + name + what + "; it does not take --variant");
        if (args.value("temperature") && !propagate)
            throw Error("--source " + name + what + "; --temperature needs --propagate");
        s.run.captureValues = sourceNeedsValues(s.source);
        s.run.scoreTerms = sourceNeedsTerms(s.source);
    }
    return s;
}

// One block's maps as [layers, heads, queries, keys] float32; fitted variants also fill `fits`.
void writeBlock(const Trace& trace, int b, const AttentionSettings& s, const std::filesystem::path& file,
                nlohmann::json& fits) {
    const BlockInfo& block = trace.blocks()[b];
    const auto rows = static_cast<std::int64_t>(block.queryTokens.size());
    // Swin's window padding (attention/window_padding.h) is left out: the file is over the tokens.
    const int padding = paddingKeys(block);
    const auto cols = static_cast<std::int64_t>(block.keyTokens.size()) - padding;
    if (s.source != MapSource::Weights) {  // [layers, heads or 1, queries, keys]
        const bool perHead = perHeadSource(s.source);
        NpyWriter npy(file, {block.layers, perHead ? block.heads : 1, rows, cols});
        const MapProvider maps = traceMapProvider(trace, s.source);  // alti-rollout: one product per layer
        for (int l = 0; l < block.layers; ++l)
            for (int h = perHead ? 0 : -1; h < (perHead ? block.heads : 0); ++h) {
                const HeadMap map = withoutPaddingKeys(maps(b, l, h), padding);
                npy.append(map.values.data(), map.values.size());
            }
        npy.finish();
        return;
    }
    NpyWriter npy(file, {block.layers, block.heads, rows, cols});
    for (int l = 0; l < block.layers; ++l)
        for (int h = 0; h < block.heads; ++h) {
            std::optional<AdditiveFit> fit;
            if (variantNeedsFit(block, s.lab.variant)) {
                fit = fitAdditive(trace, b, l, h, s.fit);
                fits.push_back({{"block", block.name},
                                {"layer", l},
                                {"head", h},
                                {"initial_kl", fit->initialKl},
                                {"final_kl", fit->finalKl}});
            }
            const LinearHead* learned = findLinearHead(s.run.linearHeads, block.name, l, h);
            const HeadMap map = withoutPaddingKeys(learned ? hedgehogMap(trace, b, l, h, *learned)
                                                           : labMap(trace, b, l, h, s.lab, fit ? &*fit : nullptr).map,
                                                   padding);
            npy.append(map.values.data(), map.values.size());
        }
    npy.finish();
}

int runAttention(const std::vector<std::string>& argv) {
    Args args(argv,
              withGradientOptions(withGenerateOptions(withAlignmentOptions(withInputOptions(
                      {"out",      "device",      "temperature", "layers",        "variant",   "feature-map",
                       "features", "seed",        "mask-heads",  "gate",          "fit-width", "fit-steps",
                       "top-k",    "prune",       "prune-count", "capture-dtype", "weights",   "window",
                       "keep",     "buckets",     "rounds",      "revision",      "knockout",  "source",
                       "block",    "feature-file"})))),
              withGenerateFlags({"propagate", "prune-least", "progress", "two-sided", "terms"}));
    args.expectPositionals(1);
    const std::string outArg = args.required("out");
    const ModelInput input(args);
    const std::optional<GenerateRequest> gen = parseGenerateRequest(args);
    const AttentionSettings s = parseSettings(args);
    const std::optional<AlignmentRequest> align = parseAlignmentRequest(args);
    checkGradientOptions(args, s.source);
    const bool terms = args.flag("terms");
    if (terms && gradientSource(s.source))
        throw UsageError(std::string("--terms writes a forward's score terms, not --source ") + sourceName(s.source));

    auto model = loadModel(args);
    if (terms) requireScoreTerms(model->info());
    if (sourceNeedsTerms(s.source)) requireScoreTerms(model->info(), std::string("--source ") + sourceName(s.source));
    if (gradientSource(s.source)) {  // one forward and backward per explained output, no Trace
        RunOptions run = s.run;
        applyRunFlags(args, run);
        return writeGradientSource(args, *model, input, s.source, run, outArg);
    }
    RunOptions first, again = s.run;  // --capture-dtype and --progress for the run and a re-run
    applyRunFlags(args, first);
    applyRunFlags(args, again, "re-run");
    first.captureValues = s.run.captureValues;
    first.scoreTerms = again.scoreTerms = terms || s.run.scoreTerms;
    std::shared_ptr<const Trace> trace = input.run(*model, first);
    std::optional<Generation> generation;
    if (gen) {  // the prompt's ids as the input gave them, then N new tokens
        GenerateOptions go;
        go.tokens = gen->tokens;
        go.sampling = gen->sampling;
        go.run.captureDtype = first.captureDtype;
        go.run.captureValues = first.captureValues;
        generation = generate(*model, trace->ids(), go);
        trace = generation->trace;
        std::cout << "generated " << generation->generated.size() << " tokens ("
                  << (gen->sampling.sample ? "sampled" : "greedy") << "):";
        const auto& labels = trace->displayTokens();
        for (std::size_t i = generation->prompt.size(); i < labels.size(); ++i) std::cout << " " << labels[i];
        std::cout << "\n";
    }
    nlohmann::json change;
    if (s.prune) {
        validateHeads(*trace, s.run.maskHeads);
        const PruneResult p =
                pruneByImportance(*model, *trace, s.importance, s.pruneCount, s.pruneLeast, again, s.topK);
        std::cout << "masked by importance:";
        for (const HeadRef& h : p.masked)
            std::cout << " " << h.layer << ":" << h.head
                      << (h.block.empty() || p.trace->blocks().size() == 1 ? "" : "(" + h.block + ")");
        std::cout << "\n";
        trace = p.trace;
        change = outputChangeJson(p.change);
        change["intervention"] = s.what;
        for (const HeadScore& r : p.ranking)
            change["ranking"].push_back(
                    {{"block", r.head.block}, {"layer", r.head.layer}, {"head", r.head.head}, {"score", r.score}});
        printOutputChange(std::cout, p.change, s.what);
    } else if (s.rerun) {
        const Rerun r = rerun(*model, *trace, again, s.topK);  // validates layers and heads
        trace = r.trace;
        change = outputChangeJson(r.change);
        change["intervention"] = s.what;
        printOutputChange(std::cout, r.change, s.what);
    }
    const std::vector<int> chosen = sourceBlocks(*trace, s.source, args.value("block"));
    requireSourceCovered(*trace, model->info(), s.source, chosen);
    const std::optional<Alignment> alignment = align ? std::optional(computeAlignment(*trace, *align)) : std::nullopt;
    const std::filesystem::path out = prepareOutDir(outArg);
    StagedOutputs staged(out);  // every file below, or none of them
    std::vector<std::string> written;

    // One block ("self") is attention.npy; models with several write one file per block.
    const auto& blocks = trace->blocks();
    nlohmann::json fits = nlohmann::json::array();
    for (int b : chosen) {
        const std::string name = blocks.size() == 1 ? std::string("attention.npy") : blocks[b].name + ".npy";
        writeBlock(*trace, b, s, staged.path(name), fits);
        const int heads = perHeadSource(s.source) ? blocks[b].heads : 1;
        written.push_back((out / name).string() + " [" + std::to_string(blocks[b].layers) + ", " +
                          std::to_string(heads) + ", " + std::to_string(blocks[b].queryTokens.size()) + ", " +
                          std::to_string(blocks[b].keyTokens.size() - paddingKeys(blocks[b])) + "]");
    }

    nlohmann::json tokens = tokensJson(*trace, *model);
    // "source" already labels an encoder-decoder's columns; weights (the default) add nothing.
    if (s.source != MapSource::Weights) tokens["map_source"] = sourceName(s.source);
    if (generation) tokens["generation"] = generationJson(*generation, trace->tokens(), *gen);
    if (terms)
        written.push_back((out / "terms.npy").string() + " " +
                          writeScoreTerms(traceScoreTerms(*trace), staged.path("terms.npy"), tokens));
    if (!traceRouter(*trace).empty()) {  // mixture-of-experts decoders: the routers beside the maps
        const RouterTrace& r = traceRouter(*trace);
        writeRouterOutputs(r, staged.path("router.npy"), tokens);
        written.push_back((out / "router.npy").string() + " [" + std::to_string(r.layers) + ", " +
                          std::to_string(r.tokens) + ", " + std::to_string(r.experts) + "]");
    }
    if (const ImageTextScore& it = traceImageText(*trace); it.present)  // CLIP, SigLIP
        written.push_back((out / "contributions.npy").string() + " " +
                          writeImageTextOutputs(it, staged.path("contributions.npy"), tokens));
    writeFileAtomically(staged.path("tokens.json"), tokens.dump(2) + "\n");
    written.push_back((out / "tokens.json").string());
    if (s.rerun) {
        writeFileAtomically(staged.path("output_change.json"), change.dump(2) + "\n");
        written.push_back((out / "output_change.json").string());
    }
    if (!fits.empty()) {
        double before = 0, after = 0;
        for (const auto& f : fits) before += f["initial_kl"].get<double>(), after += f["final_kl"].get<double>();
        std::cout << "additive fit (width " << s.fit.width << ", " << s.fit.steps
                  << " Adam steps): mean KL to the dot map " << before / fits.size() << " -> " << after / fits.size()
                  << " nats over " << fits.size() << " heads\n";
        writeFileAtomically(staged.path("fit.json"),
                            nlohmann::json({{"width", s.fit.width}, {"steps", s.fit.steps}, {"heads", fits}}).dump(2) +
                                    "\n");
        written.push_back((out / "fit.json").string());
    }
    if (alignment) {
        writeAlignmentFile(*align, *alignment);
        written.push_back(align->file.string() + " (alignment on " +
                          (align->options.units == AlignmentUnits::Words ? "words" : "tokens") + ", " +
                          alignment->heads + ")");
    }
    staged.commit();
    for (const auto& w : written) std::cerr << "wrote " << w << "\n";
    return 0;
}

}  // namespace

Command attentionCommand() {
    return {"attention", "run a model and write its attention maps (.npy)",
            "usage: attnscope-cli attention MODEL (--ids 3,17,42 | --text STRING | --image FILE [--text STRING]) --out DIR\n"
            "                               [--pad-text-to N]\n"
            "                               [--target-text STRING | --target-ids 0,5,9 | --max-new-tokens N]\n"
            "                               [--device cpu|cuda|auto] [--type-ids 0,0,1,1] [--attend 1,1,1,0]\n"
            "                               [--temperature T [--propagate [--layers 0,2]]] [--mask-heads L:H,L:H]\n"
            "                               [--source weights|value-norm|value-norm-layer|alti|alti-rollout|\n"
            "                                grad-weighted|relevance [--target-token ID | --target-class C]]\n"
            "                               [--block NAME] [--terms]\n"
            "                               [--variant dot|linear|additive|hybrid|local|topk|lsh|hedgehog]\n"
            "                               [--feature-map elu|relu|favor|cos] [--window W [--two-sided]] [--keep K]\n"
            "                               [--buckets B] [--rounds R]\n"
            "                               [--features M] [--seed S] [--gate G] [--fit-width W] [--fit-steps N] [--top-k K]\n"
            "                               [--prune entropy|output [--prune-count K] [--prune-least]]\n"
            "                               [--weights auto|convert|stream] [--capture-dtype compute|float16|bfloat16] [--progress]\n"
            "                               [--generate N [--sample [--sample-temperature T] [--top-k K] [--top-p P] [--seed S]]]\n"
            "                               [--alignment FILE [--alignment-units words|tokens]\n"
            "                                [--alignment-heads L:H,L:H|all|layer:L] [--alignment-rows input|predicted]]\n\n"
            "Runs the model on the token ids (used exactly as given), on the text (through the model's\n"
            "tokenizer) or, for image models (ViT), on an image file (PNG, JPEG, ...; resized and normalised\n"
            "as the model's preprocessor_config.json says), and writes\n"
            "  DIR/attention.npy  float32, C order, [layers, heads, seq, seq]; row = query, column = key\n"
            "                     (models with several attention blocks write BLOCK.npy per block, e.g.\n"
            "                     encoder.npy, decoder.npy, cross.npy [layers, heads, target, source];\n"
            "                     Swin: stage1.npy, stage2.npy, ... [blocks, heads, n, n] over the stage's grid,\n"
            "                     row-major, zero outside each window; the probability a row gives to window\n"
            "                     padding is left out, so such rows sum to less than 1;\n"
            "                     CLIP, SigLIP (--image FILE --text STRING): vision.npy and text.npy, SigLIP's\n"
            "                     probe.npy [1, heads, 1, patches] (the MAP head's probe row))\n"
            "  DIR/contributions.npy  CLIP, SigLIP: float32 [heads, patches], each patch's direct contribution through\n"
            "                     one attention (CLIP: the last vision layer's [CLS] row; SigLIP: the probe) to the\n"
            "                     image-text logit; tokens.json's \"similarity\" has cosine, logit, remainder and its\n"
            "                     parts, so that the contributions plus the remainder equal the logit\n"
            "  DIR/tokens.json    ids, tokens, the labels of each block's rows and columns, and the\n"
            "                     model's outputs: for an encoder-decoder \"source\" (one label per\n"
            "                     column), \"target\" (one per row: the start symbol <s>, then each\n"
            "                     decoded symbol as fed back to the decoder) and \"output\" (the greedy\n"
            "                     decode); for a classifier \"label\" and \"probabilities\"; an image's\n"
            "                     tokens are [CLS] and its patches rRcC (row R, column C)\n"
            "  DIR/router.npy     mixture-of-experts decoders (Mixtral, Qwen2-MoE, OLMoE): float32 [layers, seq,\n"
            "                     experts], each router's softmax over all experts before the top-k and any\n"
            "                     renormalisation (NaN rows for dense layers); tokens.json adds \"router_topk\"\n"
            "                     [layer][token][k], the chosen experts most probable first (-1 on dense layers)\n"
            "MODEL is a model folder, a file in one, a GGUF file, ollama:NAME[:TAG], builtin:NAME or a model id in\n"
            "the Hugging Face cache\n"
            "(--revision REV; see info --help).\n"
            "--weights: half-precision weights converted to float32 up front, or streamed from the file one layer\n"
            "  at a time (auto: streamed only when converting does not fit in memory).\n"
            "--capture-dtype keeps the recorded Q and K in half precision (maps are still computed in float32).\n"
            "--progress writes the loading and the per-layer progress, with the time left, on stderr.\n"
            "Encoder-decoders (T5, BART, mBART, Marian): --target-ids are the decoder's input ids used exactly\n"
            "  (teacher forcing; they start with the decoder start token), --target-text is tokenized as the\n"
            "  target side and shifted right as Hugging Face does; without a target the model decodes greedily\n"
            "  up to --max-new-tokens (1..4096, default 32) or its end token. \"target\" then labels each\n"
            "  decoder row and \"output\" holds what each row writes (its argmax next token).\n"
            "--pad-text-to N (SigLIP) pads the text with text_config.pad_token_id to N tokens (SigLIP was trained on\n"
            "  64); without it the text is used as tokenized.\n"
            "--type-ids gives BERT-family models one token type per id; --attend marks padding (0) that\n"
            "  no query may attend to (1 = real token).\n"
            "--temperature T divides the attention logits by T before the softmax (display only), or with\n"
            "  --propagate inside the model's softmax in every layer (or --layers 0,2), so later layers and\n"
            "  the outputs change; the maps written are those the model then used.\n"
            "--mask-heads L:H,L:H zeroes those heads' outputs (BLOCK:L:H for one block) and re-runs.\n"
            "--knockout Q1,Q2:K1,K2@A-B[;...] sets the logits from those query positions to those key positions to\n"
            "  -inf before the softmax in layers A..B (decoder-only language models) and re-runs; the maps show it.\n"
            "--prune entropy|output ranks heads by importance (low mean entropy, or the output change when\n"
            "  the head alone is masked: one run per head) and masks the K (--prune-count, 1) most important\n"
            "  (--prune-least: least important) on top of --mask-heads; the ranking goes to output_change.json.\n"
            "  With --propagate, --mask-heads, --knockout or --prune the output change against the plain run (next-token top-K\n"
            "  and KL, class probabilities, the generated sequence, or for encoders without a head the mean\n"
            "  and max cosine distance of the final hidden states; CLIP, SigLIP: the image-text logit, ranked by its\n"
            "  absolute change) is printed and written to DIR/output_change.json.\n"
            "--source: what each map shows. weights (default): the attention weights α. value-norm\n"
            "  (Kobayashi et al. 2020): α_hij · ‖f_h(x̃_j)‖₂, f_h(x̃_j) = (x̃_j W_V^h + b_V^h) W_O^h, x̃ what the\n"
            "  heads read (after the pre-attention norm); raw norms, not normalised. value-norm-layer:\n"
            "  ‖Σ_h α_hij f_h(x̃_j)‖₂, one map per layer: [layers, 1, seq, seq]. α is the map the model used\n"
            "  (with --propagate, its temperature; masked heads add 0). Pretrained transformer families (not\n"
            "  the built-in models); tokens.json then has \"map_source\". Not with --variant or a display\n"
            "  --temperature. x̃ = x for post-norm models (BERT family); a cross block's x̃ is the encoder output.\n"
            "  alti (Ferrando et al. 2022): per layer, each token's contribution to the block's output y_i =\n"
            "  Σ_j T_i(x_j), T_i(x_j) = Σ_h α_hij f_h(x̃_j) plus, for j = i, the residual x_i and the output bias\n"
            "  (post-norm blocks: the LayerNorm linearised at token i; sandwich norms (Gemma-2/3, OLMo-2) at i's\n"
            "  scale): c_ij = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁), rows normalised to sum 1; [layers, 1, seq, seq].\n"
            "  alti-rollout: R⁰ = C⁰, Rˡ = Cˡ·Rˡ⁻¹. Parallel blocks (GPT-NeoX, GPT-J, Falcon, Phi): the attention\n"
            "  branch. Not for an encoder-decoder's decoder and cross blocks (they mix two streams): use\n"
            "  --block encoder. Formulas: core/include/attnscope/analysis/alti.h.\n"
            "--terms (DeBERTa v2/v3) also writes DIR/terms.npy float32 [layers, heads, 3, seq, seq]: the score terms\n"
            "  c2c, c2p, p2c in that order, each scaled by 1/sqrt(d * scale_factor), before the padding mask, so that\n"
            "  their sum is the logits the softmax takes (a term the config leaves out is zeros); p2c indexed as\n"
            "  Hugging Face's code does (k_j against the position query at i - j). Other models are refused.\n"
            "--block NAME writes that block's file only (attention.npy for one-block models, else NAME.npy:\n"
            "  encoder, decoder, cross); a name the model lacks is refused.\n"
            "--source grad-weighted (Chefer et al. 2021): G = (∂s/∂α_hij) · α_hij, signed, the derivative total through\n"
            "  the whole model; s is the logit of --target-token ID at the last position (decoder language models,\n"
            "  before any final soft-cap) or of --target-class C (an index or a label; ViT with a head), by default\n"
            "  the argmax. relevance: Ā = mean_h max(G, 0), R = I, R <- R + Ā R per layer; the map of layer l is R\n"
            "  after it: [layers, 1, seq, seq]. One forward and one backward (refused, naming the memory it needs,\n"
            "  where the backward would not fit); --propagate, --mask-heads and --knockout apply. tokens.json adds\n"
            "  \"target\", \"target_label\", \"target_kind\" (token or class) and \"score\" (s). Encoder-decoders and\n"
            "  encoders without a head are refused.\n"
            "--variant dot: softmax(q·k·scale/T); linear: φ(q)·φ(k) normalised per row with --feature-map\n"
            "  elu (elu+1, default), relu or favor (FAVOR+ with --features M orthogonal random features,\n"
            "  default 256, fixed --seed; estimates the dot map at T); additive: W_q, W_k, v of width\n"
            "  --fit-width (32) fitted to each head's dot map by Adam (--fit-steps, 300), KL per head in\n"
            "  DIR/fit.json; hybrid: --gate G (0.5) · additive + (1 - G) · dot; --feature-map cos: cosFormer,\n"
            "  relu(q)·relu(k)·cos(π/2·(i-j)/M), M = max(rows, keys).\n"
            "--variant local|topk|lsh: the head's own logits (scale, caps, biases) softmaxed over the kept keys only:\n"
            "  local --window W (4) keeps keys i-W+1..i (--two-sided: |i-j| < W); topk --keep K (4) keeps the K largest\n"
            "  logits (ties to the lower key); lsh (Reformer, self-attention) hashes each query by argmax([qR; -qR]) into\n"
            "  --buckets B (even, 4) with --rounds R (1) fixed random rotations (--seed S), sorts by bucket, and keeps\n"
            "  the keys of the query's chunk (length ceil(n/B)) and the chunk before, in any round; causal heads keep\n"
            "  no future key, and a query keeps itself only when it has no other key.\n"
            "--variant hedgehog --feature-file DIR: the heads of a distil --per-head folder replace their softmax\n"
            "  by the learned linear map (docs/kinds.md) in a re-run; the output change is printed and their maps\n"
            "  are written; other heads keep their own maps.\n"
            "--generate N (decoder-only language models) generates N tokens (1..4096) after the input, one\n"
            "  forward per token, greedily or with --sample from softmax(logits / --sample-temperature T)\n"
            "  (default 1) cut to the --top-k K most likely (default: all) and the --top-p P nucleus (0 < P\n"
            "  <= 1, default 1), seeded by --seed S (default 0: the same seed gives the same tokens). The\n"
            "  sampling temperature picks tokens only; --temperature is the attention temperature of the maps.\n"
            "  The maps written are those of the whole sequence (prompt + generated); tokens.json adds\n"
            "  \"generation\": prompt_ids, generated_ids, their tokens and step_query_rows (step s chose\n"
            "  generated_ids[s] in query row prompt + s - 1). Not with --propagate, --mask-heads or --prune.\n"
            "--alignment FILE (encoder-decoders) writes the hard source-target alignment: per target token\n"
            "  the source token its cross-attention row attends most, from the mean of --alignment-heads\n"
            "  (default: every head of the last layer; all = every layer's), as one Pharaoh line\n"
            "  \"i-j i-j ...\" (source index - target index, 0-based, the format fast_align, awesome-align\n"
            "  and AER scripts read). Special tokens (<s>, </s>, [CLS], language codes) and the decoder\n"
            "  start row are left out and not counted. --alignment-units words groups tokens into words\n"
            "  by their word-start marks (▁, Ġ; ## continues); a word pair is linked when any of its\n"
            "  token pairs is. --alignment-rows: a target token's row is the one that predicts it\n"
            "  (predicted, default) or the one it is fed in (input).\n"
            "Invalid input exits with code 2 and one 'error: ...' line.\n",
            runAttention};
}

}  // namespace attnscope::cli
