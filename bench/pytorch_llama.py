#!/usr/bin/python3
"""PyTorch-eager reference for `attnscope-cli bench` on a Llama checkpoint (docs/benchmarks.md, long inputs).

  /usr/bin/python3 bench/make_checkpoint.py llama DIR --size 500mb --positions 8192
  /usr/bin/python3 bench/pytorch_llama.py DIR --seq 4096 [--repeat 3] [--threads 1] [--device cuda]

Runs what Hugging Face's eager Llama attention does (output_attentions-style: the whole
[heads, n, n] score tensor per layer, a [n, n] causal mask, softmax in float32, repeat_kv for
grouped-query heads) and what attnscope's forward does beside it (RMSNorm, rotary, SiLU MLP, Q/K
kept per layer, next-token logits of the last position). Prints time and the process's peak RSS
(on a GPU: the peak of PyTorch's allocated GPU memory too).
Uses Debian's python3-torch (LibTorch 1.13 on the same OpenBLAS as AttnScope); --device cuda on a
GPU machine's PyTorch (tests/gpu/run.sh).
"""
import argparse
import json
import os
import resource
import struct
import time

import numpy as np
import torch
import torch.nn.functional as F


def load(folder):
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", "write the checkpoint with --dtype F32"
        b, e = info["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[b:e], dtype=np.float32).reshape(info["shape"]).copy())
    return out, json.load(open(os.path.join(folder, "config.json")))


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    a, b = x.chunk(2, -1)
    return torch.cat((-b, a), -1)


@torch.inference_mode()
def forward(w, cfg, ids):
    E, H, G = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, n, eps, dev = E // H, ids.numel(), cfg["rms_norm_eps"], ids.device
    inv = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, d, 2, dtype=torch.float32, device=dev) / d))
    ang = torch.outer(torch.arange(n, dtype=torch.float32, device=dev), inv)
    cos, sin = torch.cat((ang, ang), -1).cos(), torch.cat((ang, ang), -1).sin()
    x = w["model.embed_tokens.weight"][ids]
    mask = torch.full((n, n), float("-inf"), device=dev).triu_(1)
    captured = []
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = (h @ w[p + "self_attn.q_proj.weight"].t()).view(n, H, d).transpose(0, 1)
        k = (h @ w[p + "self_attn.k_proj.weight"].t()).view(n, G, d).transpose(0, 1)
        v = (h @ w[p + "self_attn.v_proj.weight"].t()).view(n, G, d).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        kr, vr = k.repeat_interleave(H // G, 0), v.repeat_interleave(H // G, 0)
        a = torch.softmax(torch.bmm(q, kr.transpose(1, 2)) / (d ** 0.5) + mask, -1, dtype=torch.float32)
        ctx = torch.bmm(a, vr).transpose(0, 1).reshape(n, E)
        x = x + ctx @ w[p + "self_attn.o_proj.weight"].t()
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + (F.silu(h @ w[p + "mlp.gate_proj.weight"].t()) * (h @ w[p + "mlp.up_proj.weight"].t())) @ w[p + "mlp.down_proj.weight"].t()
        captured.append((q, k))
    last = rms_norm(x[-1:], w["model.norm.weight"], eps)
    return (last @ w["lm_head.weight"].t()).cpu(), captured  # the logits on the host: the GPU's work is done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (1 is fastest with OpenBLAS here)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    w, cfg = load(a.folder)
    w = {name: t.to(a.device) for name, t in w.items()}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ids = torch.randint(0, cfg["vocab_size"], (a.seq,), generator=torch.Generator().manual_seed(0)).to(a.device)
    times = []
    for r in range(a.warmup + a.repeat):
        t0 = time.perf_counter()
        forward(w, cfg, ids)
        if r >= a.warmup:
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    gpu = ""
    if a.device.startswith("cuda"):
        gpu = f"; peak GPU memory allocated {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB"
    print(f"pytorch eager llama forward+capture, {a.seq} tokens on {a.device}, {torch.get_num_threads()} intra-op threads: "
          f"median {times[len(times) // 2]:.0f} ms, min {times[0]:.0f} ms over {a.repeat} runs; "
          f"peak RSS {peak:.0f} MiB ({before:.0f} MiB after loading the weights){gpu}")


if __name__ == "__main__":
    main()
