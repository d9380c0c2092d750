#!/usr/bin/env python3
"""Random ~500 MB checkpoints of the RMSNorm decoder families, for open and forward timings.

  python3 bench/make_rms_family.py FAMILY DIR [--dtype F32|F16|BF16] [--shards N]

FAMILY: gemma, gemma2, gemma3_text, qwen3, olmo2, phi3. Every family has the same shape as
make_checkpoint.py's "llama --size 500mb" (12 layers, hidden 768, MLP 2048, 12 query heads over 4
kv heads of 64 dims, vocab 32000, untied head), so forward times compare at equal FLOPs; each
carries its own tensor names, norms and config keys (Gemma-2/3 with windows of 256 on their local
layers and Gemma-2's soft-caps). Needs only numpy; writes through make_checkpoint.py's writer.
"""
import argparse
import importlib.util
import json
import os

import numpy as np

_spec = importlib.util.spec_from_file_location("make_checkpoint", os.path.join(os.path.dirname(__file__), "make_checkpoint.py"))
mc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mc)

L, E, I, H, G, D, V, P = 12, 768, 2048, 12, 4, 64, 32000, 2048


def build(family, rnd):
    t, pre = {}, "model."
    gemma = family.startswith("gemma")
    norm_mean = 0.0 if gemma else 1.0  # Gemma's norms weigh by (1 + w)
    t[pre + "embed_tokens.weight"] = rnd(V, E)
    for l in range(L):
        p = f"{pre}layers.{l}."
        if family != "olmo2":
            t[p + "input_layernorm.weight"] = rnd(E, mean=norm_mean)
        t[p + "post_attention_layernorm.weight"] = rnd(E, mean=norm_mean)
        if family in ("gemma2", "gemma3_text"):
            t[p + "pre_feedforward_layernorm.weight"] = rnd(E, mean=norm_mean)
        if family in ("gemma2", "gemma3_text", "olmo2"):
            t[p + "post_feedforward_layernorm.weight"] = rnd(E, mean=norm_mean)
        if family == "phi3":
            t[p + "self_attn.qkv_proj.weight"] = rnd((H + 2 * G) * D, E)
            t[p + "mlp.gate_up_proj.weight"] = rnd(2 * I, E)
        else:
            t[p + "self_attn.q_proj.weight"] = rnd(H * D, E)
            t[p + "self_attn.k_proj.weight"] = rnd(G * D, E)
            t[p + "self_attn.v_proj.weight"] = rnd(G * D, E)
            t[p + "mlp.gate_proj.weight"] = rnd(I, E)
            t[p + "mlp.up_proj.weight"] = rnd(I, E)
        t[p + "self_attn.o_proj.weight"] = rnd(E, H * D)
        t[p + "mlp.down_proj.weight"] = rnd(E, I)
        if family in ("gemma3_text", "qwen3"):
            t[p + "self_attn.q_norm.weight"] = rnd(D, mean=norm_mean)
            t[p + "self_attn.k_norm.weight"] = rnd(D, mean=norm_mean)
        if family == "olmo2":
            t[p + "self_attn.q_norm.weight"] = rnd(H * D, mean=1)
            t[p + "self_attn.k_norm.weight"] = rnd(G * D, mean=1)
    t[pre + "norm.weight"] = rnd(E, mean=norm_mean)
    t["lm_head.weight"] = rnd(V, E)
    config = {"model_type": family, "vocab_size": V, "hidden_size": E, "intermediate_size": I,
              "num_hidden_layers": L, "num_attention_heads": H, "num_key_value_heads": G,
              "max_position_embeddings": P, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
              "tie_word_embeddings": False, "hidden_act": "silu"}
    if family != "olmo2" and family != "phi3":
        config["head_dim"] = D
    if gemma:
        config["hidden_activation"] = "gelu_pytorch_tanh"
    if family == "gemma2":
        config.update(query_pre_attn_scalar=D, sliding_window=256, attn_logit_softcapping=50.0,
                      final_logit_softcapping=30.0)
    if family == "gemma3_text":
        config.update(query_pre_attn_scalar=D, sliding_window=256, sliding_window_pattern=6,
                      rope_local_base_freq=10000.0, rope_theta=1e6)
    return t, config


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=["gemma", "gemma2", "gemma3_text", "qwen3", "olmo2", "phi3"])
    ap.add_argument("folder")
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--shards", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    rnd = lambda *shape, mean=0.0: (mean + 0.02 * rng.standard_normal(shape)).astype(np.float32)
    tensors, config = build(a.family, rnd)
    os.makedirs(a.folder, exist_ok=True)
    with open(os.path.join(a.folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    items = sorted(tensors.items())
    if a.shards <= 1:
        mc.write_safetensors(os.path.join(a.folder, "model.safetensors"), items, a.dtype)
        return
    shards, weight_map = [items[i::a.shards] for i in range(a.shards)], {}
    for i, shard in enumerate(shards):
        name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        mc.write_safetensors(os.path.join(a.folder, name), shard, a.dtype)
        weight_map.update({n: name for n, _ in shard})
    with open(os.path.join(a.folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)


if __name__ == "__main__":
    main()
