// T5 against the independent double-precision reference in tests/support (reference_seq2seq.cpp).
#include "seq2seq_checks.h"

#include "attnscope/attention/trace.h"
#include "attnscope/lab/interventions.h"

namespace test_t5 {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// 30 source tokens: relative distances past max_distance 12, so the logarithmic buckets are used.
const std::vector<long long> kSource = {3,  17, 5,  39, 22, 5,  5,  11, 30, 1,  9,  14, 2,  8,  27,
                                        33, 6,  19, 21, 4,  12, 35, 7,  18, 25, 10, 31, 16, 13, 1};
const std::vector<long long> kTarget = {0, 12, 7, 33, 2, 9, 9, 21, 4, 15, 38, 6, 27, 19, 3, 11};

Checkpoint checkpoint(const T5Spec& spec, unsigned seed, const std::string& dtype = "F32") {
    return roundedTo(makeT5(spec, seed), dtype);
}

Seq2seqAgreement requireForced(const T5Spec& spec, unsigned seed, const std::string& name, const WriteOptions& o = {},
                               const Seq2seqRun& run = {}) {
    const Checkpoint c = checkpoint(spec, seed, o.dtype);
    auto model = writeAndLoad(c, name, o);
    auto trace = forced(*model, kSource, kTarget, run);
    const Seq2seqReference ref = referenceT5(c, spec, kSource, kTarget, run);
    CHECK(targetLogProbError(*trace, ref, kTarget) < 1e-4);
    return requireSeq2seq(*trace, ref, name);
}

}  // namespace

TEST_CASE("T5 1.0: relu feed-forward, tied head rescaled, bucketed position bias in all three blocks", "[t5]") {
    T5Spec spec;
    const auto a = requireForced(spec, 31, "t5-relu");
    WARN("t5 relu: encoder " << a.encoder << " decoder " << a.decoder << " cross " << a.cross);
    auto model = writeAndLoad(makeT5(spec, 31), "t5-info");
    const ModelInfo& info = model->info();
    CHECK(info.family == "t5");
    CHECK(info.encoderDecoder);
    CHECK(info.heads == 3);
    CHECK(info.headDim == 10);  // d_kv, not d_model / heads
    CHECK(info.layers == 3);
    CHECK(info.maxPositions == 0);
    auto trace = forced(*model, kSource, kTarget);
    REQUIRE(trace->blocks().size() == 3);
    CHECK(trace->blocks()[0].name == "encoder");
    CHECK_FALSE(trace->blocks()[0].causal);
    CHECK(trace->blocks()[1].name == "decoder");
    CHECK(trace->blocks()[1].causal);
    CHECK(trace->blocks()[1].layers == 3);
    CHECK(trace->blocks()[2].name == "cross");
    CHECK(trace->blocks()[2].queryTokens.size() == kTarget.size());
    CHECK(trace->blocks()[2].keyTokens.size() == kSource.size());
    CHECK(trace->outputIds().size() == kTarget.size());
}

TEST_CASE("T5 1.1 / Flan-T5: gated-gelu, untied lm_head, num_decoder_layers, embeddings stored as encoder.embed_tokens",
          "[t5]") {
    T5Spec spec;
    spec.gated = true;
    spec.tied = false;
    spec.embeddings = "encoder";
    spec.decoderLayers = 1;
    const auto a = requireForced(spec, 32, "t5-gated");
    WARN("t5 gated: encoder " << a.encoder << " decoder " << a.decoder << " cross " << a.cross);
    spec.writeDecoderLayers = false;  // num_decoder_layers absent: as many as num_layers
    spec.embeddings = "all";
    requireForced(spec, 33, "t5-default-decoder-layers");
}

TEST_CASE("T5: BF16 and F16 sharded checkpoints", "[t5]") {
    T5Spec spec;
    spec.embeddings = "all";
    const auto a = requireForced(spec, 34, "t5-bf16", WriteOptions{"BF16", 3});
    WARN("t5 bf16: encoder " << a.encoder << " decoder " << a.decoder << " cross " << a.cross);
    spec.gated = true;
    spec.tied = false;
    requireForced(spec, 35, "t5-f16", WriteOptions{"F16", 2});
}

TEST_CASE("T5: greedy decoding gives the reference's tokens, and its maps are the forced run's on those rows", "[t5]") {
    T5Spec spec;
    const Checkpoint c = checkpoint(spec, 36);
    auto model = writeAndLoad(c, "t5-greedy");
    auto reference = [&](const std::vector<long long>& rows) { return referenceT5(c, spec, kSource, rows); };
    for (int maxNew : {1, 5, 12}) {
        const auto want = referenceGreedy(reference, 0, 1, maxNew);
        auto trace = greedy(*model, kSource, maxNew);
        CHECK(std::vector<long long>(trace->outputIds().begin(), trace->outputIds().end()) == want);
        std::vector<long long> rows = {0};
        rows.insert(rows.end(), want.begin(), want.end() - 1);
        requireSeq2seq(*trace, reference(rows), "t5 greedy " + std::to_string(maxNew));
    }
    // The default limit is 32 new tokens.
    CHECK(model->forward(ids64(kSource))->outputIds().size() <= 32);
}

TEST_CASE("T5: temperature inside the model divides the logits with the position bias; masked heads in any block",
          "[t5]") {
    T5Spec spec;
    Seq2seqRun run;
    run.temperature = 1.8;
    run.temperatureLayers = {0};
    run.maskHeads = {{"encoder", 1, 2}, {"cross", 0, 1}, {"decoder", 2, 0}};
    requireForced(spec, 37, "t5-run", {}, run);
    Seq2seqRun all;
    all.temperature = 0.6;
    requireForced(spec, 37, "t5-run-all", {}, all);
}

TEST_CASE("T5: a linear map has no place for the position bias; the display temperature still applies", "[t5]") {
    T5Spec spec;
    const Checkpoint c = checkpoint(spec, 38);
    auto model = writeAndLoad(c, "t5-linear");
    auto trace = forced(*model, kSource, kTarget);
    MapOptions linear;
    linear.variant = MapVariant::Linear;
    CHECK_THROWS_WITH(trace->map(0, 0, 0, linear), Catch::Contains("has no place for a position bias"));
    CHECK_NOTHROW(trace->map(2, 0, 0, linear));  // cross-attention has no bias
    // Display temperature T on the model's own logits (position bias included) equals the
    // reference at T in the decoder's first layer, whose input the temperature cannot change.
    Seq2seqRun hot;
    hot.temperature = 2.5;
    const Seq2seqReference ref = referenceT5(c, spec, kSource, kTarget, hot);
    MapOptions display;
    display.temperature = 2.5;
    const HeadMap m = trace->map(1, 0, 2, display);
    double worst = 0;
    for (std::size_t i = 0; i < m.values.size(); ++i)
        worst = std::max(worst, std::abs(m.values[i] - ref.decoder[0][2][i]));
    CHECK(worst < 1e-5);
}

TEST_CASE("T5: bad configs and checkpoints name the file and the field", "[t5]") {
    T5Spec spec;
    auto errorWith = [&](const std::function<void(Checkpoint&)>& edit) {
        Checkpoint c = makeT5(spec, 39);
        edit(c);
        return writeAndLoadError(c, "t5-bad");
    };
    std::string e = errorWith([](Checkpoint& c) { c.config["feed_forward_proj"] = "double-gelu"; });
    CHECK_THAT(e, Catch::Contains("config.json") && Catch::Contains("feed_forward_proj"));
    e = errorWith([](Checkpoint& c) { c.config["feed_forward_proj"] = "gated-tanh"; });
    CHECK_THAT(e, Catch::Contains("feed_forward_proj") && Catch::Contains("tanh"));
    e = errorWith([](Checkpoint& c) { c.config["decoder_start_token_id"] = -1; });
    CHECK_THAT(e, Catch::Contains("decoder_start_token_id"));
    e = errorWith([](Checkpoint& c) {
        c.tensors.erase("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
    });
    CHECK_THAT(e, Catch::Contains("relative_attention_bias"));
    e = errorWith([](Checkpoint& c) { c.config["d_kv"] = 8; });
    CHECK_THAT(e, Catch::Contains("SelfAttention.q.weight"));
    e = errorWith([](Checkpoint& c) { c.tensors.erase("shared.weight"); });
    CHECK_THAT(e, Catch::Contains("shared.weight"));
    CHECK(e.find('\n') == std::string::npos);
}

TEST_CASE("T5: a target text is tokenized and shifted right after the decoder start token", "[t5]") {
    T5Spec spec;
    const auto dir = freshDir("t5-tokenizer");
    writeCheckpoint(dir, makeT5(spec, 40));
    writeWordTokenizer(dir, {"the", "cat", "sat", "dog"}, {}, {"</s>"});
    auto model = loadCpu(dir);
    CHECK(model->encodeText("the cat sat") == std::vector<std::int64_t>{3, 4, 5, 1});
    // labels [▁the, ▁dog, </s>] -> decoder input [0, ▁the, ▁dog]
    CHECK(model->encodeTarget("the dog") == std::vector<std::int64_t>{0, 3, 6});
    auto trace = forced(*model, {3, 4, 5, 1}, {0, 3, 6});
    CHECK(trace->blocks()[2].queryTokens == std::vector<std::string>{"<pad>", "·the", "·dog"});
    CHECK_THROWS_WITH(model->encodeTarget(""), Catch::Contains("empty"));
}

TEST_CASE("T5: masking heads reports the change of the forced target's log-probabilities", "[t5][lab]") {
    T5Spec spec;
    const Checkpoint c = checkpoint(spec, 41);
    auto model = writeAndLoad(c, "t5-lab");
    auto original = forced(*model, kSource, kTarget);
    CHECK(original->targetLogProbs().size() == kTarget.size() - 1);
    CHECK(greedy(*model, kSource, 4)->targetLogProbs().empty());
    RunOptions masked;
    masked.maskHeads = {HeadRef{"cross", 1, 0}, HeadRef{"decoder", 0, 2}};
    const Rerun r = rerun(*model, *original, masked);
    CHECK(r.change.kind == "sequence");
    Seq2seqRun run;
    run.maskHeads = {{"cross", 1, 0}, {"decoder", 0, 2}};
    const auto before = referenceTargetLogProbs(referenceT5(c, spec, kSource, kTarget), kTarget);
    const auto after = referenceTargetLogProbs(referenceT5(c, spec, kSource, kTarget, run), kTarget);
    REQUIRE(r.change.changedTargetLogProbs.size() == after.size());
    double mean = 0;
    for (std::size_t i = 0; i < after.size(); ++i) {
        CHECK(std::abs(r.change.originalTargetLogProbs[i] - before[i]) < 1e-4);
        CHECK(std::abs(r.change.changedTargetLogProbs[i] - after[i]) < 1e-4);
        mean += std::abs(after[i] - before[i]) / static_cast<double>(after.size());
    }
    CHECK(mean > 1e-3);  // the masked heads matter
    CHECK(std::abs(r.change.meanLogProbChange - mean) < 1e-4);
    CHECK(r.change.magnitude() == r.change.meanLogProbChange);
    // Pruning by output change ranks every head of the three blocks on these models too.
    const PruneResult p = pruneByImportance(*model, *original, Importance::OutputChange, 1, false);
    CHECK(p.ranking.size() == static_cast<std::size_t>((2 + 3 + 3) * 3));
}

}  // namespace test_t5
