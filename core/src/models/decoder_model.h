// The model of the decoder-only families (decoder_spec.h). Its load and its one forward loop are
// decoder_forward.cpp; the features built on that loop live with their feature: the cached run in
// kv_cache.cpp, the runs for activation patching and the gradient sources in decoder_runners.cpp,
// DLA's parts in decoder_readout.cpp, the experts in moe.cpp.
#pragma once

#include "decoder_readout.h"
#include "family_common.h"
#include "gradient_runner.h"
#include "kv_cache.h"
#include "layer_runner.h"
#include "runtime/memory.h"

namespace attnscope {

struct DecoderLayer {
    NormWeights in, attnOut, ff, ffOut, qNorm, kNorm;
    Linear q, k, v, qkv, o, gate, up, gateUp, down;
    bool routed = false;  // the MoE MLP (moe.h) instead of gate/up/down
    MoeLayer moe;
};

// The layer's weights as autograd aliases of the same memory (decoder_runners.cpp).
DecoderLayer aliasedLayer(const DecoderLayer& layer);

// What a layer is asked to keep or change beyond its output (all optional): DLA's parts, the
// activations patching reads, and one patched activation.
struct LayerHooks {
    ResidualParts* parts = nullptr;
    LayerActivations* record = nullptr;
    const LayerPatch* patch = nullptr;
    const DecoderLayer* weights = nullptr;  // the layer's weights when not the model's own (copies)
    bool retainGrad = false;                // recorded activations keep their gradients
    // Gradient sources: each layer's α is appended here (LayerRun::alphas).
    std::vector<at::Tensor>* alphas = nullptr;
    KvLayer* kv = nullptr;  // cached run: the layer's keys and values before these rows
    // For the loop over layers (runLayers): the residual entering each layer and the final one
    // appended here; each layer's keys and values cached here; the weights as aliases (autograd).
    std::vector<at::Tensor>* resid = nullptr;
    std::vector<KvLayer>* cache = nullptr;
    bool aliasWeights = false;
    RouterRecord* router = nullptr;  // mixture of experts: each layer's router rows (moe.h)
};

class DecoderModel final : public TextFamilyModel<DecoderSpec>,
                           public LayerRunner,
                           public GradientRunner,
                           public CachedDecoder {
public:
    DecoderModel(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device, const LoadOptions& options);

    // The key/value cache (kv_cache.cpp).
    std::string cacheRefusal(const RunOptions& run, std::int64_t prompt, std::int64_t capacity) const override;

    // Activation patching and the gradient sources (decoder_runners.cpp).
    LayerActivations runRecording(const std::vector<std::int64_t>& ids) const override;
    at::Tensor runFrom(const std::vector<std::int64_t>& ids, int from, const at::Tensor& entering,
                       const LayerPatch& patch) const override;
    LayerActivations runWithGradients(const std::vector<std::int64_t>& ids, std::int64_t position,
                                      const std::vector<std::int64_t>& tokens, LayerActivations& grads) const override;
    const Readout& finalReadout() const override { return *readout_; }
    std::string patchingRefusal() const override;
    std::string gradientRefusal() const override;
    bool hasOutputToExplain() const override { return true; }
    bool explainsClasses() const override { return false; }
    std::int64_t gradientTokens(const TextInput& text, const std::optional<RgbImage>&) const override {
        return static_cast<std::int64_t>(text.ids.size());
    }
    GradientRun runGradients(const TextInput& text, const std::optional<RgbImage>& image,
                             const RunOptions& options) const override;

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override;
    void prepareSession(KvSession& session) const override;
    void runCached(KvSession& session, const std::vector<std::int64_t>& ids) const override;
    std::shared_ptr<const Trace> cachedTrace(const KvSession& session) const override;

private:
    std::vector<RopeTables> ropeTablesFor(std::int64_t n) const;
    // The ids against the vocabulary and, for a whole sequence, the positions.
    void checkInput(const std::vector<std::int64_t>& ids, bool whole) const;
    // Working set of a forward over n positions (requireForwardMemory).
    ForwardFootprint footprint(std::int64_t n) const;
    // The final norm and unembedding over the weights' aliases (a backward pass through them).
    std::shared_ptr<const Readout> aliasedReadout() const;
    // The embeddings of ids at positions start.. (learned positions from that row).
    at::Tensor embedTokens(const std::vector<std::int64_t>& ids, std::int64_t start = 0) const;
    // Layers from..L-1 over x (the weights streamed in as each needs them), with the hooks;
    // progress after each layer.
    at::Tensor runLayers(at::Tensor x, int from, const std::vector<RopeTables>& tables, const RunOptions& options,
                         BlockCapture* capture, LayerHooks hooks, const Progress& progress = {}) const;
    at::Tensor layer(int l, at::Tensor x, const std::vector<RopeTables>& tables, const RunOptions& options,
                     BlockCapture* capture, const LayerHooks& hooks) const;
    // The next-token logits after x's last row (x: the final residual, [n, hidden]).
    std::vector<float> lastLogits(const at::Tensor& x) const;
    // The Trace of impl's ids with the self-attention block's capture (and its windows).
    std::shared_ptr<const Trace> finishTrace(std::unique_ptr<Trace::Impl> impl, BlockCapture capture) const;

    at::Tensor embed_, positions_, projectIn_, projectOut_;
    NormWeights embedNorm_, finalNorm_;
    Linear head_;
    std::vector<DecoderLayer> layers_;
    std::shared_ptr<const Readout> readout_;
};

}  // namespace attnscope
