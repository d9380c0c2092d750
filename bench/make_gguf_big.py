#!/usr/bin/env python3
"""A GGUF file of make_checkpoint_big.py's shapes, quantised Q4_K (output.weight Q6_K, norms F32),
for the GGUF benchmarks (issue 39).

  python3 bench/make_gguf_big.py FILE.gguf [--shape llama3-1b|llama3-8b|...] [--tokenizer]

Every matrix is cut from one 64 MiB run of random blocks with sane scales (fp16 d ~ 1e-3), so the
file is written in seconds; its weights mean nothing, its shapes, block types and bytes are a real
Q4_K_M file's. Tensors and metadata are laid out as llama.cpp's convert_hf_to_gguf.py writes them
(general.alignment 32). Needs only numpy.
"""
import argparse
import os
import struct

import numpy as np

from make_checkpoint_big import SHAPES

TYPES = {"q4_k": (12, 256, 144), "q6_k": (14, 256, 210), "f32": (0, 1, 4)}
RUN = 64 * 1024 * 1024


def s(text):
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, typ, payload):
    return s(key) + struct.pack("<I", typ) + payload


def u32(key, v):
    return kv(key, 4, struct.pack("<I", v))


def f32(key, v):
    return kv(key, 6, struct.pack("<f", v))


def strs(key, values):
    return kv(key, 9, struct.pack("<IQ", 8, len(values)) + b"".join(s(v) for v in values))


def i32s(key, values):
    return kv(key, 9, struct.pack("<IQ", 5, len(values)) + np.asarray(values, dtype="<i4").tobytes())


def byte_chars():
    """GPT-2's bytes_to_unicode: the 256 one-character tokens of a byte-level BPE."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def tokenizer_meta(vocab, rng):
    """A Llama-3-style byte-level BPE of `vocab` tokens: the 256 byte characters, merges that each
    join two existing tokens into a new one (vocab - 512 of them, lengths kept short), then 256
    control tokens as Llama 3 reserves. Its tokens mean nothing; its sizes (strings, merges) are
    what tokenizer construction costs on a real 128k file (Llama 3 lists 280k merges, several per
    token; this one lists one per token)."""
    tokens = byte_chars()
    seen = set(tokens)
    merges = []
    regular = vocab - 256
    while len(tokens) < regular:
        a = tokens[int(rng.integers(0, len(tokens)) * rng.random() ** 2)]
        b = tokens[int(rng.integers(0, len(tokens)) * rng.random() ** 2)]
        t = a + b
        if t in seen or len(t) > 16:
            continue
        seen.add(t)
        tokens.append(t)
        merges.append(a + " " + b)
    types = [1] * len(tokens) + [3] * 256
    tokens += [f"<|reserved_special_token_{i}|>" for i in range(256)]
    return [kv("tokenizer.ggml.model", 8, s("gpt2")), kv("tokenizer.ggml.pre", 8, s("llama-bpe")),
            strs("tokenizer.ggml.tokens", tokens), i32s("tokenizer.ggml.token_type", types),
            strs("tokenizer.ggml.merges", merges), u32("tokenizer.ggml.bos_token_id", regular),
            u32("tokenizer.ggml.eos_token_id", regular + 1)]


def blocks(rng, kind):
    _, _, size = TYPES[kind]
    n = RUN // size
    b = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    d = np.full(n, 1e-3, dtype=np.float16).view(np.uint8).reshape(n, 2)
    if kind == "q4_k":
        b[:, 0:2] = d
        b[:, 2:4] = d
    elif kind == "q6_k":
        b[:, 208:210] = d
    return b.reshape(-1)


def tensors(sh):
    E, H, G, D, I, V = sh["E"], sh["H"], sh["G"], sh["D"], sh["I"], sh["V"]
    out = [("token_embd.weight", (V, E), "q4_k")]
    for l in range(sh["L"]):
        p = f"blk.{l}."
        out += [(p + "attn_norm.weight", (E,), "f32"), (p + "attn_q.weight", (H * D, E), "q4_k"),
                (p + "attn_k.weight", (G * D, E), "q4_k"), (p + "attn_v.weight", (G * D, E), "q4_k"),
                (p + "attn_output.weight", (E, H * D), "q4_k"), (p + "ffn_norm.weight", (E,), "f32"),
                (p + "ffn_gate.weight", (I, E), "q4_k"), (p + "ffn_up.weight", (I, E), "q4_k"),
                (p + "ffn_down.weight", (E, I), "q4_k")]
    out += [("output_norm.weight", (E,), "f32"), ("output.weight", (V, E), "q6_k")]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="llama3-8b")
    ap.add_argument("--tokenizer", action="store_true",
                    help="add a synthetic Llama-3-style BPE tokenizer of the shape's vocabulary (tokenizer.ggml.*)")
    args = ap.parse_args()
    sh = SHAPES[args.shape]
    if sh["type"] not in ("llama", "mistral"):
        raise SystemExit("only the llama-architecture shapes")
    rng = np.random.default_rng(0)
    runs = {k: blocks(rng, k) for k in ("q4_k", "q6_k")}
    runs["f32"] = np.ones(1 << 16, dtype=np.float32).view(np.uint8)
    a = "llama."
    meta = [kv("general.architecture", 8, s("llama")), kv("general.name", 8, s(args.shape)),
            u32("general.alignment", 32), u32("general.file_type", 15),
            u32(a + "context_length", sh["P"]), u32(a + "embedding_length", sh["E"]),
            u32(a + "block_count", sh["L"]), u32(a + "feed_forward_length", sh["I"]),
            u32(a + "attention.head_count", sh["H"]), u32(a + "attention.head_count_kv", sh["G"]),
            u32(a + "rope.dimension_count", sh["D"]), f32(a + "rope.freq_base", 500000.0),
            f32(a + "attention.layer_norm_rms_epsilon", 1e-5)]
    if args.tokenizer:
        meta += tokenizer_meta(sh["V"], rng)
    ts = tensors(sh)
    infos, sizes, at = b"", [], 0
    for name, shape, kind in ts:
        typ, elems, size = TYPES[kind]
        n = int(np.prod(shape)) // elems * size
        infos += s(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in reversed(shape))
        infos += struct.pack("<IQ", typ, at)
        sizes.append(n)
        at += n + (-n % 32)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(ts), len(meta)) + b"".join(meta) + infos
    head += b"\0" * (-len(head) % 32)
    with open(args.out + ".tmp", "wb") as f:
        f.write(head)
        for (name, shape, kind), n in zip(ts, sizes):
            run, left = runs[kind], n
            while left > 0:
                take = min(left, run.size)
                f.write(run[:take].tobytes())
                left -= take
            f.write(b"\0" * (-n % 32))
    os.replace(args.out + ".tmp", args.out)
    print(f"{args.out}: {args.shape} Q4_K, {os.path.getsize(args.out) / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
