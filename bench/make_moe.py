#!/usr/bin/env python3
"""Random checkpoints of the mixture-of-experts decoders, for open and forward timings.

  python3 bench/make_moe.py FAMILY DIR [--dtype F32|F16|BF16] [--fused]

FAMILY: mixtral, qwen2_moe, olmoe. The shape of make_checkpoint.py's "llama --size 500mb" for the
attention (12 layers, hidden 768, 12 query heads over 4 kv heads of 64 dims, vocab 32000, untied
head) with experts whose chosen ones add up to the Llama's MLP width of 2048 per token: Mixtral 8
experts of 1024, top 2; Qwen2-MoE 8 experts of 512, top 2, and a shared expert of 1024 (layer 11
dense, 2048 wide); OLMoE 16 experts of 512, top 4. Hub per-expert names, or with --fused the
layout newer transformers writes (mlp.experts.gate_up_proj / down_proj). Needs only numpy; writes
through make_checkpoint.py's writer.
"""
import argparse
import importlib.util
import json
import os

import numpy as np

_spec = importlib.util.spec_from_file_location("make_checkpoint", os.path.join(os.path.dirname(__file__), "make_checkpoint.py"))
mc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mc)

L, E, H, G, D, V, P = 12, 768, 12, 4, 64, 32000, 2048
SHAPES = {"mixtral": (8, 1024, 2), "qwen2_moe": (8, 512, 2), "olmoe": (16, 512, 4)}  # experts, width, top-k


def build(family, rnd, fused):
    experts, inner, top = SHAPES[family]
    t, pre = {}, "model."
    t[pre + "embed_tokens.weight"] = rnd(V, E)
    dense = [11] if family == "qwen2_moe" else []
    for l in range(L):
        p = f"{pre}layers.{l}."
        t[p + "input_layernorm.weight"] = rnd(E, mean=1)
        t[p + "post_attention_layernorm.weight"] = rnd(E, mean=1)
        t[p + "self_attn.q_proj.weight"] = rnd(H * D, E)
        t[p + "self_attn.k_proj.weight"] = rnd(G * D, E)
        t[p + "self_attn.v_proj.weight"] = rnd(G * D, E)
        t[p + "self_attn.o_proj.weight"] = rnd(E, H * D)
        if family == "qwen2_moe":
            for x in "qkv":
                t[p + f"self_attn.{x}_proj.bias"] = rnd((H if x == "q" else G) * D)
        if family == "olmoe":
            t[p + "self_attn.q_norm.weight"] = rnd(H * D, mean=1)
            t[p + "self_attn.k_norm.weight"] = rnd(G * D, mean=1)
        if l in dense:
            t[p + "mlp.gate_proj.weight"] = rnd(2048, E)
            t[p + "mlp.up_proj.weight"] = rnd(2048, E)
            t[p + "mlp.down_proj.weight"] = rnd(E, 2048)
            continue
        block = p + ("block_sparse_moe." if family == "mixtral" and not fused else "mlp.")
        t[block + "gate.weight"] = rnd(experts, E, scale=0.2)
        if fused:
            t[block + "experts.gate_up_proj"] = rnd(experts, 2 * inner, E)
            t[block + "experts.down_proj"] = rnd(experts, E, inner)
        else:
            names = ("w1", "w3", "w2") if family == "mixtral" else ("gate_proj", "up_proj", "down_proj")
            for e in range(experts):
                t[f"{block}experts.{e}.{names[0]}.weight"] = rnd(inner, E)
                t[f"{block}experts.{e}.{names[1]}.weight"] = rnd(inner, E)
                t[f"{block}experts.{e}.{names[2]}.weight"] = rnd(E, inner)
        if family == "qwen2_moe":
            for n in ("gate_proj", "up_proj"):
                t[f"{block}shared_expert.{n}.weight"] = rnd(1024, E)
            t[f"{block}shared_expert.down_proj.weight"] = rnd(E, 1024)
            t[f"{block}shared_expert_gate.weight"] = rnd(1, E)
    t[pre + "norm.weight"] = rnd(E, mean=1)
    t["lm_head.weight"] = rnd(V, E)
    config = {"model_type": family, "vocab_size": V, "hidden_size": E, "intermediate_size": 2048 if dense else inner,
              "num_hidden_layers": L, "num_attention_heads": H, "num_key_value_heads": G,
              "max_position_embeddings": P, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
              "tie_word_embeddings": False, "hidden_act": "silu", "num_experts_per_tok": top}
    if family == "mixtral":
        config.update(num_local_experts=experts, sliding_window=None)
    else:
        config.update(num_experts=experts, norm_topk_prob=family == "olmoe")
    if family == "qwen2_moe":
        config.update(moe_intermediate_size=inner, shared_expert_intermediate_size=1024, mlp_only_layers=dense)
    return t, config


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=sorted(SHAPES))
    ap.add_argument("folder")
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--fused", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    rnd = lambda *shape, mean=0.0, scale=0.02: (mean + scale * rng.standard_normal(shape)).astype(np.float32)
    tensors, config = build(a.family, rnd, a.fused)
    os.makedirs(a.folder, exist_ok=True)
    with open(os.path.join(a.folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    mc.write_safetensors(os.path.join(a.folder, "model.safetensors"), sorted(tensors.items()), a.dtype)


if __name__ == "__main__":
    main()
