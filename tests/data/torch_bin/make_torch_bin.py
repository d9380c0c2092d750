#!/usr/bin/python3
"""Writes the PyTorch checkpoints of tests/data/torch_bin with Debian's python3-torch (1.13).

Run once at development time (/usr/bin/python3 make_torch_bin.py, from this folder); the files are
committed, so the tests need no Python. Every .bin here has a safetensors twin written from the
same tensors by the small writer below (the format is 8 bytes of header length, a JSON header,
the raw bytes), so the C++ tests compare the two readers byte for byte.

  gpt2/          config.json + model.safetensors: a tiny GPT-2 (tied head, 2 layers)
  gpt2-zip/      the same state dict by torch.save (zip format, torch >= 1.6)
  gpt2-legacy/   the same by torch.save(..., _use_new_zipfile_serialization=False) (pre-1.6 format)
  gpt2-shards/   the same in two zip shards + pytorch_model.bin.index.json
  gpt2-bf16/, gpt2-bf16-zip/: the same weights in BF16, as safetensors and as a zip .bin
  The .bin state dicts also hold what real ones do and safetensors cannot: lm_head.weight sharing
  wte's storage, a bias that is a slice of a larger storage (storage offset 5), layer 0's causal
  mask as a bool buffer (left out by the reader) and layer 1's as float.
  dtypes.bin / dtypes-legacy.bin / dtypes.safetensors: F16, BF16, I64, a scalar and an empty tensor.
  (The legacy format's storage keys are memory addresses, so a rerun rewrites those files with other
  bytes and the same tensors.)
  transposed.bin: a non-contiguous tensor (refused by name); compressed.bin: dtypes.bin deflated.
"""
import json
import os
import struct
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, POS, EMBD, HEADS, LAYERS = 32, 16, 8, 2, 2
ST_DTYPE = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64"}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        raw = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": ST_DTYPE[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def gpt2_state():
    torch.manual_seed(39)
    sd = {}
    p = "transformer."
    sd[p + "wte.weight"] = torch.randn(VOCAB, EMBD) * 0.5
    sd[p + "wpe.weight"] = torch.randn(POS, EMBD) * 0.1
    for l in range(LAYERS):
        h = f"{p}h.{l}."
        sd[h + "ln_1.weight"] = 1 + 0.1 * torch.randn(EMBD)
        sd[h + "ln_1.bias"] = 0.1 * torch.randn(EMBD)
        mask = torch.tril(torch.ones(POS, POS)).view(1, 1, POS, POS)
        sd[h + "attn.bias"] = mask.bool() if l == 0 else mask
        sd[h + "attn.masked_bias"] = torch.tensor(-1e4)
        sd[h + "attn.c_attn.weight"] = torch.randn(EMBD, 3 * EMBD) * 0.4
        big = torch.randn(3 * EMBD + 5) * 0.1
        sd[h + "attn.c_attn.bias"] = big[5:] if l == 0 else big[:3 * EMBD].clone()
        sd[h + "attn.c_proj.weight"] = torch.randn(EMBD, EMBD) * 0.3
        sd[h + "attn.c_proj.bias"] = 0.1 * torch.randn(EMBD)
        sd[h + "ln_2.weight"] = 1 + 0.1 * torch.randn(EMBD)
        sd[h + "ln_2.bias"] = 0.1 * torch.randn(EMBD)
        sd[h + "mlp.c_fc.weight"] = torch.randn(EMBD, 4 * EMBD) * 0.3
        sd[h + "mlp.c_fc.bias"] = 0.1 * torch.randn(4 * EMBD)
        sd[h + "mlp.c_proj.weight"] = torch.randn(4 * EMBD, EMBD) * 0.2
        sd[h + "mlp.c_proj.bias"] = 0.1 * torch.randn(EMBD)
    sd[p + "ln_f.weight"] = 1 + 0.1 * torch.randn(EMBD)
    sd[p + "ln_f.bias"] = 0.1 * torch.randn(EMBD)
    sd["lm_head.weight"] = sd[p + "wte.weight"]  # tied: the same storage
    return sd


def folder(name, config):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    return d


def main():
    config = {"model_type": "gpt2", "vocab_size": VOCAB, "n_positions": POS, "n_embd": EMBD, "n_head": HEADS,
              "n_layer": LAYERS, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    sd = gpt2_state()
    plain = {k: v.clone() for k, v in sd.items() if v.dtype != torch.bool and k != "lm_head.weight"}
    write_safetensors(os.path.join(folder("gpt2", config), "model.safetensors"), plain)
    torch.save(sd, os.path.join(folder("gpt2-zip", config), "pytorch_model.bin"))
    torch.save(sd, os.path.join(folder("gpt2-legacy", config), "pytorch_model.bin"),
               _use_new_zipfile_serialization=False)

    shards = folder("gpt2-shards", config)
    names = list(sd)
    half = len(names) // 2
    weight_map = {}
    for i, part in enumerate([names[:half], names[half:]]):
        file = f"pytorch_model-{i + 1:05d}-of-00002.bin"
        torch.save({k: sd[k] for k in part}, os.path.join(shards, file))
        weight_map.update({k: file for k in part})
    with open(os.path.join(shards, "pytorch_model.bin.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=1)

    # BF16, as big checkpoints are stored: the CPU streams it from the mapping one layer at a time.
    bf16 = {k: (v.bfloat16() if v.is_floating_point() else v) for k, v in sd.items()}
    bf16["lm_head.weight"] = bf16["transformer.wte.weight"]
    write_safetensors(os.path.join(folder("gpt2-bf16", config), "model.safetensors"),
                      {k: v.clone() for k, v in bf16.items() if v.dtype != torch.bool and k != "lm_head.weight"})
    torch.save(bf16, os.path.join(folder("gpt2-bf16-zip", config), "pytorch_model.bin"))

    torch.manual_seed(7)
    dtypes = {"half": torch.randn(3, 5).half(), "bfloat": torch.randn(4, 2).bfloat16(),
              "ids": torch.arange(7).view(1, 7), "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3)}
    write_safetensors(os.path.join(HERE, "dtypes.safetensors"), dtypes)
    torch.save(dtypes, os.path.join(HERE, "dtypes.bin"))
    torch.save(dtypes, os.path.join(HERE, "dtypes-legacy.bin"), _use_new_zipfile_serialization=False)
    torch.save({"ok": torch.ones(2), "weight": torch.arange(6.0).view(2, 3).t()}, os.path.join(HERE, "transposed.bin"))
    # dtypes.bin with every entry deflated, as a zip tool might rewrite it (refused by name).
    with zipfile.ZipFile(os.path.join(HERE, "dtypes.bin")) as src, \
            zipfile.ZipFile(os.path.join(HERE, "compressed.bin"), "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))


if __name__ == "__main__":
    main()
