// Model folders of several families for trying the app by hand (not run by ctest).
#include "family_fixtures.h"
#include "fixtures_neox.h"
#include "gpt2_fixture.h"
#include "png_write.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <vector>

using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

}  // namespace

// Writes family folders to $ATTNSCOPE_FIXTURE_OUT for trying the app by hand (bert: BERT with the
// pruned uncased vocabulary; vit: ViT with picture.png; llama: grouped-query Llama with Llama-2's
// tokenizer; bert-classifier: a 3-class BERT sequence classifier, gpt2 and gpt-neox: small
// random decoders, ids only):   ATTNSCOPE_FIXTURE_OUT=/tmp/fam
// build/tools/attnscope-devtools "[.write-family-fixtures]"
TEST_CASE("write family fixture folders", "[.write-family-fixtures]") {
    const char* out = std::getenv("ATTNSCOPE_FIXTURE_OUT");
    REQUIRE(out);
    const std::filesystem::path root(out);
    BertSpec bert;
    bert.vocab = 11506;
    writeCheckpoint(root / "bert", makeBert(bert, 31));
    std::filesystem::copy_file(kData / "bert-uncased" / "vocab.txt", root / "bert" / "vocab.txt",
                               std::filesystem::copy_options::overwrite_existing);
    VitSpec vit;
    vit.imageSize = 32;
    writeCheckpoint(root / "vit", makeVit(vit, 32));
    std::vector<std::uint8_t> pixels(32 * 32 * 3);
    for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) {
            const std::size_t i = std::size_t(y * 32 + x) * 3;
            pixels[i] = std::uint8_t(x * 8);
            pixels[i + 1] = std::uint8_t(y * 8);
            pixels[i + 2] = std::uint8_t((x + y) % 2 ? 200 : 40);
        }
    writePng(root / "vit" / "picture.png", 32, 32, pixels);
    LlamaSpec llama;
    llama.vocab = 9295;
    llama.tied = true;
    writeCheckpoint(root / "llama", makeLlama(llama, 33));
    std::filesystem::copy_file(kData / "llama2.json", root / "llama" / "tokenizer.json",
                               std::filesystem::copy_options::overwrite_existing);
    BertSpec classifier;  // a sequence classifier: the gradient sources have a class to explain
    classifier.labels = 3;
    writeCheckpoint(root / "bert-classifier", makeBert(classifier, 36));
    writeGpt2Folder(root / "gpt2", makeGpt2(Gpt2Spec{}, 34));
    writeCheckpoint(root / "gpt-neox", makeNeox(NeoxSpec{}, 35));
}
