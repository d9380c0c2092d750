#!/usr/bin/env python3
"""Random encoder-decoder checkpoint folders with real Hugging Face tensor names, for timing.

  python3 bench/make_checkpoint_seq2seq.py FAMILY DIR [--size small|500mb] [--dtype F32|F16|BF16] [--vocab N]
                                            [--decoder-vocab N]

FAMILY: t5 (T5 1.0 layout: relu, tied head; --gated for T5 1.1's gated-gelu with lm_head),
bart, mbart, marian. --size 500mb: T5 with d_model 768, d_ff 3072, 6 + 6 layers (~496 MB F32);
BART-base's shape (6 + 6 layers, d_model 768, vocab 50265, ~558 MB F32). --decoder-vocab (marian):
separate vocabularies as opus-mt's separate_vocabs checkpoints have them (share_encoder_decoder_embeddings
false, decoder_vocab_size N, encoder.embed_tokens and decoder.embed_tokens). Needs only numpy.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_checkpoint import write_safetensors  # noqa: E402

SIZES = {
    "t5": {"small": dict(d=64, kv=16, ff=128, layers=2, heads=4, vocab=1000),
           "500mb": dict(d=768, kv=64, ff=3072, layers=6, heads=12, vocab=32128)},
    "bart": {"small": dict(d=64, ff=128, layers=2, heads=4, vocab=1000, positions=512),
             "500mb": dict(d=768, ff=3072, layers=6, heads=12, vocab=50265, positions=1024)},
}


def t5(s, rnd, gated):
    E, H, kv, F, t = s["d"], s["heads"], s["kv"], s["ff"], {}
    I = H * kv
    t["shared.weight"] = rnd(s["vocab"], E, std=1.0)

    def attn(p, bias):
        for n, shape in (("q", (I, E)), ("k", (I, E)), ("v", (I, E)), ("o", (E, I))):
            t[p + n + ".weight"] = rnd(*shape)
        if bias:
            t[p + "relative_attention_bias.weight"] = rnd(32, H, std=0.5)

    def ff(p):
        names = ("wi_0", "wi_1") if gated else ("wi",)
        for n in names:
            t[p + "DenseReluDense." + n + ".weight"] = rnd(F, E)
        t[p + "DenseReluDense.wo.weight"] = rnd(E, F)
        t[p + "layer_norm.weight"] = rnd(E, mean=1)

    for l in range(s["layers"]):
        p = f"encoder.block.{l}.layer."
        attn(p + "0.SelfAttention.", l == 0)
        t[p + "0.layer_norm.weight"] = rnd(E, mean=1)
        ff(p + "1.")
        p = f"decoder.block.{l}.layer."
        attn(p + "0.SelfAttention.", l == 0)
        t[p + "0.layer_norm.weight"] = rnd(E, mean=1)
        attn(p + "1.EncDecAttention.", False)
        t[p + "1.layer_norm.weight"] = rnd(E, mean=1)
        ff(p + "2.")
    t["encoder.final_layer_norm.weight"] = rnd(E, mean=1)
    t["decoder.final_layer_norm.weight"] = rnd(E, mean=1)
    if gated:
        t["lm_head.weight"] = rnd(s["vocab"], E)
    config = {"model_type": "t5", "vocab_size": s["vocab"], "d_model": E, "d_kv": kv, "d_ff": F,
              "num_layers": s["layers"], "num_decoder_layers": s["layers"], "num_heads": H,
              "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
              "feed_forward_proj": "gated-gelu" if gated else "relu", "tie_word_embeddings": not gated,
              "decoder_start_token_id": 0, "eos_token_id": 1, "pad_token_id": 0}
    return t, config


def bart(s, rnd, family):
    E, F, t = s["d"], s["ff"], {}

    def lin(name, out, inp):
        t[name + ".weight"], t[name + ".bias"] = rnd(out, inp), rnd(out)

    def norm(name):
        t[name + ".weight"], t[name + ".bias"] = rnd(E, mean=1), rnd(E)

    dv = s.get("decoder_vocab") or s["vocab"]
    if s.get("decoder_vocab"):
        t["model.encoder.embed_tokens.weight"] = rnd(s["vocab"], E, std=1.0)
        t["model.decoder.embed_tokens.weight"] = rnd(dv, E, std=1.0)
    else:
        t["model.shared.weight"] = rnd(s["vocab"], E, std=1.0)
    for stack in ("encoder", "decoder"):
        sp = f"model.{stack}."
        if family != "marian":
            t[sp + "embed_positions.weight"] = rnd(s["positions"] + 2, E)
            norm(sp + "layernorm_embedding")
        if family == "mbart":
            norm(sp + "layer_norm")
        for l in range(s["layers"]):
            p = f"{sp}layers.{l}."
            for a in ("self_attn.",) + (("encoder_attn.",) if stack == "decoder" else ()):
                for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    lin(p + a + n, E, E)
                norm(p + a.rstrip(".") + "_layer_norm")
            lin(p + "fc1", F, E)
            lin(p + "fc2", E, F)
            norm(p + "final_layer_norm")
    t["final_logits_bias"] = rnd(1, dv)
    config = {"model_type": family, "vocab_size": s["vocab"], "d_model": E, "encoder_layers": s["layers"],
              "decoder_layers": s["layers"], "encoder_attention_heads": s["heads"],
              "decoder_attention_heads": s["heads"], "encoder_ffn_dim": F, "decoder_ffn_dim": F,
              "max_position_embeddings": s["positions"], "activation_function": "swish" if family == "marian" else "gelu",
              "scale_embedding": family != "bart", "decoder_start_token_id": 2, "eos_token_id": 2, "pad_token_id": 1}
    if family == "marian":  # opus-mt's ids: </s> 0, <pad> last, decoding starts at <pad>
        config.update(eos_token_id=0, pad_token_id=dv - 1, decoder_start_token_id=dv - 1)
    if s.get("decoder_vocab"):
        config.update(share_encoder_decoder_embeddings=False, decoder_vocab_size=dv)
    return t, config


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("family", choices=["t5", "bart", "mbart", "marian"])
    ap.add_argument("folder")
    ap.add_argument("--size", choices=["small", "500mb"], default="500mb")
    ap.add_argument("--dtype", choices=["F32", "F16", "BF16"], default="F32")
    ap.add_argument("--gated", action="store_true", help="t5: gated-gelu feed-forward and an untied lm_head")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vocab", type=int, help="vocabulary size (to match a tokenizer put next to it)")
    ap.add_argument("--decoder-vocab", type=int, help="marian: the target side's own vocabulary size")
    a = ap.parse_args()
    g = np.random.default_rng(a.seed)

    def rnd(*shape, mean=0.0, std=0.02):
        return (mean + std * g.standard_normal(shape)).astype(np.float32)

    size = dict(SIZES["t5" if a.family == "t5" else "bart"][a.size])
    if a.vocab:
        size["vocab"] = a.vocab
    if a.decoder_vocab:
        if a.family != "marian":
            ap.error("--decoder-vocab is for marian")
        size["decoder_vocab"] = a.decoder_vocab
    if a.family == "t5":
        tensors, config = t5(size, rnd, a.gated)
    else:
        tensors, config = bart(size, rnd, a.family)
    os.makedirs(a.folder, exist_ok=True)
    write_safetensors(os.path.join(a.folder, "model.safetensors"), sorted(tensors.items()), a.dtype)
    with open(os.path.join(a.folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    total = sum(v.size for v in tensors.values())
    print(f"{a.folder}: {a.family}, {total / 1e6:.1f}M parameters")


if __name__ == "__main__":
    main()
