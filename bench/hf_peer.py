#!/usr/bin/env python3
"""The PyTorch peer of `attnscope-cli bench` on a GPU: Hugging Face transformers on the same checkpoint.

  python3 bench/hf_peer.py DIR --seq 512,1024,4096 [--dtype F32|BF16] [--repeat 5] [--warmup 2]

DIR is a folder written by bench/make_checkpoint.py (gpt2 or llama). For each length it times one
forward of random token ids on the GPU in two ways: eager attention with output_attentions=True
(every layer's [heads, n, n] map kept, what AttnScope's forward + capture gives) and SDPA without
maps (the fastest attention transformers has, for reference). Times are CUDA-event medians; peak
memory is torch.cuda.max_memory_allocated. A length that does not fit in GPU memory says so.
Needs torch with CUDA and transformers (tests/gpu/run.sh runs it on the lent GPU).
"""
import argparse
import statistics

import torch
import transformers as tf


def load(folder, dtype, attention):
    kwargs = dict(attn_implementation=attention)
    try:
        return tf.AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, **kwargs).cuda().eval()
    except TypeError:  # transformers before 4.56 names it torch_dtype
        return tf.AutoModelForCausalLM.from_pretrained(folder, torch_dtype=dtype, **kwargs).cuda().eval()


@torch.inference_mode()
def time_forward(model, ids, maps, repeat, warmup):
    times = []
    for r in range(warmup + repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = model(ids, output_attentions=maps, use_cache=False)
        end.record()
        torch.cuda.synchronize()
        if maps:
            assert out.attentions is not None and len(out.attentions) > 0, "no maps returned"
        del out
        if r >= warmup:
            times.append(start.elapsed_time(end))
    return statistics.median(times), min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--seq", default="512,1024")
    ap.add_argument("--dtype", default="F32", choices=["F32", "BF16"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    a = ap.parse_args()
    dtype = {"F32": torch.float32, "BF16": torch.bfloat16}[a.dtype]
    # Plain float32 matrix products, as AttnScope's (no TF32 unless asked).
    torch.backends.cuda.matmul.allow_tf32 = False
    for attention, maps in (("eager", True), ("sdpa", False)):
        model = load(a.folder, dtype, attention)
        family = model.config.model_type
        for seq in map(int, a.seq.split(",")):
            ids = torch.randint(0, model.config.vocab_size, (1, seq), device="cuda")
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            what = f"transformers {attention}{' + output_attentions' if maps else ' (no maps)'}"
            try:
                median, best = time_forward(model, ids, maps, a.repeat, a.warmup)
                peak = torch.cuda.max_memory_allocated() / 2**20
                print(f"peer {what}: {family} {a.dtype} {seq} tokens on cuda: median {median:.1f} ms, min {best:.1f} ms"
                      f" over {a.repeat} runs; peak GPU memory allocated {peak:.0f} MiB", flush=True)
            except torch.OutOfMemoryError:
                print(f"peer {what}: {family} {a.dtype} {seq} tokens on cuda: out of GPU memory", flush=True)
                torch.cuda.empty_cache()
        del model
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
