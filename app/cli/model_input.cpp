#include "model_input.h"

#include "common.h"
#include "image_file.h"

#include "attnscope/runtime/error.h"
#include "attnscope/attention/trace.h"

namespace attnscope::cli {

namespace {

std::vector<std::uint8_t> parseAttend(const std::string& text) {
    std::vector<std::uint8_t> out;
    for (auto a : parseIntegers(text, "--attend", "0/1 value")) {
        if (a != 0 && a != 1) throw Error("--attend: values must be 0 (padding) or 1, found " + std::to_string(a));
        out.push_back(static_cast<std::uint8_t>(a));
    }
    return out;
}

}  // namespace

std::set<std::string> withInputOptions(std::set<std::string> options) {
    options.insert({"ids", "text", "image", "type-ids", "attend", "target-text", "target-ids", "max-new-tokens",
                    "pad-text-to"});
    return options;
}

// The encoder-decoder part of the input: a forced target or a greedy decoding's length.
bool ModelInput::hasTargetOptions() const {
    return args_.value("target-text") || args_.value("target-ids") || args_.value("max-new-tokens");
}

ModelInput::ModelInput(const Args& args) : args_(args) {
    // An image with a text (or ids) is the input of the image–text models (CLIP, SigLIP).
    const int words = (args.value("ids") ? 1 : 0) + (args.value("text") ? 1 : 0);
    if (words > 1) throw UsageError("give one input: --ids, --text or --image (--image with --text for clip, siglip)");
    if ((args.value("type-ids") || args.value("attend")) && args.value("image"))
        throw UsageError("--type-ids and --attend go with --ids or --text, not --image");
    if (auto ids = args.value("ids")) parseIds(*ids);  // malformed values fail before loading
    if (auto types = args.value("type-ids")) parseIntegers(*types, "--type-ids", "token type");
    if (auto attend = args.value("attend")) parseAttend(*attend);
    if (args.value("target-text") && args.value("target-ids"))
        throw UsageError("give either --target-text or --target-ids, not both");
    if (args.value("max-new-tokens") && (args.value("target-text") || args.value("target-ids")))
        throw UsageError("--max-new-tokens goes with greedy decoding, not with a given target");
    if ((args.value("target-text") || args.value("target-ids") || args.value("max-new-tokens")) && args.value("image"))
        throw UsageError("--target-text, --target-ids and --max-new-tokens go with --ids or --text, not --image");
    if (auto target = args.value("target-ids")) parseIntegers(*target, "--target-ids", "token id");
    args.integer("max-new-tokens", 1, kMaxNewTokens);
    args.integer("pad-text-to", 1, 1 << 20);
    if (auto image = args.value("image")) image_ = readImageFile(*image);
}

std::shared_ptr<const Trace> ModelInput::run(const Model& model, const RunOptions& options) const {
    const ModelInfo& info = model.info();
    const bool words = args_.value("text") || args_.value("ids");
    if (info.imageText) {  // both towers: an image and a text, checked by the model (exit code 2)
        if (!image_ || !words)
            throw Error(info.family + " takes an image and a text together: --image FILE --text STRING (or --ids)");
        if (hasTargetOptions())
            throw UsageError("--target-text, --target-ids and --max-new-tokens need an encoder-decoder model");
        TextInput in;
        in.ids = inputIds(args_, model);
        if (auto pad = args_.integer("pad-text-to", 1, 1 << 20)) {  // SigLIP's training length is 64
            if (info.padTokenId < 0)
                throw Error("--pad-text-to pads siglip's text; " + info.family + "'s text is used as tokenized");
            if (static_cast<long long>(in.ids.size()) > *pad)
                throw Error("the text has " + std::to_string(in.ids.size()) + " tokens, more than --pad-text-to " +
                            std::to_string(*pad));
            in.ids.resize(static_cast<std::size_t>(*pad), info.padTokenId);
        }
        return model.forwardImageText(*image_, in, options);
    }
    if (args_.value("pad-text-to")) throw UsageError("--pad-text-to goes with image-text models (siglip)");
    if (image_ && words)
        throw UsageError("--image with --text or --ids goes with image-text models (clip, siglip); " + info.family +
                         " takes one input");
    if (model.info().imageInput && !image_)
        throw UsageError(model.info().family + " models take an image: --image FILE.png|.jpg");
    if (image_) return model.forwardImage(*image_, options);
    if (hasTargetOptions()) {
        if (!model.info().encoderDecoder)
            throw UsageError("--target-text, --target-ids and --max-new-tokens need an encoder-decoder model (" +
                             model.info().family + " is not one)");
        TextInput in;
        in.ids = inputIds(args_, model);
        if (auto target = args_.value("target-ids")) in.targetIds = parseIds(*target);
        if (auto target = args_.value("target-text")) in.targetIds = model.encodeTarget(*target);
        in.maxNewTokens = static_cast<int>(args_.integer("max-new-tokens", 1, kMaxNewTokens).value_or(in.maxNewTokens));
        return model.forwardText(in, options);
    }
    if (args_.value("type-ids") || args_.value("attend")) {  // encoder extras (BERT family)
        TextInput in{inputIds(args_, model), {}, {}};
        if (auto types = args_.value("type-ids")) in.typeIds = parseIntegers(*types, "--type-ids", "token type");
        if (auto attend = args_.value("attend")) in.attend = parseAttend(*attend);
        return model.forwardText(in, options);
    }
    return model.forward(inputIds(args_, model), options);
}

GradientInput ModelInput::gradientInput(const Model& model) const {
    if (model.info().imageText)
        throw Error("the gradient sources are not implemented for " + model.info().family + " (two towers)");
    if (model.info().imageInput && !image_)
        throw UsageError(model.info().family + " models take an image: --image FILE.png|.jpg");
    if (hasTargetOptions())
        throw UsageError("--target-text, --target-ids and --max-new-tokens do not go with a gradient --source");
    GradientInput in;
    if (image_) {
        in.image = image_;
        return in;
    }
    in.text.ids = inputIds(args_, model);
    if (auto types = args_.value("type-ids")) in.text.typeIds = parseIntegers(*types, "--type-ids", "token type");
    if (auto attend = args_.value("attend")) in.text.attend = parseAttend(*attend);
    return in;
}

}  // namespace attnscope::cli
