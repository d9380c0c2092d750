#!/usr/bin/python3
"""PyTorch-eager reference for `attnscope-cli bench` (see docs/benchmarks.md).

  /usr/bin/python3 bench/pytorch_gpt2.py make DIR            # random GPT-2-small checkpoint folder
  /usr/bin/python3 bench/pytorch_gpt2.py bench DIR --seq 512  # time the same forward in PyTorch eager

Uses Debian's python3-torch (same LibTorch 1.13 and BLAS as AttnScope). The forward does what
attnscope's does: all layers, Q/K kept per layer, next-token logits of the last position only.
"""
import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def make(folder, layers=12, heads=12, embd=768, vocab=50257, positions=1024, seed=0):
    os.makedirs(folder, exist_ok=True)
    g = torch.Generator().manual_seed(seed)
    t = {}
    def rnd(*shape, std=0.02, mean=0.0):
        return (torch.randn(*shape, generator=g) * std + mean).float()
    t["wte.weight"] = rnd(vocab, embd)
    t["wpe.weight"] = rnd(positions, embd, std=0.01)
    for l in range(layers):
        p = f"h.{l}."
        t[p + "ln_1.weight"] = rnd(embd, mean=1.0); t[p + "ln_1.bias"] = rnd(embd)
        t[p + "attn.c_attn.weight"] = rnd(embd, 3 * embd); t[p + "attn.c_attn.bias"] = rnd(3 * embd)
        t[p + "attn.c_proj.weight"] = rnd(embd, embd); t[p + "attn.c_proj.bias"] = rnd(embd)
        t[p + "ln_2.weight"] = rnd(embd, mean=1.0); t[p + "ln_2.bias"] = rnd(embd)
        t[p + "mlp.c_fc.weight"] = rnd(embd, 4 * embd); t[p + "mlp.c_fc.bias"] = rnd(4 * embd)
        t[p + "mlp.c_proj.weight"] = rnd(4 * embd, embd); t[p + "mlp.c_proj.bias"] = rnd(embd)
    t["ln_f.weight"] = rnd(embd, mean=1.0); t["ln_f.bias"] = rnd(embd)
    header, offset = {}, 0
    for name, x in t.items():
        n = x.numel() * 4
        header["transformer." + name] = {"dtype": "F32", "shape": list(x.shape), "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    raw += b" " * ((8 - len(raw) % 8) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for x in t.values():
            f.write(x.numpy().tobytes())
    config = {"model_type": "gpt2", "vocab_size": vocab, "n_positions": positions, "n_embd": embd,
              "n_head": heads, "n_layer": layers, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def load(folder):
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        out[name.removeprefix("transformer.")] = torch.from_numpy(np.frombuffer(data[b:e], dtype=np.float32).reshape(info["shape"]).copy())
    return out, json.load(open(os.path.join(folder, "config.json")))


@torch.inference_mode()
def forward(w, cfg, ids):
    E, H = cfg["n_embd"], cfg["n_head"]
    d, n, eps = E // H, ids.numel(), cfg["layer_norm_epsilon"]
    x = w["wte.weight"][ids] + w["wpe.weight"][:n]
    mask = torch.full((n, n), float("-inf")).triu_(1)
    captured = []
    for l in range(cfg["n_layer"]):
        p = f"h.{l}."
        h = F.layer_norm(x, (E,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        q, k, v = torch.addmm(w[p + "attn.c_attn.bias"], h, w[p + "attn.c_attn.weight"]).split(E, 1)
        q, k, v = (t.view(n, H, d).transpose(0, 1).contiguous() for t in (q, k, v))
        a = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d) + mask, -1)
        ctx = torch.bmm(a, v).transpose(0, 1).reshape(n, E)
        x = x + torch.addmm(w[p + "attn.c_proj.bias"], ctx, w[p + "attn.c_proj.weight"])
        h = F.layer_norm(x, (E,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        m = F.gelu(torch.addmm(w[p + "mlp.c_fc.bias"], h, w[p + "mlp.c_fc.weight"]), approximate="tanh")
        x = x + torch.addmm(w[p + "mlp.c_proj.bias"], m, w[p + "mlp.c_proj.weight"])
        captured.append((q, k))
    last = F.layer_norm(x[-1:], (E,), w["ln_f.weight"], w["ln_f.bias"], eps)
    return last @ w["wte.weight"].t(), captured


def bench(folder, seq, repeat, warmup):
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", os.cpu_count())))
    w, cfg = load(folder)
    ids = torch.randint(0, cfg["vocab_size"], (seq,), generator=torch.Generator().manual_seed(0))
    times = []
    for r in range(warmup + repeat):
        t0 = time.perf_counter()
        forward(w, cfg, ids)
        if r >= warmup:
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    print(f"pytorch eager forward+capture, {seq} tokens, {torch.get_num_threads()} threads: "
          f"median {times[len(times) // 2]:.1f} ms, min {times[0]:.1f} ms over {repeat} runs")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["make", "bench"])
    ap.add_argument("folder")
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    a = ap.parse_args()
    if a.mode == "make":
        make(a.folder)
    else:
        bench(a.folder, a.seq, a.repeat, a.warmup)
