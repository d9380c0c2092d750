// Attention over the image for image models (ViT): which token is which patch, and one query's
// attention over the patch grid from a head, a layer's mean or the attention rollout with
// vit-explain's discard ratio (Gildenblat's vit-explain, after Abnar & Zuidema 2020), with the
// rows normalised as the paper means (vit-explain's `a / a.sum(dim=-1)` divides column j by row
// j's sum; here every row is divided by its own sum, so rollout rows sum to 1).
// Plain C++ over Trace::map (no torch); the ui draws what these return and computes nothing.
#pragma once

#include "attnscope/analysis/rollout.h"
#include "attnscope/attention/trace.h"

#include <string>
#include <vector>

namespace attnscope {

// The patch tokens of an image model's sequence: tokens labelled "rRcC" (row R, column C, as
// models/vit.cpp labels them) in a full rows × cols grid; every other token ([CLS], a
// distillation token) is listed in `others`.
struct PatchGrid {
    int rows = 0, cols = 0;
    std::vector<int> positions;  // token index of patch (r, c) at r * cols + c
    std::vector<int> others;     // token indices that are not patches, in order
};

// Throws attnscope::Error when no label is a patch, a patch repeats, or the patches leave a hole
// in their grid ("... has no patch r1c2").
PatchGrid patchGrid(const std::vector<std::string>& tokens);

// How the heads of a layer become one map (vit-explain's head_fusion): entry-wise mean, max or min.
enum class HeadFusion { Mean, Max, Min };
const char* fusionName(HeadFusion fusion);  // "mean", "max", "min"
HeadMap fuseHeads(const std::vector<HeadMap>& heads, HeadFusion fusion);

// vit-explain's discard: the floor(ratio · rows · cols) smallest entries of the whole map become
// 0, except entry (0, 0) ([CLS] to itself), which vit-explain keeps; ties go to the lower
// row-major index. ratio in [0, 1); throws attnscope::Error otherwise or for a malformed map.
HeadMap discardLowest(const HeadMap& map, double ratio);

struct RolloutOptions {
    double residual = 0.5;    // Â = residual·I + (1 - residual)·A, rows renormalised (rollout.h)
    double discardRatio = 0;  // per layer, on the fused map before the residual (discardLowest)
    HeadFusion fusion = HeadFusion::Mean;
};

// Row `query` of the rollout R = Â_{L-1} ··· Â_0 of the given per-layer fused maps, computed as a
// row vector from the top layer down (L·n² multiply-adds; the n×n product is never formed).
// Equals row `query` of attentionRollout(discarded layers, residual). Throws like
// attentionRollout, and for a query out of range.
std::vector<double> rolloutRow(const std::vector<HeadMap>& fusedLayers, int query, const RolloutOptions& options);

enum class OverlaySource {
    Head,        // the shown head's map
    LayerMean,   // the mean of the layer's heads
    Rollout,     // the rollout of layers 0..layer (the last layer: vit-explain's), fused and discarded
    Similarity,  // image–text models: each patch's direct contribution to the logit (similarityOverlay)
};
// "head", "layer mean", "rollout", "contribution to the image–text logit"
const char* overlaySourceName(OverlaySource source);

struct OverlayOptions {
    OverlaySource source = OverlaySource::Head;
    int layer = 0;
    int head = 0;              // Head only
    int query = 0;             // the token whose row is shown; 0 = [CLS] in ViT
    MapOptions map;            // the maps' temperature (and variant)
    RolloutOptions rollout;    // Rollout only
    bool patchesOnly = false;  // the row renormalised over the patches (overPatchesOnly)
};

// One query's row over the image: patches[r * grid.cols + c] is the weight of patch (r, c);
// otherWeight the weight on the tokens that are not patches (the row's remainder), so
// Σ patches + otherWeight is the row's sum (1 for a softmax row and for a rollout row).
struct PatchOverlay {
    PatchGrid grid;
    int query = 0;
    std::vector<double> patches;
    double otherWeight = 0;
    double maxPatch = 0;  // the largest patch weight (vit-explain divides by it for display)
    // Swin's stages (attention/window_padding.h): the weight the row put on window padding,
    // left out of the patches (a head's or layer mean's row; 0 for the rollout, which is over the
    // tokens), and each patch's window at this layer (r * grid.cols + c; empty without windows).
    double paddingWeight = 0;
    std::vector<int> windows;
    // overPatchesOnly: patches (and maxPatch) divided by the patches' own sum.
    bool renormalised = false;
    // Similarity: the values are signed contributions (maxPatch is then the largest |value|) and
    // otherWeight is the remainder of the logit they leave (ImageTextScore::remainder()).
    bool signedValues = false;
};

// The overlay of `block` (a square self-attention block whose key labels form a patch grid; or a
// Swin stage, its window padding's keys left out (attention/window_padding.h), so a row sums to
// its tokens' share, and the rollout over that stage's blocks only: patch merging between stages
// is not attention). Throws attnscope::Error for a block that is not one, an index out of range, or a ratio outside
// [0, 1).
PatchOverlay patchOverlay(const Trace& trace, int block, const OverlayOptions& options);

// Image–text models (CLIP, SigLIP; attention/image_text.h): each patch's direct contribution to
// the image–text logit through the decomposed attention's heads, summed over them (head < 0) or
// one head's; Σ patches + otherWeight is the logit. The grid is the contributions' positions.
// Throws attnscope::Error for other models and a head out of range. patchOverlay gives it, summed
// over the heads, for OverlaySource::Similarity (the block, layer, head and query do not apply).
PatchOverlay similarityOverlay(const Trace& trace, int head = -1);

// Row `query` of a given map over `block`'s patches (a map source's: relevance, value norms),
// laid out as patchOverlay lays out a row of the weights; the map's columns are the block's keys.
// Throws attnscope::Error for a query outside the map or keys that form no patch grid.
PatchOverlay mapRowOverlay(const Trace& trace, int block, const HeadMap& map, int query);

// The overlay renormalised over its patches: each divided by the patches' sum, so they sum to 1
// and what the row put on the other tokens ([CLS], registers, [DIST]) or on window padding no
// longer sets the colours (otherWeight and paddingWeight keep the row's own values). Registers
// in particular soak up much of a DINOv2 row. Unchanged when the patches sum to 0.
PatchOverlay overPatchesOnly(PatchOverlay overlay);

}  // namespace attnscope
