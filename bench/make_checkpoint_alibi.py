#!/usr/bin/env python3
"""Random OPT, BLOOM and Falcon checkpoint folders with real Hugging Face tensor names, for timing.

  python3 bench/make_checkpoint_alibi.py FAMILY DIR [--size small|500mb] [--dtype F32|F16|BF16] [--shards N]

FAMILY: opt, bloom, falcon (Falcon-7B layout: multi-query, rotary, parallel), falcon-rw (ALiBi,
per-head fused qkv, sequential blocks, biases), falcon-40b (new_decoder_architecture, 4 kv groups).
--size 500mb gives about 500 MB of F32 weights with GPT-2 small's width and depth (12 x 768,
12 heads), so forward times compare with GPT-2's at the same FLOPs. Needs numpy; writes with
bench/make_checkpoint.py's safetensors writer.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_checkpoint import write_safetensors  # noqa: E402

SIZES = {"small": dict(layers=2, hidden=64, heads=4, vocab=1000, positions=512),
         "500mb": dict(layers=12, hidden=768, heads=12, vocab=50272, positions=2048)}


def opt(s, rnd):
    E, L, t = s["hidden"], s["layers"], {}
    def lin(name, out, inp):
        t[name + ".weight"], t[name + ".bias"] = rnd(out, inp), rnd(out)
    def norm(name):
        t[name + ".weight"], t[name + ".bias"] = rnd(E, mean=1), rnd(E)
    t["model.decoder.embed_tokens.weight"] = rnd(s["vocab"], E)
    t["model.decoder.embed_positions.weight"] = rnd(s["positions"] + 2, E)
    for l in range(L):
        p = f"model.decoder.layers.{l}."
        norm(p + "self_attn_layer_norm")
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            lin(p + "self_attn." + n, E, E)
        norm(p + "final_layer_norm")
        lin(p + "fc1", 4 * E, E)
        lin(p + "fc2", E, 4 * E)
    norm("model.decoder.final_layer_norm")
    config = {"model_type": "opt", "vocab_size": s["vocab"], "hidden_size": E, "ffn_dim": 4 * E,
              "num_hidden_layers": L, "num_attention_heads": s["heads"], "max_position_embeddings": s["positions"],
              "do_layer_norm_before": True, "word_embed_proj_dim": E, "activation_function": "relu",
              "enable_bias": True, "tie_word_embeddings": True}
    return t, config


def bloom(s, rnd):
    E, L, t = s["hidden"], s["layers"], {}
    def lin(name, out, inp):
        t[name + ".weight"], t[name + ".bias"] = rnd(out, inp), rnd(out)
    def norm(name):
        t[name + ".weight"], t[name + ".bias"] = rnd(E, mean=1), rnd(E)
    t["transformer.word_embeddings.weight"] = rnd(s["vocab"], E)
    norm("transformer.word_embeddings_layernorm")
    for l in range(L):
        p = f"transformer.h.{l}."
        norm(p + "input_layernorm")
        lin(p + "self_attention.query_key_value", 3 * E, E)
        lin(p + "self_attention.dense", E, E)
        norm(p + "post_attention_layernorm")
        lin(p + "mlp.dense_h_to_4h", 4 * E, E)
        lin(p + "mlp.dense_4h_to_h", E, 4 * E)
    norm("transformer.ln_f")
    config = {"model_type": "bloom", "vocab_size": s["vocab"], "hidden_size": E, "n_layer": L, "n_head": s["heads"],
              "layer_norm_epsilon": 1e-5, "apply_residual_connection_post_layernorm": False}
    return t, config


def falcon(s, rnd, variant):
    E, L, H, t = s["hidden"], s["layers"], s["heads"], {}
    d = E // H
    rw, grouped = variant == "falcon-rw", variant == "falcon-40b"
    G = 4 if grouped else 1
    qkv = (H + 2 * G) * d if grouped else 3 * E if rw else (H + 2) * d
    def lin(name, out, inp):
        t[name + ".weight"] = rnd(out, inp)
        if rw:
            t[name + ".bias"] = rnd(out)
    def norm(name):
        t[name + ".weight"], t[name + ".bias"] = rnd(E, mean=1), rnd(E)
    t["transformer.word_embeddings.weight"] = rnd(s["vocab"], E)
    for l in range(L):
        p = f"transformer.h.{l}."
        if rw:
            norm(p + "input_layernorm")
            norm(p + "post_attention_layernorm")
        elif grouped:
            norm(p + "ln_attn")
            norm(p + "ln_mlp")
        else:
            norm(p + "input_layernorm")
        lin(p + "self_attention.query_key_value", qkv, E)
        lin(p + "self_attention.dense", E, E)
        lin(p + "mlp.dense_h_to_4h", 4 * E, E)
        lin(p + "mlp.dense_4h_to_h", E, 4 * E)
    norm("transformer.ln_f")
    config = {"model_type": "falcon", "vocab_size": s["vocab"], "hidden_size": E, "num_hidden_layers": L,
              "num_attention_heads": H, "max_position_embeddings": s["positions"], "alibi": rw,
              "multi_query": not rw, "parallel_attn": not rw, "bias": rw, "new_decoder_architecture": grouped,
              "layer_norm_epsilon": 1e-5}
    if grouped:
        config["num_kv_heads"] = G
    return t, config


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=["opt", "bloom", "falcon", "falcon-rw", "falcon-40b"])
    ap.add_argument("folder")
    ap.add_argument("--size", default="small", choices=sorted(SIZES))
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    def rnd(*shape, mean=0.0):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02 + mean).astype(np.float32)
    s = SIZES[a.size]
    if a.family == "opt":
        tensors, config = opt(s, rnd)
    elif a.family == "bloom":
        tensors, config = bloom(s, rnd)
    else:
        tensors, config = falcon(s, rnd, a.family)
    os.makedirs(a.folder, exist_ok=True)
    with open(os.path.join(a.folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    items = list(tensors.items())
    per = -(-len(items) // max(1, a.shards))
    if a.shards <= 1:
        write_safetensors(os.path.join(a.folder, "model.safetensors"), items, a.dtype)
        return
    weight_map = {}
    for i in range(a.shards):
        name = f"model-{i + 1:05d}-of-{a.shards:05d}.safetensors"
        shard = items[i * per:(i + 1) * per]
        write_safetensors(os.path.join(a.folder, name), shard, a.dtype)
        weight_map.update({n: name for n, _ in shard})
    with open(os.path.join(a.folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)


if __name__ == "__main__":
    main()
