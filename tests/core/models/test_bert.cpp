// BERT, RoBERTa and DistilBERT against the independent reference in tests/support.
#include "attnscope/runtime/error.h"
#include "family_checks.h"

namespace test_bert {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {2, 17, 0, 49, 22, 5, 5, 11, 30};

double bertDiff(const BertSpec& spec, unsigned seed, const std::string& name, const std::vector<long long>& ids,
                const std::vector<long long>& types = {}, const std::vector<int>& attend = {},
                const WriteOptions& o = {}) {
    Checkpoint c = makeBert(spec, seed);
    roundTensors(c, o.dtype);
    auto model = writeAndLoad(c, name, o);
    TextInput in{ids64(ids), ids64(types), {}};
    for (int a : attend) in.attend.push_back(static_cast<std::uint8_t>(a));
    auto trace = model->forwardText(in);
    CHECK(trace->nextTokenLogits().empty());
    const double diff = maxMapDiff(*trace, referenceBert(c, spec, ids, types, attend));
    INFO(name << ": max |map - reference| " << diff);
    CHECK(diff < 2e-6);
    return diff;
}

std::string loadError(const Checkpoint& c) { return writeAndLoadError(c, "bert-bad"); }

}  // namespace

TEST_CASE("BERT: maps with token types and padding equal an independent computation", "[bert]") {
    BertSpec spec;
    bertDiff(spec, 3, "bert-plain", kIds);
    bertDiff(spec, 3, "bert-types", kIds, {0, 0, 0, 0, 1, 1, 1, 1, 1});
    bertDiff(spec, 3, "bert-padding", kIds, {0, 0, 0, 0, 1, 1, 1, 0, 0}, {1, 1, 1, 1, 1, 1, 1, 0, 0});

    auto model = writeAndLoad(makeBert(spec, 3), "bert-info");
    CHECK(model->info().family == "bert");
    CHECK(model->info().maxPositions == 40);
    TextInput in{ids64(kIds), {}, {1, 1, 1, 1, 1, 1, 1, 0, 0}};
    auto trace = model->forwardText(in);
    const BlockInfo& b = trace->blocks()[0];
    CHECK_FALSE(b.causal);
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 3; ++h) {
            const HeadMap m = trace->map(0, l, h);
            for (int i = 0; i < m.rows; ++i) {
                REQUIRE(m.at(i, 7) == 0.0f);  // padding is never attended to
                REQUIRE(m.at(i, 8) == 0.0f);
            }
        }
}

TEST_CASE("BERT: legacy gamma/beta names without the bert. prefix, relu, F16 shards", "[bert]") {
    BertSpec spec;
    spec.prefix = false;
    spec.legacyNorm = true;
    spec.activation = "relu";
    bertDiff(spec, 4, "bert-legacy", kIds);
    BertSpec half;
    bertDiff(half, 5, "bert-f16", kIds, {}, {}, WriteOptions{"F16", 2});
}

TEST_CASE("RoBERTa: positions start after padding_idx and skip pad tokens", "[bert]") {
    BertSpec spec;
    spec.type = "roberta";
    spec.typeVocab = 1;
    bertDiff(spec, 6, "roberta", kIds);
    // Pad tokens (id 1) at the end, masked: their positions stay at padding_idx.
    bertDiff(spec, 6, "roberta-padded", {0, 17, 4, 2, 1, 1}, {}, {1, 1, 1, 1, 0, 0});
    auto model = writeAndLoad(makeBert(spec, 6), "roberta-info");
    CHECK(model->info().maxPositions == 38);  // 40 - padding_idx - 1
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(39, 5)),
                      Catch::Contains("39 tokens but the model has only 38 positions"));
    CHECK(model->forward(std::vector<std::int64_t>(38, 5))->tokens().size() == 38);
}

TEST_CASE("DistilBERT: its own names, no token types", "[bert]") {
    BertSpec spec;
    spec.type = "distilbert";
    bertDiff(spec, 7, "distilbert", kIds, {}, {1, 1, 1, 1, 1, 1, 0, 0, 0});
    auto model = writeAndLoad(makeBert(spec, 7), "distilbert-types");
    CHECK(model->info().family == "distilbert");
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {0, 1}, {}}),
                      Catch::Contains("distilbert models have no token types"));
}

TEST_CASE("BERT: an I64 position_ids buffer from older transformers is ignored", "[bert]") {
    BertSpec spec;
    WriteOptions o;
    TensorBytes ids{"bert.embeddings.position_ids", DType::I64, {1, spec.positions}, {}};
    for (std::int64_t i = 0; i < spec.positions; ++i) {
        const auto* p = reinterpret_cast<const std::byte*>(&i);
        ids.bytes.insert(ids.bytes.end(), p, p + sizeof i);
    }
    o.extra.push_back(ids);
    o.shards = 2;
    Checkpoint c = makeBert(spec, 10);
    auto model = writeAndLoad(c, "bert-i64", o);
    const double diff = maxMapDiff(*model->forward(ids64(kIds)), referenceBert(c, spec, kIds));
    CHECK(diff < 2e-6);
    CHECK(model->info().dtype == "F32");
}

TEST_CASE("BERT: bad inputs and configs are errors that say so", "[bert]") {
    BertSpec spec;
    auto model = writeAndLoad(makeBert(spec, 8), "bert-input");
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {0, 2}, {}}),
                      Catch::Contains("token type 2 at position 1 is outside [0, 2)"));
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {0}, {}}),
                      Catch::Contains("token types: 1 given for 2 tokens"));
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {}, {1}}),
                      Catch::Contains("padding mask: 1 values given for 2 tokens"));
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {}, {0, 0}}), Catch::Contains("every token is padding"));
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 50}, {}, {}}),
                      Catch::Contains("token id 50 at position 1 is outside"));

    Checkpoint c = makeBert(spec, 8);
    c.config["position_embedding_type"] = "relative_key";
    CHECK_THAT(loadError(c), Catch::Contains("'position_embedding_type' 'relative_key' is not supported"));
    c = makeBert(spec, 8);
    c.config["num_attention_heads"] = 5;
    CHECK_THAT(loadError(c), Catch::Contains("'num_attention_heads' (5) must divide the hidden size (24)"));
    c = makeBert(spec, 8);
    c.tensors.erase("bert.encoder.layer.1.output.LayerNorm.bias");
    CHECK_THAT(
            loadError(c),
            Catch::Contains(
                    "tensor 'bert.encoder.layer.1.output.LayerNorm.bias' (or 'encoder.layer.1.output.LayerNorm.bias') is missing"));
    c = makeBert(spec, 8);
    c.config["type_vocab_size"] = 3;
    CHECK_THAT(loadError(c),
               Catch::Contains(
                       "'bert.embeddings.token_type_embeddings.weight' has shape [2, 24], the config needs [3, 24]"));
}

TEST_CASE("BERT: token labels from vocab.txt", "[bert]") {
    const auto dir = freshDir("bert-vocab");
    writeCheckpoint(dir, makeBert(BertSpec{}, 9));
    std::string vocab;
    for (int i = 0; i < 50; ++i) vocab += (i == 2 ? std::string("[CLS]") : "w" + std::to_string(i)) + "\n";
    writeText(dir / "vocab.txt", vocab);
    auto trace = loadCpu(dir)->forward({2, 7, 49});
    CHECK(trace->tokens() == std::vector<std::string>{"[CLS]", "w7", "w49"});
}

}  // namespace test_bert
