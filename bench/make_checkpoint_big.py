#!/usr/bin/env python3
"""A 7-9B-shaped BF16 checkpoint written in seconds, for the big-model benchmarks (issue 14).

  python3 bench/make_checkpoint_big.py DIR [--shape llama3-8b|mistral-7b|gemma2-9b] [--shards N]

Every tensor is cut from one 64 MiB block of random BF16 values (normal, std 0.02; norm weights
near 1, or near 0 for Gemma's (1 + w) norms), repeated, so no 16 GB of random numbers are drawn:
the maps and logits mean nothing, the shapes, dtypes and bytes are a real checkpoint's. Writes
safetensors shards of at most ~5 GB with model.safetensors.index.json, as Hugging Face does, and a
config.json. Needs only numpy.
"""
import argparse
import json
import os
import struct

import numpy as np

SHAPES = {
    # layers, hidden, heads, kv heads, head dim, MLP, vocab, positions, model_type
    "llama3-1b": dict(L=16, E=2048, H=32, G=8, D=64, I=8192, V=128256, P=8192, type="llama"),  # mid-sized (GGUF bench)
    "llama3-8b": dict(L=32, E=4096, H=32, G=8, D=128, I=14336, V=128256, P=8192, type="llama"),
    "mistral-7b": dict(L=32, E=4096, H=32, G=8, D=128, I=14336, V=32000, P=32768, type="mistral"),
    "gemma2-9b": dict(L=42, E=3584, H=16, G=8, D=256, I=14336, V=256000, P=8192, type="gemma2"),
}

BLOCK = 32 * 1024 * 1024  # BF16 values in the repeated block (64 MiB)


def bf16_block(rng, count, mean, std):
    f = (rng.standard_normal(count, dtype=np.float32) * std + mean).astype(np.float32)
    return (f.view(np.uint32) >> 16).astype(np.uint16)  # truncation: fine for random data


def tensors(s):
    """(name, shape, kind) in file order; kind 'w' = weight matrix, 'n' = norm."""
    gemma = s["type"] == "gemma2"
    E, H, G, D, I, V = s["E"], s["H"], s["G"], s["D"], s["I"], s["V"]
    out = [("model.embed_tokens.weight", (V, E), "w")]
    for l in range(s["L"]):
        p = f"model.layers.{l}."
        out += [(p + "input_layernorm.weight", (E,), "n"),
                (p + "self_attn.q_proj.weight", (H * D, E), "w"),
                (p + "self_attn.k_proj.weight", (G * D, E), "w"),
                (p + "self_attn.v_proj.weight", (G * D, E), "w"),
                (p + "self_attn.o_proj.weight", (E, H * D), "w"),
                (p + "post_attention_layernorm.weight", (E,), "n")]
        if gemma:
            out += [(p + "pre_feedforward_layernorm.weight", (E,), "n"),
                    (p + "post_feedforward_layernorm.weight", (E,), "n")]
        out += [(p + "mlp.gate_proj.weight", (I, E), "w"),
                (p + "mlp.up_proj.weight", (I, E), "w"),
                (p + "mlp.down_proj.weight", (E, I), "w")]
    out.append(("model.norm.weight", (E,), "n"))
    if not gemma:  # Gemma-2 ties its head to the embedding
        out.append(("lm_head.weight", (V, E), "w"))
    return out


def config(name, s):
    c = {"model_type": s["type"], "vocab_size": s["V"], "hidden_size": s["E"], "intermediate_size": s["I"],
         "num_hidden_layers": s["L"], "num_attention_heads": s["H"], "num_key_value_heads": s["G"],
         "head_dim": s["D"], "max_position_embeddings": s["P"], "rms_norm_eps": 1e-5,
         "torch_dtype": "bfloat16", "rope_theta": 500000.0 if name.startswith("llama3") else 10000.0,
         "tie_word_embeddings": s["type"] == "gemma2"}
    if s["type"] == "gemma2":
        c.update({"hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 256, "sliding_window": 4096,
                  "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0})
    if s["type"] == "mistral":
        c["sliding_window"] = 4096
    return c


def write_shard(path, entries, blocks):
    header, offset = {}, 0
    for name, shape, kind in entries:
        n = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for name, shape, kind in entries:
            left, block = int(np.prod(shape)), blocks[kind]
            while left > 0:  # the block again and again; a tensor ends wherever it ends
                take = min(left, block.size)
                f.write(block[:take].tobytes())
                left -= take
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="llama3-8b")
    ap.add_argument("--shard-gb", type=float, default=5.0)
    args = ap.parse_args()
    s = SHAPES[args.shape]
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(0)
    gemma = s["type"] == "gemma2"
    blocks = {"w": bf16_block(rng, BLOCK, 0.0, 0.02), "n": bf16_block(rng, 1 << 16, 0.0 if gemma else 1.0, 0.02)}

    shards, current, size = [], [], 0
    for t in tensors(s):
        n = int(np.prod(t[1])) * 2
        if current and size + n > args.shard_gb * 1e9:
            shards.append(current)
            current, size = [], 0
        current.append(t)
        size += n
    shards.append(current)
    weight_map, total = {}, 0
    for i, entries in enumerate(shards):
        file = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        write_shard(os.path.join(args.out, file), entries, blocks)
        for name, shape, _ in entries:
            weight_map[name] = file
            total += int(np.prod(shape)) * 2
    with open(os.path.join(args.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config(args.shape, s), f, indent=1)
    print(f"{args.out}: {args.shape}, {total / 1e9:.1f} GB in {len(shards)} shards")


if __name__ == "__main__":
    main()
