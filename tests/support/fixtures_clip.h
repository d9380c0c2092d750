// Random CLIP and SigLIP checkpoints for tests, with the real Hugging Face tensor names and shapes
// (CLIPModel, SiglipModel), and their independent double-precision references
// (reference_clip.cpp: plain loops written from modeling_clip.py and modeling_siglip.py).
#pragma once

#include "family_fixtures.h"

namespace attnscope::testing {

struct ClipSpec {
    std::string type = "clip";  // clip, siglip
    int visionHidden = 24, visionInner = 40, visionLayers = 2, visionHeads = 3, imageSize = 16, patch = 4;
    int textHidden = 20, textInner = 36, textLayers = 2, textHeads = 2, vocab = 64, positions = 12;
    int projection = 16;  // clip: projection_dim (siglip: the text head maps textHidden to visionHidden)
    long long eos = 63;   // clip: text_config.eos_token_id (2: the legacy configs, pooled at the largest id)
    std::string visionAct = "quick_gelu", textAct = "gelu";
    double logitScale = 1.2;   // the stored logit_scale (its exp multiplies the cosine)
    double logitBias = -0.75;  // siglip
    bool scalarShape = true;   // logit_scale stored as [] (else [1])
};
Checkpoint makeClip(const ClipSpec& spec, unsigned seed);

// A CLIP-layout tokenizer.json (NFC, whitespace runs to " ", lowercase; CLIP's Split regex,
// ByteLevel; BPE with end_of_word_suffix "</w>"; RobertaProcessing with
// <|startoftext|> and <|endoftext|>, as transformers' CLIPConverter writes it) over a tiny vocabulary of 64: a..z
// 0..25, a</w>..z</w> 26..51, merges th 52, the</w> 53, ca 54, cat</w> 55, do 56, dog</w> 57, <|startoftext|> 62,
// <|endoftext|> 63.
void writeClipTokenizer(const std::filesystem::path& dir);

struct ImageTextReference {
    // probs[l][h][i * n + j] per tower; probe[h][j]: SigLIP's MAP head.
    std::vector<std::vector<std::vector<double>>> vision, text;
    std::vector<std::vector<double>> probe;
    std::vector<double> image, words;  // the two embeddings
    double cosine = 0, logit = 0;
    // The patch contributions [heads][patches] (attention/image_text.h), computed term by term.
    std::vector<std::vector<double>> contributions;
};

// pixels: [3][size][size] already preprocessed (channels first); ids used as given. The spec's
// type picks CLIP's or SigLIP's forward.
ImageTextReference referenceClip(const Checkpoint& c, const ClipSpec& spec, const std::vector<double>& pixels,
                                 const std::vector<long long>& ids);

}  // namespace attnscope::testing
