#!/usr/bin/env python3
"""Random checkpoint folders with real Hugging Face tensor names, for timing and GPU checks.

  python3 bench/make_checkpoint.py FAMILY DIR [--size small|base|500mb] [--dtype F32|F16|BF16] [--shards N]
                                   [--positions P] [--bare]

FAMILY: gpt2, llama, bert, modernbert, deberta-v2, vit, deit, dinov2, dinov2_with_registers, beit, swin. Needs only
numpy. Swin's base is swin-tiny-patch4-window7-224's shape (embed 96, depths 2,2,6,2, heads 3,6,12,24); clip's base
is clip-vit-base-patch32's (vision 12×768 in 32-px patches, text 12×512, 77 positions), siglip's
siglip-base-patch16-224's (vision 12×768 in 16-px patches with the MAP head, text 12×768, 64 positions). DeiT and
DINOv2 folders get the preprocessor_config.json of their released checkpoints (DINOv2: image_size
518, patch 14, run at the processor's 224² crop, so its positions are interpolated). --size 500mb gives about 500 MB of F32 weights
(a GPT-2-small-sized model for gpt2, a 0.13B Llama for llama). Weights are N(0, 0.02) with
norms near 1, so forwards are numerically tame.
"""
import argparse
import json
import os
import struct

import numpy as np

SIZES = {
    "gpt2": {"small": dict(layers=2, embd=64, heads=4, vocab=1000, positions=256),
             "base": dict(layers=12, embd=768, heads=12, vocab=50257, positions=1024),
             "500mb": dict(layers=12, embd=768, heads=12, vocab=50257, positions=1024)},
    "llama": {"small": dict(layers=2, hidden=64, inner=128, heads=4, kv=2, vocab=1000, positions=512),
              "base": dict(layers=16, hidden=1024, inner=2816, heads=16, kv=4, vocab=32000, positions=2048),
              "500mb": dict(layers=12, hidden=768, inner=2048, heads=12, kv=4, vocab=32000, positions=2048)},
    "bert": {"small": dict(layers=2, hidden=64, inner=128, heads=4, vocab=1000, positions=512),
             "base": dict(layers=12, hidden=768, inner=3072, heads=12, vocab=30522, positions=512),
             "500mb": dict(layers=8, hidden=1024, inner=4096, heads=16, vocab=30522, positions=512)},
    "vit": {"small": dict(layers=2, hidden=64, inner=128, heads=4, image=32, patch=8, labels=10),
            "base": dict(layers=12, hidden=768, inner=3072, heads=12, image=224, patch=16, labels=1000),
            "500mb": dict(layers=10, hidden=1024, inner=4096, heads=16, image=224, patch=16, labels=1000)},
    "deit": {"small": dict(layers=2, hidden=64, inner=128, heads=4, image=32, patch=8, labels=10),
             "base": dict(layers=12, hidden=768, inner=3072, heads=12, image=224, patch=16, labels=1000),
             "500mb": dict(layers=10, hidden=1024, inner=4096, heads=16, image=224, patch=16, labels=1000)},
    "dinov2": {"small": dict(layers=2, hidden=64, inner=128, heads=4, image=56, patch=14, labels=10, registers=0),
               "base": dict(layers=12, hidden=768, inner=3072, heads=12, image=518, patch=14, labels=1000,
                            registers=0),
               "500mb": dict(layers=10, hidden=1024, inner=4096, heads=16, image=518, patch=14, labels=1000,
                             registers=0)},
}
# ModernBERT-base's shape: 22 layers, GeGLU 1152, local windows of 128 with a global layer every 3.
SIZES["modernbert"] = {"small": dict(layers=3, hidden=64, inner=96, heads=4, vocab=1000, positions=512),
                       "base": dict(layers=22, hidden=768, inner=1152, heads=12, vocab=50368, positions=8192),
                       "500mb": dict(layers=22, hidden=768, inner=1152, heads=12, vocab=50368, positions=8192)}
# DeBERTa-v3-base's shape: 256 log buckets of relative positions up to 512, shared keys, c2p and p2c.
SIZES["deberta-v2"] = {"small": dict(layers=2, hidden=64, inner=128, heads=4, vocab=1000, positions=512),
                       "base": dict(layers=12, hidden=768, inner=3072, heads=12, vocab=128100, positions=512),
                       "500mb": dict(layers=12, hidden=768, inner=3072, heads=12, vocab=128100, positions=512)}
SIZES["dinov2_with_registers"] = {k: dict(v, registers=4) for k, v in SIZES["dinov2"].items()}
SIZES["beit"] = SIZES["deit"]  # BEiT: relative position bias per layer, layer scale, mean pooling
SIZES["swin"] = {"small": dict(embed=16, depths=[2, 2], heads=[2, 4], window=3, image=28, patch=4, labels=10),
                 "base": dict(embed=96, depths=[2, 2, 6, 2], heads=[3, 6, 12, 24], window=7, image=224, patch=4,
                              labels=1000),
                 "500mb": dict(embed=192, depths=[2, 2, 18, 2], heads=[6, 12, 24, 48], window=7, image=224,
                               patch=4, labels=1000)}
SIZES["clip"] = {"small": dict(vh=64, vi=128, vl=2, vheads=4, image=32, patch=8, th=64, ti=128, tl=2, theads=4,
                                vocab=1000, positions=77, proj=32),
                 "base": dict(vh=768, vi=3072, vl=12, vheads=12, image=224, patch=32, th=512, ti=2048, tl=12, theads=8,
                              vocab=49408, positions=77, proj=512)}
SIZES["siglip"] = {"small": dict(vh=64, vi=128, vl=2, vheads=4, image=32, patch=8, th=64, ti=128, tl=2, theads=4,
                                  vocab=1000, positions=64),
                   "base": dict(vh=768, vi=3072, vl=12, vheads=12, image=224, patch=16, th=768, ti=3072, tl=12,
                                theads=12, vocab=32000, positions=64)}
PREPROCESSORS = {
    "deit": {"image_processor_type": "DeiTImageProcessor", "size": {"height": 256, "width": 256}, "resample": 3,
             "do_center_crop": True, "crop_size": {"height": 224, "width": 224},
             "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]},
    "dinov2": {"image_processor_type": "BitImageProcessor", "size": {"shortest_edge": 256}, "resample": 3,
               "do_center_crop": True, "crop_size": {"height": 224, "width": 224},
               "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]},
}
PREPROCESSORS["dinov2_with_registers"] = PREPROCESSORS["dinov2"]
PREPROCESSORS["clip"] = {"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 224}, "resample": 3,
                         "do_center_crop": True, "crop_size": {"height": 224, "width": 224},
                         "image_mean": [0.48145466, 0.4578275, 0.40821073],
                         "image_std": [0.26862954, 0.26130258, 0.27577711]}
PREPROCESSORS["siglip"] = {"image_processor_type": "SiglipImageProcessor", "size": {"height": 224, "width": 224},
                           "resample": 3, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
PREPROCESSORS["swin"] = {"image_processor_type": "ViTImageProcessor", "size": {"height": 224, "width": 224},
                         "resample": 3, "do_resize": True, "do_rescale": True, "do_normalize": True,
                         "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}
PREPROCESSORS["beit"] = dict(PREPROCESSORS["deit"], image_processor_type="BeitImageProcessor",
                             image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])


def gpt2(s, rnd):
    E, t = s["embd"], {}
    t["transformer.wte.weight"] = rnd(s["vocab"], E)
    t["transformer.wpe.weight"] = rnd(s["positions"], E)
    for l in range(s["layers"]):
        p = f"transformer.h.{l}."
        t[p + "ln_1.weight"], t[p + "ln_1.bias"] = rnd(E, mean=1), rnd(E)
        t[p + "attn.c_attn.weight"], t[p + "attn.c_attn.bias"] = rnd(E, 3 * E), rnd(3 * E)
        t[p + "attn.c_proj.weight"], t[p + "attn.c_proj.bias"] = rnd(E, E), rnd(E)
        t[p + "ln_2.weight"], t[p + "ln_2.bias"] = rnd(E, mean=1), rnd(E)
        t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"] = rnd(E, 4 * E), rnd(4 * E)
        t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"] = rnd(4 * E, E), rnd(E)
    t["transformer.ln_f.weight"], t["transformer.ln_f.bias"] = rnd(E, mean=1), rnd(E)
    config = {"model_type": "gpt2", "vocab_size": s["vocab"], "n_positions": s["positions"], "n_embd": E,
              "n_head": s["heads"], "n_layer": s["layers"], "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    return t, config


def llama(s, rnd):
    E, I, H, G = s["hidden"], s["inner"], s["heads"], s["kv"]
    d, t = E // H, {}
    t["model.embed_tokens.weight"] = rnd(s["vocab"], E)
    for l in range(s["layers"]):
        p = f"model.layers.{l}."
        t[p + "input_layernorm.weight"] = rnd(E, mean=1)
        t[p + "self_attn.q_proj.weight"] = rnd(H * d, E)
        t[p + "self_attn.k_proj.weight"] = rnd(G * d, E)
        t[p + "self_attn.v_proj.weight"] = rnd(G * d, E)
        t[p + "self_attn.o_proj.weight"] = rnd(E, H * d)
        t[p + "post_attention_layernorm.weight"] = rnd(E, mean=1)
        t[p + "mlp.gate_proj.weight"], t[p + "mlp.up_proj.weight"] = rnd(I, E), rnd(I, E)
        t[p + "mlp.down_proj.weight"] = rnd(E, I)
    t["model.norm.weight"] = rnd(E, mean=1)
    t["lm_head.weight"] = rnd(s["vocab"], E)
    config = {"model_type": "llama", "vocab_size": s["vocab"], "hidden_size": E, "intermediate_size": I,
              "num_hidden_layers": s["layers"], "num_attention_heads": H, "num_key_value_heads": G,
              "max_position_embeddings": s["positions"], "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
              "hidden_act": "silu", "tie_word_embeddings": False}
    return t, config


def bert(s, rnd):
    E, I, t = s["hidden"], s["inner"], {}
    def lin(name, out, inp):
        t[name + ".weight"], t[name + ".bias"] = rnd(out, inp), rnd(out)
    def norm(name):
        t[name + ".weight"], t[name + ".bias"] = rnd(E, mean=1), rnd(E)
    t["bert.embeddings.word_embeddings.weight"] = rnd(s["vocab"], E)
    t["bert.embeddings.position_embeddings.weight"] = rnd(s["positions"], E)
    t["bert.embeddings.token_type_embeddings.weight"] = rnd(2, E)
    norm("bert.embeddings.LayerNorm")
    for l in range(s["layers"]):
        p = f"bert.encoder.layer.{l}."
        for n in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            lin(p + n, E, E)
        norm(p + "attention.output.LayerNorm")
        lin(p + "intermediate.dense", I, E)
        lin(p + "output.dense", E, I)
        norm(p + "output.LayerNorm")
    config = {"model_type": "bert", "vocab_size": s["vocab"], "hidden_size": E, "intermediate_size": I,
              "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
              "max_position_embeddings": s["positions"], "type_vocab_size": 2, "hidden_act": "gelu",
              "layer_norm_eps": 1e-12}
    return t, config


def modernbert(s, rnd):
    E, I, t = s["hidden"], s["inner"], {}
    t["model.embeddings.tok_embeddings.weight"] = rnd(s["vocab"], E)
    t["model.embeddings.norm.weight"] = rnd(E, mean=1)
    for l in range(s["layers"]):
        p = f"model.layers.{l}."
        if l > 0:
            t[p + "attn_norm.weight"] = rnd(E, mean=1)
        t[p + "attn.Wqkv.weight"], t[p + "attn.Wo.weight"] = rnd(3 * E, E), rnd(E, E)
        t[p + "mlp_norm.weight"] = rnd(E, mean=1)
        t[p + "mlp.Wi.weight"], t[p + "mlp.Wo.weight"] = rnd(2 * I, E), rnd(E, I)
    t["model.final_norm.weight"] = rnd(E, mean=1)
    if not s.get("bare"):  # ModernBertForMaskedLM's head, its decoder tied to the embeddings
        t["head.dense.weight"], t["head.norm.weight"], t["decoder.bias"] = rnd(E, E), rnd(E, mean=1), rnd(s["vocab"])
    config = {"model_type": "modernbert", "vocab_size": s["vocab"], "hidden_size": E, "intermediate_size": I,
              "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
              "max_position_embeddings": s["positions"], "global_attn_every_n_layers": 3, "local_attention": 128,
              "global_rope_theta": 160000.0, "local_rope_theta": 10000.0}
    return t, config


def deberta_v2(s, rnd):
    E, I, t = s["hidden"], s["inner"], {}
    def lin(name, out, inp):
        t[name + ".weight"], t[name + ".bias"] = rnd(out, inp), rnd(out)
    def norm(name):
        t[name + ".weight"], t[name + ".bias"] = rnd(E, mean=1), rnd(E)
    t["deberta.embeddings.word_embeddings.weight"] = rnd(s["vocab"], E)
    norm("deberta.embeddings.LayerNorm")
    for l in range(s["layers"]):
        p = f"deberta.encoder.layer.{l}."
        for n in ("attention.self.query_proj", "attention.self.key_proj", "attention.self.value_proj",
                  "attention.output.dense"):
            lin(p + n, E, E)
        norm(p + "attention.output.LayerNorm")
        lin(p + "intermediate.dense", I, E)
        lin(p + "output.dense", E, I)
        norm(p + "output.LayerNorm")
    t["deberta.encoder.rel_embeddings.weight"] = rnd(2 * 256, E)
    norm("deberta.encoder.LayerNorm")
    config = {"model_type": "deberta-v2", "vocab_size": s["vocab"], "hidden_size": E, "intermediate_size": I,
              "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
              "max_position_embeddings": s["positions"], "type_vocab_size": 0, "hidden_act": "gelu",
              "layer_norm_eps": 1e-7, "relative_attention": True, "position_buckets": 256,
              "max_relative_positions": -1, "norm_rel_ebd": "layer_norm", "share_att_key": True,
              "pos_att_type": ["p2c", "c2p"], "position_biased_input": False}
    return t, config


def vit(s, rnd):
    E, I, P, t = s["hidden"], s["inner"], s["patch"], {}
    g = s["image"] // P
    def lin(name, out, inp):
        t[name + ".weight"], t[name + ".bias"] = rnd(out, inp), rnd(out)
    def norm(name):
        t[name + ".weight"], t[name + ".bias"] = rnd(E, mean=1), rnd(E)
    t["vit.embeddings.cls_token"] = rnd(1, 1, E)
    t["vit.embeddings.position_embeddings"] = rnd(1, g * g + 1, E)
    t["vit.embeddings.patch_embeddings.projection.weight"] = rnd(E, 3, P, P)
    t["vit.embeddings.patch_embeddings.projection.bias"] = rnd(E)
    for l in range(s["layers"]):
        p = f"vit.encoder.layer.{l}."
        norm(p + "layernorm_before")
        for n in ("attention.attention.query", "attention.attention.key", "attention.attention.value",
                  "attention.output.dense"):
            lin(p + n, E, E)
        norm(p + "layernorm_after")
        lin(p + "intermediate.dense", I, E)
        lin(p + "output.dense", E, I)
    norm("vit.layernorm")
    lin("classifier", s["labels"], E)
    config = {"model_type": "vit", "hidden_size": E, "intermediate_size": I, "num_hidden_layers": s["layers"],
              "num_attention_heads": s["heads"], "image_size": s["image"], "patch_size": P, "num_channels": 3,
              "qkv_bias": True, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
              "id2label": {str(i): f"class{i}" for i in range(s["labels"])}}
    return t, config


def deit(s, rnd):
    t, config = vit(s, rnd)
    t = {k.replace("vit.", "deit.", 1): v for k, v in t.items() if k != "classifier.weight" and k != "classifier.bias"}
    E, g = s["hidden"], s["image"] // s["patch"]
    t["deit.embeddings.distillation_token"] = rnd(1, 1, E)
    t["deit.embeddings.position_embeddings"] = rnd(1, g * g + 2, E)
    for head in ("cls_classifier", "distillation_classifier"):
        t[head + ".weight"], t[head + ".bias"] = rnd(s["labels"], E), rnd(s["labels"])
    config["model_type"] = "deit"
    return t, config


def beit(s, rnd):
    E, I, P, H, t = s["hidden"], s["inner"], s["patch"], s["heads"], {}
    g = s["image"] // P
    def lin(name, out, inp, bias=True):
        t[name + ".weight"] = rnd(out, inp)
        if bias:
            t[name + ".bias"] = rnd(out)
    def norm(name):
        t[name + ".weight"], t[name + ".bias"] = rnd(E, mean=1), rnd(E)
    t["beit.embeddings.cls_token"] = rnd(1, 1, E)
    t["beit.embeddings.patch_embeddings.projection.weight"] = rnd(E, 3, P, P)
    t["beit.embeddings.patch_embeddings.projection.bias"] = rnd(E)
    for l in range(s["layers"]):
        p = f"beit.encoder.layer.{l}."
        norm(p + "layernorm_before")
        lin(p + "attention.attention.query", E, E)
        lin(p + "attention.attention.key", E, E, bias=False)
        lin(p + "attention.attention.value", E, E)
        t[p + "attention.attention.relative_position_bias.relative_position_bias_table"] = rnd((2 * g - 1) ** 2 + 3, H)
        lin(p + "attention.output.dense", E, E)
        t[p + "lambda_1"] = rnd(E, mean=0.1)
        norm(p + "layernorm_after")
        lin(p + "intermediate.dense", I, E)
        lin(p + "output.dense", E, I)
        t[p + "lambda_2"] = rnd(E, mean=0.1)
    norm("beit.pooler.layernorm")
    lin("classifier", s["labels"], E)
    config = {"model_type": "beit", "hidden_size": E, "intermediate_size": I, "num_hidden_layers": s["layers"],
              "num_attention_heads": H, "image_size": s["image"], "patch_size": P, "num_channels": 3,
              "hidden_act": "gelu", "layer_norm_eps": 1e-12, "use_relative_position_bias": True,
              "use_shared_relative_position_bias": False, "use_absolute_position_embeddings": False,
              "layer_scale_init_value": 0.1, "use_mean_pooling": True,
              "id2label": {str(i): f"class{i}" for i in range(s["labels"])}}
    return t, config


def dinov2(s, rnd):
    E, I, P, R, t = s["hidden"], s["inner"], s["patch"], s["registers"], {}
    g, pre = s["image"] // P, ("dinov2_with_registers." if R else "dinov2.")
    def lin(name, out, inp):
        t[name + ".weight"], t[name + ".bias"] = rnd(out, inp), rnd(out)
    def norm(name):
        t[name + ".weight"], t[name + ".bias"] = rnd(E, mean=1), rnd(E)
    t[pre + "embeddings.cls_token"] = rnd(1, 1, E)
    t[pre + "embeddings.mask_token"] = rnd(1, E)
    if R:
        t[pre + "embeddings.register_tokens"] = rnd(1, R, E)
    t[pre + "embeddings.position_embeddings"] = rnd(1, g * g + 1, E)
    t[pre + "embeddings.patch_embeddings.projection.weight"] = rnd(E, 3, P, P)
    t[pre + "embeddings.patch_embeddings.projection.bias"] = rnd(E)
    for l in range(s["layers"]):
        p = f"{pre}encoder.layer.{l}."
        norm(p + "norm1")
        for n in ("attention.attention.query", "attention.attention.key", "attention.attention.value",
                  "attention.output.dense"):
            lin(p + n, E, E)
        t[p + "layer_scale1.lambda1"] = rnd(E, mean=1)
        norm(p + "norm2")
        lin(p + "mlp.fc1", I, E)
        lin(p + "mlp.fc2", E, I)
        t[p + "layer_scale2.lambda1"] = rnd(E, mean=1)
    norm(pre + "layernorm")
    lin("classifier", s["labels"], 2 * E)
    config = {"model_type": "dinov2_with_registers" if R else "dinov2", "hidden_size": E, "mlp_ratio": I / E,
              "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"], "image_size": s["image"],
              "patch_size": P, "num_channels": 3, "qkv_bias": True, "hidden_act": "gelu", "layer_norm_eps": 1e-6,
              "layerscale_value": 1.0, "use_swiglu_ffn": False,
              "id2label": {str(i): f"class{i}" for i in range(s["labels"])}}
    if R:
        config["num_register_tokens"] = R
    return t, config


def swin(s, rnd):
    """SwinForImageClassification's names and shapes (modeling_swin.py)."""
    E, P, W, t = s["embed"], s["patch"], s["window"], {}
    def lin(name, out, inp, bias=True):
        t[name + ".weight"] = rnd(out, inp)
        if bias:
            t[name + ".bias"] = rnd(out)
    def norm(name, width):
        t[name + ".weight"], t[name + ".bias"] = rnd(width, mean=1), rnd(width)
    t["swin.embeddings.patch_embeddings.projection.weight"] = rnd(E, 3, P, P)
    t["swin.embeddings.patch_embeddings.projection.bias"] = rnd(E)
    norm("swin.embeddings.norm", E)
    stages = len(s["depths"])
    for st, (depth, H) in enumerate(zip(s["depths"], s["heads"])):
        C, sp = E << st, f"swin.encoder.layers.{st}."
        for b in range(depth):
            p = sp + f"blocks.{b}."
            norm(p + "layernorm_before", C)
            t[p + "attention.self.relative_position_bias_table"] = rnd((2 * W - 1) ** 2, H)
            for n in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
                lin(p + n, C, C)
            norm(p + "layernorm_after", C)
            lin(p + "intermediate.dense", 4 * C, C)
            lin(p + "output.dense", C, 4 * C)
        if st + 1 < stages:
            norm(sp + "downsample.norm", 4 * C)
            lin(sp + "downsample.reduction", 2 * C, 4 * C, bias=False)
    norm("swin.layernorm", E << (stages - 1))
    lin("classifier", s["labels"], E << (stages - 1))
    config = {"model_type": "swin", "image_size": s["image"], "patch_size": P, "num_channels": 3, "embed_dim": E,
              "depths": s["depths"], "num_heads": s["heads"], "window_size": W, "mlp_ratio": 4.0, "qkv_bias": True,
              "hidden_act": "gelu", "use_absolute_embeddings": False, "layer_norm_eps": 1e-5,
              "id2label": {str(i): f"class{i}" for i in range(s["labels"])}}
    return t, config


def clip(s, rnd, siglip=False):
    """CLIPModel's / SiglipModel's names and shapes (modeling_clip.py, modeling_siglip.py)."""
    t, g = {}, s["image"] // s["patch"]
    def lin(name, out, inp, bias=True):
        t[name + ".weight"] = rnd(out, inp)
        if bias:
            t[name + ".bias"] = rnd(out)
    def norm(name, width):
        t[name + ".weight"], t[name + ".bias"] = rnd(width, mean=1), rnd(width)
    def layers(prefix, count, E, I):
        for l in range(count):
            p = f"{prefix}encoder.layers.{l}."
            norm(p + "layer_norm1", E)
            for n in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj"):
                lin(p + n, E, E)
            norm(p + "layer_norm2", E)
            lin(p + "mlp.fc1", I, E)
            lin(p + "mlp.fc2", E, I)
    E, T, v, x = s["vh"], s["th"], "vision_model.", "text_model."
    if not siglip:
        t[v + "embeddings.class_embedding"] = rnd(E)
    t[v + "embeddings.patch_embedding.weight"] = rnd(E, 3, s["patch"], s["patch"])
    if siglip:
        t[v + "embeddings.patch_embedding.bias"] = rnd(E)
    t[v + "embeddings.position_embedding.weight"] = rnd(g * g + (0 if siglip else 1), E)
    if not siglip:
        norm(v + "pre_layrnorm", E)
    layers(v, s["vl"], E, s["vi"])
    norm(v + "post_layernorm", E)
    if siglip:
        t[v + "head.probe"] = rnd(1, 1, E)
        t[v + "head.attention.in_proj_weight"], t[v + "head.attention.in_proj_bias"] = rnd(3 * E, E), rnd(3 * E)
        lin(v + "head.attention.out_proj", E, E)
        norm(v + "head.layernorm", E)
        lin(v + "head.mlp.fc1", s["vi"], E)
        lin(v + "head.mlp.fc2", E, s["vi"])
    else:
        lin("visual_projection", s["proj"], E, bias=False)
    t[x + "embeddings.token_embedding.weight"] = rnd(s["vocab"], T)
    t[x + "embeddings.position_embedding.weight"] = rnd(s["positions"], T)
    layers(x, s["tl"], T, s["ti"])
    norm(x + "final_layer_norm", T)
    if siglip:
        lin(x + "head", E, T)
        t["logit_bias"] = np.array([-10.0], dtype=np.float32)
        t["logit_scale"] = np.array([np.log(10.0)], dtype=np.float32)
    else:
        lin("text_projection", s["proj"], T, bias=False)
        t["logit_scale"] = np.array(np.log(100.0), dtype=np.float32)
    eps = 1e-6 if siglip else 1e-5
    vision = {"hidden_size": E, "intermediate_size": s["vi"], "num_hidden_layers": s["vl"],
              "num_attention_heads": s["vheads"], "image_size": s["image"], "patch_size": s["patch"],
              "num_channels": 3, "layer_norm_eps": eps,
              "hidden_act": "gelu_pytorch_tanh" if siglip else "quick_gelu"}
    text = {"hidden_size": T, "intermediate_size": s["ti"], "num_hidden_layers": s["tl"],
            "num_attention_heads": s["theads"], "vocab_size": s["vocab"], "max_position_embeddings": s["positions"],
            "layer_norm_eps": eps, "hidden_act": "gelu_pytorch_tanh" if siglip else "quick_gelu"}
    config = {"model_type": "siglip" if siglip else "clip", "vision_config": vision, "text_config": text}
    if siglip:
        text["projection_size"] = E
    else:
        text["eos_token_id"] = 2
        config["projection_dim"] = s["proj"]
    return t, config


def encode(x, dtype):
    x = np.ascontiguousarray(x, dtype=np.float32)
    if dtype == "F32":
        return x.tobytes()
    if dtype == "F16":
        return x.astype(np.float16).tobytes()
    u = x.view(np.uint32).astype(np.uint64)  # BF16: round to nearest even on the top 16 bits
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).tobytes()


def write_safetensors(path, tensors, dtype):
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name, x in tensors:
        b = encode(x, dtype)
        header[name] = {"dtype": dtype, "shape": list(x.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    raw = json.dumps(header).encode()
    raw += b" " * ((8 - len(raw) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=sorted(SIZES))
    ap.add_argument("folder")
    ap.add_argument("--size", default="small", choices=["small", "base", "500mb"])
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--positions", type=int, default=0, help="override the size's position count (long inputs)")
    ap.add_argument("--bare", action="store_true", help="modernbert: the encoder alone, without the MLM head")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    def rnd(*shape, mean=0.0):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02 + mean).astype(np.float32)
    size = dict(SIZES[a.family][a.size])
    if a.positions > 0 and "positions" in size:
        size["positions"] = a.positions
    size["bare"] = a.bare
    tensors, config = {"gpt2": gpt2, "llama": llama, "bert": bert, "modernbert": modernbert, "deberta-v2": deberta_v2, "vit": vit, "deit": deit,
                       "dinov2": dinov2, "dinov2_with_registers": dinov2, "beit": beit, "swin": swin,
                       "clip": clip, "siglip": lambda s, r: clip(s, r, siglip=True)}[a.family](size, rnd)
    os.makedirs(a.folder, exist_ok=True)
    with open(os.path.join(a.folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    if a.family in PREPROCESSORS and a.size != "small":
        with open(os.path.join(a.folder, "preprocessor_config.json"), "w") as f:
            json.dump(PREPROCESSORS[a.family], f, indent=2)
    items = list(tensors.items())
    if a.shards <= 1:
        write_safetensors(os.path.join(a.folder, "model.safetensors"), items, a.dtype)
        return
    # Contiguous runs of tensors per shard, as transformers' save_pretrained does.
    total = sum(x.size for _, x in items)
    shards, current, size = [], [], 0
    for item in items:
        current.append(item)
        size += item[1].size
        if size >= total / a.shards and len(shards) < a.shards - 1:
            shards.append(current)
            current, size = [], 0
    shards.append(current)
    weight_map = {}
    for i, shard in enumerate(shards):
        name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        write_safetensors(os.path.join(a.folder, name), shard, a.dtype)
        weight_map.update({n: name for n, _ in shard})
    with open(os.path.join(a.folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)


if __name__ == "__main__":
    main()
