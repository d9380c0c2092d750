// BART, mBART and Marian against the independent double-precision reference in tests/support
// (reference_seq2seq.cpp).
#include "seq2seq_checks.h"

#include "attnscope/attention/trace.h"

namespace test_bart_mbart_marian {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kSource = {0, 17, 5, 39, 22, 5, 5, 11, 30, 8, 9, 14, 2};
const std::vector<long long> kTarget = {2, 0, 12, 7, 33, 3, 9, 9, 21, 4, 15};

Seq2seqAgreement requireForced(const BartSpec& spec, unsigned seed, const std::string& name, const WriteOptions& o = {},
                               const Seq2seqRun& run = {}) {
    const Checkpoint c = roundedTo(makeBart(spec, seed), o.dtype);
    auto model = writeAndLoad(c, name, o);
    auto trace = forced(*model, kSource, kTarget, run);
    const Seq2seqReference ref = referenceBart(c, spec, kSource, kTarget, run);
    CHECK(targetLogProbError(*trace, ref, kTarget) < 1e-4);
    const auto a = requireSeq2seq(*trace, ref, name);
    WARN(name << ": encoder " << a.encoder << " decoder " << a.decoder << " cross " << a.cross);
    return a;
}

void requireGreedy(const BartSpec& spec, unsigned seed, const std::string& name, int maxNew) {
    const Checkpoint c = makeBart(spec, seed);
    auto model = writeAndLoad(c, name);
    auto reference = [&](const std::vector<long long>& rows) { return referenceBart(c, spec, kSource, rows); };
    const auto want = referenceGreedy(reference, spec.decoderStart, spec.eos, maxNew);
    auto trace = greedy(*model, kSource, maxNew);
    CHECK(std::vector<long long>(trace->outputIds().begin(), trace->outputIds().end()) == want);
    std::vector<long long> rows = {spec.decoderStart};
    rows.insert(rows.end(), want.begin(), want.end() - 1);
    requireSeq2seq(*trace, reference(rows), name);
}

std::string errorWith(const BartSpec& spec, const std::function<void(Checkpoint&)>& edit) {
    Checkpoint c = makeBart(spec, 49);
    edit(c);
    return writeAndLoadError(c, "bart-bad");
}

}  // namespace

TEST_CASE("BART: post-LN, learned positions offset by 2, layernorm_embedding, final_logits_bias", "[bart]") {
    BartSpec spec;
    requireForced(spec, 41, "bart-base");
    auto model = writeAndLoad(makeBart(spec, 41), "bart-info");
    const ModelInfo& info = model->info();
    CHECK(info.family == "bart");
    CHECK(info.encoderDecoder);
    CHECK(info.maxPositions == 20);  // the table has 22 rows
    CHECK(info.heads == 3);
    auto trace = forced(*model, kSource, kTarget);
    CHECK(trace->blocks()[1].heads == 2);  // decoder_attention_heads
    CHECK(trace->blocks()[2].heads == 2);
}

TEST_CASE("BART: no prefix, untied head, scale_embedding, relu, every tied copy stored", "[bart]") {
    BartSpec spec;
    spec.prefix = false;
    spec.tied = false;
    spec.scaleEmbedding = true;
    spec.activation = "relu";
    spec.embeddings = "all";
    spec.logitsBias = false;
    requireForced(spec, 42, "bart-variants");
    spec.tied = true;
    spec.embeddings = "encoder";
    requireForced(spec, 43, "bart-encoder-embed");
}

TEST_CASE("BART: F16 and BF16 sharded checkpoints", "[bart]") {
    BartSpec spec;
    requireForced(spec, 44, "bart-f16", WriteOptions{"F16", 3});
    spec.type = "mbart";
    requireForced(spec, 45, "mbart-bf16", WriteOptions{"BF16", 2});
    spec.type = "marian";
    requireForced(spec, 46, "marian-f16", WriteOptions{"F16", 2});
}

TEST_CASE("mBART: pre-LN with final encoder and decoder layer norms, scaled embeddings", "[bart][mbart]") {
    BartSpec spec;
    spec.type = "mbart";
    spec.scaleEmbedding = true;
    requireForced(spec, 47, "mbart");
    spec.decoderStart = 25;  // a language code starts the decoder (mbart-large-en-ro's ro_RO)
    requireGreedy(spec, 47, "mbart-greedy", 8);
    auto model = writeAndLoad(makeBart(spec, 47), "mbart-info");
    CHECK(model->info().family == "mbart");
    CHECK(model->info().notes.at(0) == "pre-LN blocks");
}

TEST_CASE("Marian: static sinusoidal positions, √d scale, swish, shared or separate decoder vocabulary",
          "[bart][marian]") {
    BartSpec spec;
    spec.type = "marian";
    spec.scaleEmbedding = true;
    spec.activation = "swish";
    spec.decoderStart = 39;  // pad, as Marian's configs start the decoder
    spec.eos = 0;
    requireForced(spec, 48, "marian");
    requireGreedy(spec, 48, "marian-greedy", 10);
    spec.decoderVocab = 36;  // share_encoder_decoder_embeddings false
    spec.decoderStart = 35;
    requireForced(spec, 50, "marian-separate");
    requireGreedy(spec, 50, "marian-separate-greedy", 6);
    spec.dModel = 21;  // odd width: ceil(21/2) sine columns
    spec.encoderHeads = 3;
    spec.decoderHeads = 7;
    requireForced(spec, 51, "marian-odd");
}

TEST_CASE("BART family: greedy decoding, temperature inside and masked heads against the reference", "[bart]") {
    BartSpec spec;
    requireGreedy(spec, 52, "bart-greedy", 9);
    Seq2seqRun run;
    run.temperature = 1.6;
    run.temperatureLayers = {1};
    run.maskHeads = {{"encoder", 0, 1}, {"decoder", 1, 1}, {"cross", 0, 0}};
    requireForced(spec, 53, "bart-run", {}, run);
    spec.type = "mbart";
    requireForced(spec, 54, "mbart-run", {}, run);
}

TEST_CASE("BART family: a target longer than the decoder's positions and ids outside the vocabularies are refused",
          "[bart]") {
    BartSpec spec;
    auto model = writeAndLoad(makeBart(spec, 55), "bart-limits");
    std::vector<long long> longTarget(21, 5);
    CHECK_THROWS_WITH(forced(*model, kSource, longTarget),
                      Catch::Contains("target has 21 tokens") && Catch::Contains("20 positions"));
    CHECK_THROWS_WITH(forced(*model, kSource, {2, 40}), Catch::Contains("target id 40"));
    CHECK_THROWS_WITH(forced(*model, std::vector<long long>(21, 3), kTarget), Catch::Contains("20 positions"));
    // Greedy decoding stops at the decoder's positions.
    CHECK(greedy(*model, kSource, 100)->outputIds().size() <= 20);
    TextInput typed;
    typed.ids = ids64(kSource);
    typed.typeIds = std::vector<std::int64_t>(kSource.size(), 1);
    CHECK_THROWS_WITH(model->forwardText(typed), Catch::Contains("no token types"));
}

TEST_CASE("BART family: bad configs name the file and the field", "[bart]") {
    BartSpec spec;
    std::string e = errorWith(spec, [](Checkpoint& c) { c.config["encoder_attention_heads"] = 5; });
    CHECK_THAT(e, Catch::Contains("config.json") && Catch::Contains("encoder_attention_heads") &&
                          Catch::Contains("d_model"));
    e = errorWith(spec, [](Checkpoint& c) { c.config["activation_function"] = "mish"; });
    CHECK_THAT(e, Catch::Contains("activation_function") && Catch::Contains("mish"));
    e = errorWith(spec, [](Checkpoint& c) { c.config["eos_token_id"] = "two"; });
    CHECK_THAT(e, Catch::Contains("eos_token_id"));
    e = errorWith(spec, [](Checkpoint& c) { c.tensors.erase("model.decoder.layers.1.encoder_attn.k_proj.bias"); });
    CHECK_THAT(e, Catch::Contains("decoder.layers.1.encoder_attn.k_proj.bias"));
    e = errorWith(spec, [](Checkpoint& c) { c.config["max_position_embeddings"] = 30; });
    CHECK_THAT(e, Catch::Contains("embed_positions.weight"));
    BartSpec marian;
    marian.type = "marian";
    e = errorWith(marian, [](Checkpoint& c) { c.config["decoder_vocab_size"] = 30; });
    CHECK_THAT(e, Catch::Contains("decoder_vocab_size") && Catch::Contains("share_encoder_decoder_embeddings"));
    CHECK(e.find('\n') == std::string::npos);
}

TEST_CASE("mBART: the target's last label (the language code) starts the decoder, as its shift_tokens_right does",
          "[mbart]") {
    BartSpec spec;
    spec.type = "mbart";
    const auto dir = freshDir("mbart-tokenizer");
    writeCheckpoint(dir, makeBart(spec, 56));
    writeWordTokenizer(dir, {"the", "cat", "sat"}, {"ro_RO"}, {"</s>", "ro_RO"});
    auto model = loadCpu(dir);
    // labels [▁the, ▁cat, </s>, ro_RO] -> [ro_RO, ▁the, ▁cat, </s>]
    CHECK(model->encodeTarget("the cat") == std::vector<std::int64_t>{6, 3, 4, 1});
    BartSpec marian;
    marian.type = "marian";
    const auto mdir = freshDir("marian-tokenizer");
    writeCheckpoint(mdir, makeBart(marian, 57));
    writeWordTokenizer(mdir, {"the", "cat"}, {}, {"</s>"});
    // Marian shifts like BART: decoder_start_token_id first.
    CHECK(loadCpu(mdir)->encodeTarget("cat the") == std::vector<std::int64_t>{2, 4, 3});
}

}  // namespace test_bart_mbart_marian
