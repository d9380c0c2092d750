#!/usr/bin/env python3
"""Random GPT-NeoX, GPT-J, GPT-Neo and Phi checkpoints with real Hugging Face tensor names, for
open and forward timings (docs/benchmarks.md, "GPT-NeoX, GPT-J, GPT-Neo, Phi").

  python3 bench/make_checkpoint_neox.py FAMILY DIR [--dtype F32|F16|BF16] [--shards N]

FAMILY: gpt_neox, gptj, gpt_neo, phi. Every family gets GPT-2 small's layer stack (12 layers,
width 768, 12 heads, MLP 3072), so a forward costs GPT-2 small's FLOPs, and a vocabulary that
brings the F32 file to about 500 MB (GPT-Neo: its real 50257, tied, as GPT-Neo-125M).
Writes with bench/make_checkpoint.py's safetensors writer; needs only numpy.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_checkpoint import write_safetensors  # noqa: E402

L, E, H, I, POS = 12, 768, 12, 3072, 2048


def neox(rnd):
    V, t = 26000, {}
    t["gpt_neox.embed_in.weight"] = rnd(V, E)
    for l in range(L):
        p = f"gpt_neox.layers.{l}."
        for n in ("input_layernorm", "post_attention_layernorm"):
            t[p + n + ".weight"], t[p + n + ".bias"] = rnd(E, mean=1), rnd(E)
        t[p + "attention.query_key_value.weight"], t[p + "attention.query_key_value.bias"] = rnd(3 * E, E), rnd(3 * E)
        t[p + "attention.dense.weight"], t[p + "attention.dense.bias"] = rnd(E, E), rnd(E)
        t[p + "mlp.dense_h_to_4h.weight"], t[p + "mlp.dense_h_to_4h.bias"] = rnd(I, E), rnd(I)
        t[p + "mlp.dense_4h_to_h.weight"], t[p + "mlp.dense_4h_to_h.bias"] = rnd(E, I), rnd(E)
    t["gpt_neox.final_layer_norm.weight"], t["gpt_neox.final_layer_norm.bias"] = rnd(E, mean=1), rnd(E)
    t["embed_out.weight"] = rnd(V, E)
    return t, {"model_type": "gpt_neox", "vocab_size": V, "hidden_size": E, "intermediate_size": I,
               "num_hidden_layers": L, "num_attention_heads": H, "max_position_embeddings": POS,
               "rotary_pct": 0.25, "rotary_emb_base": 10000, "use_parallel_residual": True, "hidden_act": "gelu",
               "layer_norm_eps": 1e-5, "tie_word_embeddings": False}


def gptj(rnd):
    V, t = 26000, {}
    t["transformer.wte.weight"] = rnd(V, E)
    for l in range(L):
        p = f"transformer.h.{l}."
        t[p + "ln_1.weight"], t[p + "ln_1.bias"] = rnd(E, mean=1), rnd(E)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            t[p + "attn." + n + ".weight"] = rnd(E, E)
        t[p + "mlp.fc_in.weight"], t[p + "mlp.fc_in.bias"] = rnd(I, E), rnd(I)
        t[p + "mlp.fc_out.weight"], t[p + "mlp.fc_out.bias"] = rnd(E, I), rnd(E)
    t["transformer.ln_f.weight"], t["transformer.ln_f.bias"] = rnd(E, mean=1), rnd(E)
    t["lm_head.weight"], t["lm_head.bias"] = rnd(V, E), rnd(V)
    return t, {"model_type": "gptj", "vocab_size": V, "n_positions": POS, "n_embd": E, "n_layer": L, "n_head": H,
               "rotary_dim": 16, "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
               "tie_word_embeddings": False}


def gpt_neo(rnd):
    V, t = 50257, {}
    t["transformer.wte.weight"] = rnd(V, E)
    t["transformer.wpe.weight"] = rnd(POS, E)
    for l in range(L):
        p = f"transformer.h.{l}."
        for n in ("ln_1", "ln_2"):
            t[p + n + ".weight"], t[p + n + ".bias"] = rnd(E, mean=1), rnd(E)
        for n in ("q_proj", "k_proj", "v_proj"):
            t[p + "attn.attention." + n + ".weight"] = rnd(E, E)
        t[p + "attn.attention.out_proj.weight"], t[p + "attn.attention.out_proj.bias"] = rnd(E, E), rnd(E)
        t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"] = rnd(I, E), rnd(I)
        t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"] = rnd(E, I), rnd(E)
    t["transformer.ln_f.weight"], t["transformer.ln_f.bias"] = rnd(E, mean=1), rnd(E)
    return t, {"model_type": "gpt_neo", "vocab_size": V, "max_position_embeddings": POS, "hidden_size": E,
               "num_layers": L, "num_heads": H, "intermediate_size": None, "window_size": 256,
               "attention_types": [[["global", "local"], L // 2]], "activation_function": "gelu_new",
               "layer_norm_epsilon": 1e-5}


def phi(rnd):
    V, t = 26000, {}
    t["model.embed_tokens.weight"] = rnd(V, E)
    for l in range(L):
        p = f"model.layers.{l}."
        t[p + "input_layernorm.weight"], t[p + "input_layernorm.bias"] = rnd(E, mean=1), rnd(E)
        for n in ("q_proj", "k_proj", "v_proj", "dense"):
            t[p + "self_attn." + n + ".weight"], t[p + "self_attn." + n + ".bias"] = rnd(E, E), rnd(E)
        t[p + "mlp.fc1.weight"], t[p + "mlp.fc1.bias"] = rnd(I, E), rnd(I)
        t[p + "mlp.fc2.weight"], t[p + "mlp.fc2.bias"] = rnd(E, I), rnd(E)
    t["model.final_layernorm.weight"], t["model.final_layernorm.bias"] = rnd(E, mean=1), rnd(E)
    t["lm_head.weight"], t["lm_head.bias"] = rnd(V, E), rnd(V)
    return t, {"model_type": "phi", "vocab_size": V, "hidden_size": E, "intermediate_size": I,
               "num_hidden_layers": L, "num_attention_heads": H, "max_position_embeddings": POS,
               "partial_rotary_factor": 0.5, "rope_theta": 10000.0, "hidden_act": "gelu_new", "layer_norm_eps": 1e-5,
               "qk_layernorm": False, "tie_word_embeddings": False}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=["gpt_neox", "gptj", "gpt_neo", "phi"])
    ap.add_argument("folder")
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)

    def rnd(*shape, mean=0.0):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02 + mean).astype(np.float32)

    tensors, config = {"gpt_neox": neox, "gptj": gptj, "gpt_neo": gpt_neo, "phi": phi}[a.family](rnd)
    os.makedirs(a.folder, exist_ok=True)
    with open(os.path.join(a.folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    items = list(tensors.items())
    if a.shards <= 1:
        write_safetensors(os.path.join(a.folder, "model.safetensors"), items, a.dtype)
        return
    per = -(-len(items) // a.shards)  # contiguous runs of tensors per shard
    weight_map = {}
    for i in range(a.shards):
        shard = items[i * per:(i + 1) * per]
        name = f"model-{i + 1:05d}-of-{a.shards:05d}.safetensors"
        write_safetensors(os.path.join(a.folder, name), shard, a.dtype)
        weight_map.update({n: name for n, _ in shard})
    with open(os.path.join(a.folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)


if __name__ == "__main__":
    main()
