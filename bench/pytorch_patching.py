#!/usr/bin/python3
"""The PyTorch-eager peer of `attnscope-cli patch --what heads --timing` (docs/benchmarks.md).

  /usr/bin/python3 bench/pytorch_gpt2.py make DIR               # a random GPT-2-small folder
  /usr/bin/python3 bench/pytorch_patching.py DIR --seq 32 [--repeat 3]

Per-head activation patching the way a hook loop does it (TransformerLens's run_with_hooks): a
clean run keeping every head's output before c_proj, a corrupt run, then for each of the L x H
heads one whole forward of the corrupt input with that head's output replaced by the clean one,
the logit difference read at the last position. Same GPT-2 forward as bench/pytorch_gpt2.py, on
Debian's python3-torch (LibTorch 1.13, the same OpenBLAS as AttnScope). Prints the whole job's
median time, both logit differences and the sum of the scores, to compare with AttnScope's
patch.json and patch.npy on the same inputs (clean ids 3..34, corrupt: position 16 set to 7).
"""
import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_gpt2 import load  # noqa: E402


@torch.inference_mode()
def run(w, cfg, ids, keep=None, patch=None):
    """Final-position logits; keep: a list that receives each layer's context [n, E];
    patch: (layer, head, clean contexts) replacing that head's columns."""
    E, H = cfg["n_embd"], cfg["n_head"]
    d, n, eps = E // H, ids.numel(), cfg["layer_norm_epsilon"]
    x = w["wte.weight"][ids] + w["wpe.weight"][:n]
    mask = torch.full((n, n), float("-inf")).triu_(1)
    for l in range(cfg["n_layer"]):
        p = f"h.{l}."
        h = F.layer_norm(x, (E,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        q, k, v = torch.addmm(w[p + "attn.c_attn.bias"], h, w[p + "attn.c_attn.weight"]).split(E, 1)
        q, k, v = (t.view(n, H, d).transpose(0, 1) for t in (q, k, v))
        a = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d) + mask, -1)
        ctx = torch.bmm(a, v).transpose(0, 1).reshape(n, E)
        if keep is not None:
            keep.append(ctx)
        if patch is not None and patch[0] == l:
            ctx = ctx.clone()
            ctx[:, patch[1] * d:(patch[1] + 1) * d] = patch[2][l][:, patch[1] * d:(patch[1] + 1) * d]
        x = x + torch.addmm(w[p + "attn.c_proj.bias"], ctx, w[p + "attn.c_proj.weight"])
        h = F.layer_norm(x, (E,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        m = F.gelu(torch.addmm(w[p + "mlp.c_fc.bias"], h, w[p + "mlp.c_fc.weight"]), approximate="tanh")
        x = x + torch.addmm(w[p + "mlp.c_proj.bias"], m, w[p + "mlp.c_proj.weight"])
    last = F.layer_norm(x[-1:], (E,), w["ln_f.weight"], w["ln_f.bias"], eps)
    return (last @ w["wte.weight"].t())[0]


def job(w, cfg, clean, corrupt, token, minus):
    ld = lambda z: float(z[token] - z[minus])
    contexts = []
    ld_clean = ld(run(w, cfg, clean, keep=contexts))
    ld_corrupt = ld(run(w, cfg, corrupt))
    scores = [[(ld(run(w, cfg, corrupt, patch=(l, h, contexts))) - ld_corrupt) / (ld_clean - ld_corrupt)
               for h in range(cfg["n_head"])] for l in range(cfg["n_layer"])]
    return scores, ld_clean, ld_corrupt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--token", type=int, default=9)
    ap.add_argument("--minus", type=int, default=4)
    a = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", os.cpu_count())))
    w, cfg = load(a.folder)
    clean = torch.arange(a.seq) % 1000 + 3
    corrupt = clean.clone()
    corrupt[a.seq // 2] = 7
    job(w, cfg, clean, corrupt, a.token, a.minus)  # warm-up
    times = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        scores, ld_clean, ld_corrupt = job(w, cfg, clean, corrupt, a.token, a.minus)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    n = cfg["n_layer"] * cfg["n_head"]
    print(f"pytorch eager hook loop: per-head patching, {a.seq} tokens, {n} patches, {torch.get_num_threads()} "
          f"threads: median {times[len(times) // 2]:.1f} ms over {a.repeat} runs; LD clean {ld_clean:.4f}, corrupt "
          f"{ld_corrupt:.4f}, score sum {sum(map(sum, scores)):.4f}")


if __name__ == "__main__":
    main()
