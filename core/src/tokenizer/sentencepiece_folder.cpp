// SentencePiece folders, laid out as transformers' slow tokenizers lay them out:
//   T5Tokenizer        spiece.model; ids as SentencePiece's; "$A </s>" (no second </s> when the
//                      text ends with one); <extra_id_N> = size + extra_ids - 1 - N (lstrip, rstrip)
//   LlamaTokenizer     tokenizer.model; "<s> $A" per add_bos_token (true) / add_eos_token (false);
//                      with "legacy": false, the model without its dummy prefix, "▁" put before
//                      the text and pieces starting with a space encoded behind <unk>
//   GemmaTokenizer     tokenizer.model; the same with <bos> / <eos>
//   XLMRobertaTokenizer sentencepiece.bpe.model; fairseq ids: <s>=0 <pad>=1 </s>=2 <unk>=3, then
//                      SentencePiece's id + 1, <mask> last; "<s> $A </s>"
//   MBartTokenizer     the same ids, the 25 language codes after the pieces, then <mask>;
//                      "$A </s> src_lang" (tgt_lang on the target side)
//   MBart50Tokenizer   the same ids with the 52 language codes; "src_lang $A </s>"
//   MarianTokenizer    source.spm / target.spm, ids from vocab.json (which must cover every
//                      piece but control ones; target_vocab.json on the target side when
//                      separate_vocabs is set); ">>xx<<" language tokens; "$A </s>"
//   AlbertTokenizer    spiece.model; ids as SentencePiece's; preprocess_text (remove_space,
//                      keep_accents, do_lower_case: sentencepiece_text.h) and the digit-comma
//                      split; "[CLS] $A [SEP]", [MASK] with lstrip
//   XLNetTokenizer     the same preparation (do_lower_case false by default); "$A <sep> <cls>"
//   DebertaV2Tokenizer spm.model; ids as SentencePiece's, [MASK] after the pieces unless the
//                      model has it; do_lower_case, split_by_punct; "[CLS] $A [SEP]"
//   SiglipTokenizer    spiece.model; non-legacy Llama's model and "▁" prefix, the text lowercased
//                      (do_lower_case, true), then canonicalize_text: ASCII punctuation removed,
//                      whitespace runs made one space, stripped; "$A </s>" (not twice), </s>,
//                      <unk> and the pad token with lstrip and rstrip
// The family is tokenizer_config.json's tokenizer_class (another class is refused rather than
// read with the wrong layout), else config.json's model_type where it names one of these, else
// the file's name (with model_type telling mBART's sentencepiece.bpe.model from XLM-R's). tokenizer_config.json's
// added_tokens_decoder, when present, gives the added tokens' flags and ids as saved.
#include "sentencepiece_folder.h"

#include "folder_config.h"
#include "sentencepiece_model.h"
#include "sentencepiece_text.h"
#include "tokenizer_impl.h"
#include "vocabulary.h"

#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "runtime/text.h"

#include <algorithm>
#include <map>

namespace attnscope::tok {

namespace {

namespace fs = std::filesystem;

enum class Family { T5, Llama, Gemma, XlmR, MBart, MBart50, Marian, Albert, XLNet, DebertaV2, Siglip };

bool present(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

// transformers' FAIRSEQ_LANGUAGE_CODES (tokenization_mbart.py), in id order.
const char* const kMBartCodes[] = {"ar_AR", "cs_CZ", "de_DE", "en_XX", "es_XX", "et_EE", "fi_FI", "fr_XX", "gu_IN",
                                   "hi_IN", "it_IT", "ja_XX", "kk_KZ", "ko_KR", "lt_LT", "lv_LV", "my_MM", "ne_NP",
                                   "nl_XX", "ro_RO", "ru_RU", "si_LK", "tr_TR", "vi_VN", "zh_CN"};
// mBART-50's 27 more (tokenization_mbart50.py), after the 25 above.
const char* const kMBart50More[] = {"af_ZA", "az_AZ", "bn_IN", "fa_IR", "he_IL", "hr_HR", "id_ID", "ka_GE", "km_KH",
                                    "mk_MK", "ml_IN", "mn_MN", "mr_IN", "pl_PL", "ps_AF", "pt_XX", "sv_SE", "sw_KE",
                                    "ta_IN", "te_IN", "th_TH", "tl_XX", "uk_UA", "ur_PK", "xh_ZA", "gl_ES", "sl_SI"};

std::optional<Family> familyOf(const fs::path& folder, const nlohmann::json& config, const fs::path& file) {
    const std::string cls = config.value("tokenizer_class", std::string());
    if (startsWith(cls, "T5") || startsWith(cls, "MT5")) return Family::T5;
    if (startsWith(cls, "Llama") || startsWith(cls, "CodeLlama")) return Family::Llama;
    if (startsWith(cls, "Gemma")) return Family::Gemma;
    if (startsWith(cls, "XLMRoberta")) return Family::XlmR;
    if (startsWith(cls, "MBart50")) return Family::MBart50;
    if (startsWith(cls, "MBart")) return Family::MBart;
    if (startsWith(cls, "Marian")) return Family::Marian;
    if (startsWith(cls, "Albert")) return Family::Albert;
    if (startsWith(cls, "XLNet")) return Family::XLNet;
    if (startsWith(cls, "DebertaV2")) return Family::DebertaV2;
    if (startsWith(cls, "Siglip")) return Family::Siglip;
    // Another class (Pegasus, CamemBERT, ...) lays the same files out its own way.
    if (!cls.empty()) return std::nullopt;
    std::string type;
    if (present(folder / "config.json"))
        type = readJsonObject(folder / "config.json").value("model_type", std::string());
    if (type == "albert") return Family::Albert;
    if (type == "xlnet") return Family::XLNet;
    if (type == "deberta-v2") return Family::DebertaV2;
    if (type == "siglip") return Family::Siglip;
    if (type == "pegasus" || type == "camembert") return std::nullopt;
    const std::string name = file.filename().string();
    if (name == "source.spm" || name == "target.spm") return Family::Marian;
    if (name == "spiece.model") return Family::T5;
    if (name == "tokenizer.model") return Family::Llama;
    if (name == "spm.model") return Family::DebertaV2;
    if (type == "mbart") return Family::MBart;
    return Family::XlmR;
}

AddedToken special(const std::string& content, std::int64_t id, bool lstrip = false, bool rstrip = false) {
    AddedToken t;
    t.content = content;
    t.id = id;
    t.special = true;
    t.normalized = false;
    t.lstrip = lstrip;
    t.rstrip = rstrip;
    return t;
}

// Non-legacy Llama's text preparation: "▁" becomes a space and the text starts with "▁".
class LlamaPrefixNormalizer final : public Normalizer {
public:
    void normalize(NormalizedString& s) const override {
        s.replace(literalPattern("\xE2\x96\x81"), " ");
        if (s.shift() == 0) s.prepend("\xE2\x96\x81");
    }
};

// Adds prefix and suffix tokens; T5 adds no </s> after a text that already ends with it.
// dropLoneMark: non-legacy Llama drops a first "▁" that a special token follows.
class AffixPost final : public PostProcessor {
public:
    AffixPost(std::vector<Token> prefix, std::vector<Token> suffix, bool skipRepeatedEnd,
              std::vector<std::int64_t> dropLoneMarkBefore)
        : prefix_(std::move(prefix)), suffix_(std::move(suffix)), skipRepeatedEnd_(skipRepeatedEnd),
          specials_(std::move(dropLoneMarkBefore)) {}

    void process(Encoded& e, bool addSpecialTokens) const override {
        if (e.tokens.size() > 1 && e.tokens[0].value == "\xE2\x96\x81" &&
            std::find(specials_.begin(), specials_.end(), e.tokens[1].id) != specials_.end()) {
            e.tokens.erase(e.tokens.begin());
            e.special.erase(e.special.begin());
        }
        if (!addSpecialTokens) return;
        if (!(skipRepeatedEnd_ && suffix_.size() == 1 && !e.tokens.empty() && e.tokens.back().id == suffix_[0].id)) {
            e.tokens.insert(e.tokens.end(), suffix_.begin(), suffix_.end());
            e.special.insert(e.special.end(), suffix_.size(), true);
        }
        e.tokens.insert(e.tokens.begin(), prefix_.begin(), prefix_.end());
        e.special.insert(e.special.begin(), prefix_.size(), true);
    }

private:
    std::vector<Token> prefix_, suffix_;
    bool skipRepeatedEnd_;
    std::vector<std::int64_t> specials_;
};

// SiglipTokenizer's text preparation: the lowercase (do_lower_case), non-legacy Llama's "▁" prefix,
// then canonicalize_text on what follows it: string.punctuation removed, \s+ made " ", stripped.
class SiglipNormalizer final : public Normalizer {
public:
    SiglipNormalizer(bool lowercase, const std::string& origin) {
        if (lowercase) steps_.push_back(makeNormalizer({{"type", "Lowercase"}}, Origin{origin}));
        steps_.push_back(std::make_unique<LlamaPrefixNormalizer>());
        steps_.push_back(makeNormalizer(
                {{"type", "Replace"}, {"pattern", {{"Regex", "[!-/:-@\\[-`{-~]"}}}, {"content", ""}}, Origin{origin}));
        steps_.push_back(makeNormalizer({{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}},
                                        Origin{origin}));
        steps_.push_back(
                makeNormalizer({{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}, Origin{origin}));
    }
    void normalize(NormalizedString& s) const override {
        for (const auto& step : steps_) step->normalize(s);
    }

private:
    std::vector<std::unique_ptr<Normalizer>> steps_;
};

struct Layout {
    SpmIds ids;
    std::map<std::int64_t, AddedToken> added;  // by id
    std::vector<std::string> prefix, suffix;   // token contents
    bool skipRepeatedEnd = false;
    std::string unkPrefix;                   // non-legacy Llama (makeSentencePieceModel)
    bool digitComma = false;                 // ALBERT, XLNet (makeSentencePieceModel)
    std::unique_ptr<Normalizer> normalizer;  // the family's text preparation
    bool siglip = false, lowercase = false;  // with unkPrefix: SiglipNormalizer instead of the Llama prefix
    std::unique_ptr<PreTokenizer> preTokenizer;
};

}  // namespace

fs::path sentencePieceFile(const fs::path& folder, TokenizerSide side) {
    if (present(folder / "source.spm")) {
        const fs::path target = folder / "target.spm";
        return side == TokenizerSide::Target && present(target) ? target : folder / "source.spm";
    }
    for (const char* name : {"spiece.model", "tokenizer.model", "sentencepiece.bpe.model", "spm.model"})
        if (present(folder / name)) return folder / name;
    return {};
}

std::unique_ptr<Tokenizer::Impl> sentencePieceFromFolder(const fs::path& folder, TokenizerSide side) {
    const fs::path path = sentencePieceFile(folder, side);
    if (path.empty()) return nullptr;
    return sentencePieceFromFile(folder, path, side);
}

std::unique_ptr<Tokenizer::Impl> sentencePieceFromFile(const fs::path& folder, const fs::path& path,
                                                       TokenizerSide side) {
    const nlohmann::json config = readSpecialTokenConfig(folder);
    const std::string configFile = (folder / "tokenizer_config.json").string();
    const auto family = familyOf(folder, config, path);
    if (!family)
        throw Error(
                configFile + ": tokenizer_class '" + config.value("tokenizer_class", std::string()) +
                "' is not read from a SentencePiece file yet (T5, Llama, Gemma, XLMRoberta, MBart, MBart50, Marian, "
                "Albert, XLNet, DebertaV2, Siglip are)");
    auto file = std::make_shared<const SentencePieceFile>(path);
    const auto size = static_cast<std::int64_t>(file->size());
    auto token = [&](const char* key, const char* fallback) {
        const std::string t = configToken(config, folder, key);
        return t.empty() && !config.contains(key) ? std::string(fallback) : t;
    };
    Layout layout;
    auto pieceId = [&](const std::string& piece) -> std::optional<std::int64_t> {
        const auto id = file->find(piece);
        return id ? std::optional<std::int64_t>(*id) : std::nullopt;
    };
    // A special token the model's own vocabulary holds (nothing when it lacks it, as the slow
    // tokenizers then map it to <unk> and never split it out).
    auto addPiece = [&](const std::string& content,
                        const std::function<std::optional<std::int64_t>(const std::string&)>& id, bool lstrip = false) {
        if (content.empty()) return;
        if (const auto i = id(content)) layout.added[*i] = special(content, *i, lstrip);
    };
    switch (*family) {
        case Family::T5: {
            layout.ids = [](int id, const std::string&) { return std::optional<std::int64_t>(id); };
            for (const char* key : {"eos_token", "unk_token", "pad_token"})
                addPiece(token(key, key[0] == 'e' ? "</s>" : key[0] == 'u' ? "<unk>" : "<pad>"), pieceId);
            std::int64_t extra = 100;
            if (config.contains("extra_ids")) {
                if (!config["extra_ids"].is_number_integer() || config["extra_ids"].get<std::int64_t>() < 0 ||
                    config["extra_ids"].get<std::int64_t>() > 100000)
                    throw Error(configFile + ": 'extra_ids' must be an integer in [0, 100000]");
                extra = config["extra_ids"].get<std::int64_t>();
            }
            for (std::int64_t i = 0; i < extra; ++i)
                layout.added[size + extra - 1 - i] =
                        special("<extra_id_" + std::to_string(i) + ">", size + extra - 1 - i, true, true);
            layout.suffix = {token("eos_token", "</s>")};
            layout.skipRepeatedEnd = true;
            break;
        }
        case Family::Llama:
        case Family::Gemma: {
            const bool gemma = *family == Family::Gemma;
            layout.ids = [](int id, const std::string&) { return std::optional<std::int64_t>(id); };
            const std::string bos = token("bos_token", gemma ? "<bos>" : "<s>"),
                              eos = token("eos_token", gemma ? "<eos>" : "</s>");
            for (const std::string& t :
                 {bos, eos, token("unk_token", "<unk>"), token("pad_token", gemma ? "<pad>" : "")})
                addPiece(t, pieceId);
            auto require = [&](const std::string& t, const char* flag) {
                if (t.empty() || !pieceId(t))
                    throw Error(configFile + ": " + flag + " is set but the token '" + t + "' is not in " +
                                path.string());
                return t;
            };
            if (configBool(config, folder, "add_bos_token", true)) layout.prefix = {require(bos, "add_bos_token")};
            if (configBool(config, folder, "add_eos_token", false)) layout.suffix = {require(eos, "add_eos_token")};
            // transformers treats a missing or null "legacy" as true.
            if (!gemma && !configBool(config, folder, "legacy", true)) {
                layout.unkPrefix = token("unk_token", "<unk>");
                if (layout.unkPrefix.empty()) throw Error(configFile + ": 'legacy' is false but there is no unk_token");
                if (!configBool(config, folder, "add_prefix_space", true))
                    throw Error(configFile + ": 'add_prefix_space' false with 'legacy' false is not read yet");
            }
            break;
        }
        case Family::XlmR:
        case Family::MBart:
        case Family::MBart50: {
            // fairseq's dictionary: its four specials first, every other piece one id later.
            static const std::map<std::string, std::int64_t> fairseq = {
                    {"<s>", 0}, {"<pad>", 1}, {"</s>", 2}, {"<unk>", 3}};
            layout.ids = [](int id, const std::string& piece) {
                const auto it = fairseq.find(piece);
                return std::optional<std::int64_t>(it != fairseq.end() ? it->second : id + 1);
            };
            for (const auto& [t, id] : fairseq) layout.added[id] = special(t, id);
            std::int64_t next = size + 1;
            std::string lang;
            if (*family != Family::XlmR) {
                std::vector<std::string> codes(std::begin(kMBartCodes), std::end(kMBartCodes));
                if (*family == Family::MBart50)
                    codes.insert(codes.end(), std::begin(kMBart50More), std::end(kMBart50More));
                for (const auto& code : codes) {
                    layout.added[next] = special(code, next);
                    ++next;
                }
                lang = side == TokenizerSide::Target && config.contains("tgt_lang") && config["tgt_lang"].is_string()
                               ? config["tgt_lang"].get<std::string>()
                       : config.contains("src_lang") && config["src_lang"].is_string()
                               ? config["src_lang"].get<std::string>()
                               : std::string("en_XX");
                if (std::find(codes.begin(), codes.end(), lang) == codes.end())
                    throw Error(configFile + ": language code '" + lang + "' is not one of " +
                                (*family == Family::MBart50 ? "mBART-50's 52" : "mBART's 25") + " (e.g. en_XX)");
            }
            layout.added[next] = special(token("mask_token", "<mask>"), next, true);
            if (*family == Family::XlmR) {
                layout.prefix = {"<s>"};
                layout.suffix = {"</s>"};
            } else if (*family == Family::MBart50) {
                layout.prefix = {lang};  // MBart50Tokenizer: the language code first
                layout.suffix = {"</s>"};
            } else {
                layout.suffix = {"</s>", lang};
            }
            break;
        }
        case Family::Albert:
        case Family::XLNet: {
            const bool albert = *family == Family::Albert;
            layout.ids = [](int id, const std::string&) { return std::optional<std::int64_t>(id); };
            const std::vector<std::pair<const char*, const char*>> specials =
                    albert ? std::vector<std::pair<const char*, const char*>>{{"cls_token", "[CLS]"},
                                                                              {"sep_token", "[SEP]"},
                                                                              {"unk_token", "<unk>"},
                                                                              {"pad_token", "<pad>"}}
                           : std::vector<std::pair<const char*, const char*>>{
                                     {"bos_token", "<s>"},   {"eos_token", "</s>"},  {"unk_token", "<unk>"},
                                     {"sep_token", "<sep>"}, {"pad_token", "<pad>"}, {"cls_token", "<cls>"}};
            for (const auto& [key, fallback] : specials) addPiece(token(key, fallback), pieceId);
            if (!albert)
                for (const char* t : {"<eop>", "<eod>"}) addPiece(t, pieceId);  // XLNet's additional_special_tokens
            addPiece(token("mask_token", albert ? "[MASK]" : "<mask>"), pieceId, true);
            const std::string cls = token("cls_token", albert ? "[CLS]" : "<cls>"),
                              sep = token("sep_token", albert ? "[SEP]" : "<sep>");
            if (albert) {
                layout.prefix = {cls};
                layout.suffix = {sep};
            } else {
                layout.suffix = {sep, cls};
            }
            layout.normalizer = makeAlbertNormalizer(configBool(config, folder, "remove_space", true),
                                                     configBool(config, folder, "keep_accents", false),
                                                     configBool(config, folder, "do_lower_case", albert));
            layout.digitComma = true;
            break;
        }
        case Family::DebertaV2: {
            layout.ids = [](int id, const std::string&) { return std::optional<std::int64_t>(id); };
            const std::vector<std::pair<const char*, const char*>> specials = {
                    {"cls_token", "[CLS]"}, {"sep_token", "[SEP]"}, {"unk_token", "[UNK]"}, {"pad_token", "[PAD]"}};
            for (const auto& [key, fallback] : specials) addPiece(token(key, fallback), pieceId);
            // A special token the model lacks is added after its pieces, as the slow tokenizer does.
            const std::string mask = token("mask_token", "[MASK]");
            if (!mask.empty()) {
                const auto id = pieceId(mask);
                layout.added[id ? *id : size] = special(mask, id ? *id : size);
            }
            layout.prefix = {token("cls_token", "[CLS]")};
            layout.suffix = {token("sep_token", "[SEP]")};
            if (configBool(config, folder, "do_lower_case", false))
                layout.normalizer = makeNormalizer({{"type", "Lowercase"}}, Origin{configFile});
            if (configBool(config, folder, "split_by_punct", false))
                layout.preTokenizer =
                        makePreTokenizer({{"type", "Punctuation"}, {"behavior", "Isolated"}}, Origin{configFile});
            break;
        }
        case Family::Siglip: {
            layout.ids = [](int id, const std::string&) { return std::optional<std::int64_t>(id); };
            for (const auto& [key, fallback] : {std::pair<const char*, const char*>{"eos_token", "</s>"},
                                                {"unk_token", "<unk>"},
                                                {"pad_token", "</s>"}}) {
                const std::string t = token(key, fallback);
                if (const auto id = t.empty() ? std::nullopt : pieceId(t))
                    layout.added[*id] = special(t, *id, true, true);
            }
            layout.suffix = {token("eos_token", "</s>")};
            layout.skipRepeatedEnd = true;
            layout.unkPrefix = token("unk_token", "<unk>");
            if (layout.unkPrefix.empty()) throw Error(configFile + ": SiglipTokenizer needs an unk_token");
            layout.siglip = true;
            layout.lowercase = configBool(config, folder, "do_lower_case", true);
            break;
        }
        case Family::Marian: {
            // separate_vocabs: the target side's ids are target_vocab.json's (MarianTokenizer's
            // _switch_to_target_mode); otherwise both sides share vocab.json.
            const bool separate = configBool(config, folder, "separate_vocabs", false);
            const fs::path vocabFile =
                    folder / (side == TokenizerSide::Target && separate ? "target_vocab.json" : "vocab.json");
            if (!present(vocabFile))
                throw Error(vocabFile.string() + ": missing (Marian's ids for " + path.filename().string() +
                            (separate ? ", as tokenizer_config.json sets separate_vocabs)" : ")"));
            std::error_code sizeError;
            const auto bytes = std::filesystem::file_size(vocabFile, sizeError);
            auto vocab = std::make_shared<const Vocabulary>(Vocabulary::fromJsonObject(
                    readVocabJson(vocabFile), vocabFile.string(), tokenIdLimit(sizeError ? 0 : bytes)));
            std::size_t missing = 0;
            std::string first;
            for (int i = 0; i < file->size(); ++i) {
                if (file->isControl(i) || file->isUnused(i) || vocab->find(file->piece(i))) continue;
                if (missing++ == 0) first = file->piece(i);
            }
            if (missing > 0)
                throw Error(vocabFile.string() + ": lacks " + std::to_string(missing) + " of the " +
                            std::to_string(file->size()) + " pieces of " + path.filename().string() + " (first: '" +
                            first + "')");
            layout.ids = [vocab](int, const std::string& piece) {
                const auto* id = vocab->find(piece);
                return id ? std::optional<std::int64_t>(*id) : std::nullopt;
            };
            auto vocabId = [&](const std::string& t) {
                const auto* id = vocab->find(t);
                return id ? std::optional<std::int64_t>(*id) : std::nullopt;
            };
            const std::string eos = token("eos_token", "</s>");
            for (const std::string& t : {eos, token("unk_token", "<unk>"), token("pad_token", "<pad>")})
                addPiece(t, vocabId);
            for (std::int64_t id = 0; id <= vocab->maxId(); ++id) {
                const std::string* t = vocab->token(id);
                if (t && t->size() > 4 && startsWith(*t, ">>") && t->compare(t->size() - 2, 2, "<<") == 0) {
                    AddedToken code = special(*t, id);
                    code.special = false;  // transformers keeps language codes out of the special tokens
                    layout.added[id] = code;
                }
            }
            if (!vocabId(eos))
                throw Error(vocabFile.string() + ": has no '" + eos + "' (the end token Marian appends)");
            layout.suffix = {eos};
            break;
        }
    }
    // Flags and ids as tokenizer_config.json saved them.
    if (config.contains("added_tokens_decoder") && config["added_tokens_decoder"].is_object()) {
        for (auto it = config["added_tokens_decoder"].begin(); it != config["added_tokens_decoder"].end(); ++it) {
            const Fields f{it.value(), configFile + ": added_tokens_decoder '" + it.key() + "'"};
            std::int64_t id = -1;
            try {
                id = std::stoll(it.key());
            } catch (const std::exception&) {
            }
            if (id < 0 || id > Vocabulary::kMaxId || !it.value().is_object())
                f.fail("must be an id with a token object");
            AddedToken t = special(f.string("content"), id);
            t.special = f.boolean("special", false);
            t.lstrip = f.boolean("lstrip", false);
            t.rstrip = f.boolean("rstrip", false);
            t.singleWord = f.boolean("single_word", false);
            t.normalized = false;  // the slow tokenizers match added tokens in the raw text
            layout.added[id] = t;
        }
    }

    auto impl = std::make_unique<Tokenizer::Impl>();
    impl->origin = path.string();
    if (layout.unkPrefix.empty()) {
        impl->model = makeSentencePieceModel(file, layout.ids, {}, layout.digitComma);
        impl->normalizer = std::move(layout.normalizer);
        impl->preTokenizer = std::move(layout.preTokenizer);
    } else {
        impl->model = makeSentencePieceModel(std::make_shared<const SentencePieceFile>(path, false), layout.ids,
                                             layout.unkPrefix);
        if (layout.siglip)
            impl->normalizer = std::make_unique<SiglipNormalizer>(layout.lowercase, configFile);
        else
            impl->normalizer = std::make_unique<LlamaPrefixNormalizer>();
    }
    std::vector<std::int64_t> specialIds;  // for non-legacy Llama's lone "▁"
    if (!layout.unkPrefix.empty())
        for (const auto& [id, t] : layout.added)
            if (t.special) specialIds.push_back(id);
    std::vector<AddedToken> added;
    for (auto& [id, t] : layout.added) added.push_back(std::move(t));
    impl->added = AddedVocabulary(std::move(added), nullptr);
    auto affix = [&](const std::vector<std::string>& contents) {
        std::vector<Token> out;
        for (const auto& c : contents) {
            const auto* a = impl->added.byContent(c);
            const auto id = a ? std::optional<std::int64_t>(a->id) : impl->model->tokenToId(c);
            if (!id) throw Error(path.string() + ": the special token '" + c + "' has no id");
            out.push_back({*id, c, 0, 0});
        }
        return out;
    };
    impl->postProcessor =
            std::make_unique<AffixPost>(affix(layout.prefix), affix(layout.suffix), layout.skipRepeatedEnd, specialIds);
    impl->decoder = makeSentencePieceDecoder(file);
    impl->style = TokenStyle::Metaspace;
    return impl;
}

}  // namespace attnscope::tok
