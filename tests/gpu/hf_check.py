#!/usr/bin/env python3
"""Cross-checks attnscope-cli's attention maps against Hugging Face transformers.

  python3 tests/gpu/hf_check.py --cli build-gpu/app/attnscope-cli [--devices cpu,cuda]

For every family AttnScope opens (the text decoders and encoders, the encoder-decoders with their
encoder, decoder and cross maps, the image encoders ViT, DeiT, DINOv2 with and without registers, BEiT, and Swin, CLIP
and SigLIP in hf_check_towers.py) a tiny
random model is built with transformers, saved with save_pretrained (real tensor names, config.json, shards for
Llama, the image processor's preprocessor_config.json for the image models), reloaded with eager attention, and run with output_attentions=True; attnscope-cli runs the
same folder and input, and the two [layers, heads, n, n] stacks are compared. Needs torch,
transformers, numpy and (for the image models) Pillow; tests/gpu/run.sh calls it where they are installed.
Exits 1 when a difference exceeds its tolerance.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import transformers as tf

import hf_check_towers

TOLERANCE = {"cpu": 1e-4, "cuda": 1e-4}
# The CLI runs, queued while the models are built and run in transformers (one at a time), then
# run on a pool of processes' worth of threads: one CLI process (and CUDA start) per case.
JOBS = []


def randomise(model, seed):
    # transformers' init (std 0.02) gives nearly uniform maps; larger weights make a real test.
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
            elif p.dim() == 1:
                p.copy_(1 + torch.randn(p.shape, generator=g) * 0.1)
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.25)


def text_models():
    """Every text family AttnScope opens: (model class, config, options), tiny and random."""
    common = dict(vocab_size=99, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                  max_position_embeddings=64)
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 16}
    try:
        llama = tf.LlamaConfig(**common, num_key_value_heads=2, rope_theta=500000.0, rope_scaling=llama3)
    except TypeError:  # newer layout only
        llama = tf.LlamaConfig(**common, num_key_value_heads=2, rope_parameters=dict(llama3, rope_theta=500000.0))
    models = {
        "gpt2": (tf.GPT2LMHeadModel, tf.GPT2Config(vocab_size=99, n_embd=64, n_layer=2, n_head=4, n_positions=64), {}),
        "bert": (tf.BertModel, tf.BertConfig(**common, type_vocab_size=2), {"types": True, "pad": 2}),
        "roberta": (tf.RobertaModel, tf.RobertaConfig(**dict(common, max_position_embeddings=66), pad_token_id=1,
                                                      type_vocab_size=1), {"pad": 2, "pad_id": 1}),
        "distilbert": (tf.DistilBertModel, tf.DistilBertConfig(vocab_size=99, dim=64, hidden_dim=96, n_layers=2, n_heads=4,
                                                                max_position_embeddings=64), {"pad": 3}),
        "llama": (tf.LlamaForCausalLM, llama, {"shard": "60KB"}),
        "mistral": (tf.MistralForCausalLM, tf.MistralConfig(**common, num_key_value_heads=2, sliding_window=4), {}),
        "qwen2": (tf.Qwen2ForCausalLM, tf.Qwen2Config(**common, num_key_value_heads=2, tie_word_embeddings=True), {}),
    }
    if hasattr(tf, "ModernBertForMaskedLM"):  # transformers >= 4.48
        # Layers 1 local (|i - j| <= 2 of 10 tokens), 0 and 2 global, each with its own rotary base.
        models["modernbert"] = (tf.ModernBertForMaskedLM,
                                tf.ModernBertConfig(**dict(common, num_hidden_layers=3), global_attn_every_n_layers=2,
                                                    local_attention=4, global_rope_theta=1000.0, local_rope_theta=40.0,
                                                    pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1,
                                                    sep_token_id=2), {"pad": 2})
    if hasattr(tf, "DebertaV2Model"):
        # DeBERTa v2 (convolution after layer 0, both terms on shared keys, normed relative
        # embeddings, log buckets) and a v3-like c2p-only layout with unshared keys and no buckets.
        rel = dict(common, relative_attention=True, position_biased_input=False, type_vocab_size=0, pad_token_id=0)
        models["deberta-v2"] = (tf.DebertaV2Model,
                                tf.DebertaV2Config(**rel, pos_att_type=["p2c", "c2p"], share_att_key=True,
                                                   norm_rel_ebd="layer_norm", position_buckets=8,
                                                   max_relative_positions=32, conv_kernel_size=3), {"pad": 2})
        models["deberta-v2-c2p"] = (tf.DebertaV2Model,
                                    tf.DebertaV2Config(**rel, pos_att_type=["c2p"], max_relative_positions=6), {})
    for name, (model_type, kwargs, *opts) in decoder_configs(common).items():
        models[name] = (tf.AutoModelForCausalLM, tf.AutoConfig.for_model(model_type, **kwargs),
                        dict(opts[0] if opts else {}, auto=True))
    return models


def decoder_configs(common):
    """The further decoder families, each with the options that change its attention: partial rotary,
    local layers, soft-caps, sliding windows, q/k norms, ALiBi, multi-query and grouped heads, experts."""
    gqa = dict(common, num_key_value_heads=2)
    gemma = dict(gqa, head_dim=16, pad_token_id=0)
    return {
        "gpt_neox": ("gpt_neox", dict(common, rotary_pct=0.5, partial_rotary_factor=0.5, use_parallel_residual=True)),
        "gptj": ("gptj", dict(vocab_size=99, n_embd=64, n_layer=2, n_head=4, n_positions=64, rotary_dim=8)),
        "gpt_neo": ("gpt_neo", dict(vocab_size=99, hidden_size=64, num_layers=2, num_heads=4, intermediate_size=96,
                                    max_position_embeddings=64, attention_types=[[["global", "local"], 1]],
                                    window_size=4)),
        "phi": ("phi", dict(gqa, partial_rotary_factor=0.5, qk_layernorm=True)),
        "gemma": ("gemma", gemma),
        "gemma2": ("gemma2", dict(gemma, query_pre_attn_scalar=16, attn_logit_softcapping=5.0,
                                  final_logit_softcapping=30.0, sliding_window=4)),
        "gemma3_text": ("gemma3_text", dict(gemma, query_pre_attn_scalar=16, sliding_window=4,
                                            layer_types=["sliding_attention", "full_attention"])),
        "qwen3": ("qwen3", dict(gqa, head_dim=16)),
        "olmo2": ("olmo2", dict(gqa, pad_token_id=1)),
        "phi3": ("phi3", dict(gqa, pad_token_id=0, bos_token_id=1, eos_token_id=2)),
        "opt": ("opt", dict(vocab_size=99, hidden_size=64, ffn_dim=96, num_hidden_layers=2, num_attention_heads=4,
                            max_position_embeddings=64, word_embed_proj_dim=64, pad_token_id=1)),
        "bloom": ("bloom", dict(vocab_size=99, hidden_size=64, n_layer=2, n_head=4, pad_token_id=3)),
        "falcon": ("falcon", dict(vocab_size=99, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                  new_decoder_architecture=True, num_kv_heads=2, bias=True)),
        "falcon-alibi": ("falcon", dict(vocab_size=99, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                        alibi=True, multi_query=False, parallel_attn=False, bias=True),
                         {"alibi_once": True}),
        # The mixture-of-experts decoders: maps, and router.npy against transformers' router logits.
        "mixtral": ("mixtral", dict(gqa, num_local_experts=4, num_experts_per_tok=2, sliding_window=4),
                    {"router": True}),
        "qwen2_moe": ("qwen2_moe", dict(gqa, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                                        shared_expert_intermediate_size=48, mlp_only_layers=[1]), {"router": True}),
        "olmoe": ("olmoe", dict(gqa, num_experts=4, num_experts_per_tok=2, clip_qkv=2.0, norm_topk_prob=True),
                  {"router": True}),
    }


def seq2seq_models():
    """The encoder-decoders: T5 (relative buckets, gated FFN), BART, mBART (pre-norm) and Marian (sinusoidal)."""
    shape = dict(vocab_size=99, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                 decoder_attention_heads=4, encoder_ffn_dim=96, decoder_ffn_dim=96, max_position_embeddings=64)
    return {
        "t5": ("t5", dict(vocab_size=99, d_model=64, d_kv=16, d_ff=96, num_layers=2, num_heads=4,
                          relative_attention_num_buckets=8, relative_attention_max_distance=16,
                          feed_forward_proj="gated-gelu", decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)),
        "bart": ("bart", dict(shape, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)),
        "mbart": ("mbart", dict(shape, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)),
        "marian": ("marian", dict(shape, pad_token_id=98, eos_token_id=0, decoder_start_token_id=98)),
    }


def alibi_counted_once(model, ids, kwargs, theirs):
    """Falcon's maps with ALiBi added once. transformers 5's FalconModel folds alibi/sqrt(d) into
    the causal mask, which its SDPA path uses as it should, and its eager path (the only one with
    output_attentions) adds alibi to the scores again: its maps count ALiBi twice, unlike the
    logits it computes with SDPA. Halving build_alibi_tensor (exact: a power of two) makes the
    eager maps count it once; were ALiBi not doubled, the halved maps would miss the check."""
    import transformers.models.falcon.modeling_falcon as falcon
    build = falcon.build_alibi_tensor
    falcon.build_alibi_tensor = lambda *a, **k: build(*a, **k) / 2
    try:
        once = torch.stack(model(ids, output_attentions=True, **kwargs).attentions)[:, 0].numpy()
    finally:
        falcon.build_alibi_tensor = build
    print(f"hf-check falcon-alibi: transformers' own eager maps differ from ALiBi counted once by "
          f"{float(np.abs(once - theirs).max()):.3g} (its doubled ALiBi); compared with ALiBi counted once", flush=True)
    return once


def router_probabilities(model, ids):
    """transformers' routers as router.npy holds them: per routed layer the softmax over all experts
    [n, E] (some versions record the logits, others the softmax already: rows of a softmax sum to 1)."""
    out = model(ids, output_router_logits=True)
    probs = []
    for r in out.router_logits:
        r = r.float().reshape(-1, r.shape[-1])
        is_softmax = bool((r >= 0).all()) and torch.allclose(r.sum(-1), torch.ones(r.shape[0]), atol=1e-5)
        probs.append((r if is_softmax else torch.softmax(r, -1)).numpy())
    return probs


def report_router(name, device, tokens, routers, failures):
    """router.npy's routed layers (rows not NaN) against transformers' routers, in layer order, and
    router_topk's first choice against their argmax."""
    ours = tokens["router.npy"]
    routed = [l for l in range(ours.shape[0]) if not np.isnan(ours[l]).any()]
    if len(routed) != len(routers):
        print(f"hf-check {name} router: {len(routed)} routed layers, transformers {len(routers)}", flush=True)
        failures.append(f"{name} router on {device}")
        return
    theirs = np.stack(routers)
    report(name + "-router", device, np.stack([ours[l] for l in routed]), theirs, failures)
    top = np.array([[row[0] for row in tokens["router_topk"][l]] for l in routed])
    if not (top == theirs.argmax(-1)).all():
        print(f"hf-check {name} router: top expert differs from transformers' argmax", flush=True)
        failures.append(f"{name} router top-k on {device}")


def run_cli(cli, folder, args, device):
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([cli, "attention", folder, *args, "--out", out, "--device", device], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"attnscope-cli failed: {r.stderr.strip()}")
        with open(os.path.join(out, "tokens.json")) as f:
            tokens = json.load(f)
        if os.path.exists(os.path.join(out, "router.npy")):  # MoE decoders
            tokens["router.npy"] = np.load(os.path.join(out, "router.npy"))
        return np.load(os.path.join(out, "attention.npy")), tokens


def report(name, device, ours, theirs, failures, tolerance=None):
    tolerance = tolerance or TOLERANCE[device]
    diff = float(np.abs(ours - theirs).max()) if ours.shape == theirs.shape else float("inf")
    ok = diff <= tolerance
    print(f"hf-check {name:<10} {device:<4} shape {list(ours.shape)} max |attnscope - transformers| = {diff:.3g}"
          f" ({'ok' if ok else 'FAILED'}, tolerance {tolerance:.0e})", flush=True)
    if not ok:
        failures.append(f"{name} on {device}")


def check_text(cli, devices, root, failures):
    for i, (name, (cls, config, opts)) in enumerate(text_models().items()):
        try:
            check_one_text(cli, devices, root, failures, i, name, cls, config, opts)
        except Exception as e:  # report and go on with the other families
            print(f"hf-check {name}: {type(e).__name__}: {e}", flush=True)
            failures.append(name)


def check_one_text(cli, devices, root, failures, i, name, cls, config, opts):
    torch.manual_seed(i)
    model = cls.from_config(config) if opts.get("auto") else cls(config)
    randomise(model, i)
    folder = os.path.join(root, name)
    model.save_pretrained(folder, max_shard_size=opts.get("shard", "1GB"))
    model = cls.from_pretrained(folder, attn_implementation="eager").eval()
    n, pad = 10, opts.get("pad", 0)
    ids = torch.randint(3, 99, (1, n), generator=torch.Generator().manual_seed(i))
    attend = torch.ones(1, n, dtype=torch.long)
    if pad:
        attend[0, n - pad:] = 0
        if "pad_id" in opts:
            ids[0, n - pad:] = opts["pad_id"]
    types = torch.tensor([[0] * (n // 2) + [1] * (n - n // 2)]) if opts.get("types") else None
    kwargs = {"attention_mask": attend} if pad else {}
    if types is not None:
        kwargs["token_type_ids"] = types
    with torch.no_grad():
        theirs = torch.stack(model(ids, output_attentions=True, **kwargs).attentions)[:, 0].numpy()
        if opts.get("alibi_once"):
            theirs = alibi_counted_once(model, ids, kwargs, theirs)
        routers = router_probabilities(model, ids) if opts.get("router") else None
    args = ["--ids", ",".join(map(str, ids[0].tolist()))]
    if pad:
        args += ["--attend", ",".join(map(str, attend[0].tolist()))]
    if types is not None:
        args += ["--type-ids", ",".join(map(str, types[0].tolist()))]
    for device in devices:
        def job(device=device):
            ours, tokens = run_cli(cli, folder, args, device)
            if pad:  # rows of padded queries are not defined the same way; compare real queries
                report(name, device, ours[:, :, : n - pad], theirs[:, :, : n - pad], failures)
            else:
                report(name, device, ours, theirs, failures)
            if routers is not None:
                report_router(name, device, tokens, routers, failures)
        JOBS.append((f"{name} on {device}", job))


def check_seq2seq(cli, devices, root, failures):
    for i, (name, (model_type, kwargs)) in enumerate(seq2seq_models().items()):
        try:
            check_one_seq2seq(cli, devices, root, failures, 100 + i, name, tf.AutoConfig.for_model(model_type, **kwargs))
        except Exception as e:  # report and go on with the other families
            print(f"hf-check {name}: {type(e).__name__}: {e}", flush=True)
            failures.append(name)


def check_one_seq2seq(cli, devices, root, failures, seed, name, config):
    torch.manual_seed(seed)
    model = tf.AutoModelForSeq2SeqLM.from_config(config)
    randomise(model, seed)
    folder = os.path.join(root, name)
    model.save_pretrained(folder)
    model = tf.AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager").eval()
    g = torch.Generator().manual_seed(seed)
    source = torch.randint(3, 98, (1, 9), generator=g)
    # Teacher forcing: the decoder's input starts with its start token, exactly as --target-ids takes it.
    target = torch.cat([torch.tensor([[config.decoder_start_token_id]]), torch.randint(3, 98, (1, 5), generator=g)], 1)
    with torch.no_grad():
        out = model(input_ids=source, decoder_input_ids=target, output_attentions=True)
    theirs = {"encoder": out.encoder_attentions, "decoder": out.decoder_attentions, "cross": out.cross_attentions}
    args = ["--ids", ",".join(map(str, source[0].tolist())), "--target-ids", ",".join(map(str, target[0].tolist()))]
    for device in devices:
        def job(device=device):
            with tempfile.TemporaryDirectory() as out_dir:
                r = subprocess.run([cli, "attention", folder, *args, "--out", out_dir, "--device", device],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    raise RuntimeError(f"attnscope-cli failed: {r.stderr.strip()}")
                for block, maps in theirs.items():
                    ours = np.load(os.path.join(out_dir, f"{block}.npy"))
                    report(f"{name}/{block}", device, ours, torch.stack(maps)[:, 0].numpy(), failures)
        JOBS.append((f"{name} on {device}", job))


def image_models():
    """name -> (model class, config, image processor, input image sizes with their tolerances)."""
    labels = dict(num_labels=3, id2label={0: "cat", 1: "dog", 2: "fox"}, label2id={"cat": 0, "dog": 1, "fox": 2})
    sizes = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, **labels)
    mean_std = dict(image_mean=[0.4, 0.5, 0.6], image_std=[0.2, 0.3, 0.25])
    # One image the processor does not resize (exact comparison) and one it resizes (PIL's
    # filters in 8 bits; a one-level rounding difference moves a map by < 3e-2).
    return {
        "vit": (tf.ViTForImageClassification,
                tf.ViTConfig(intermediate_size=96, image_size=32, patch_size=8, **sizes),
                tf.ViTImageProcessor(size={"height": 32, "width": 32}, **mean_std),
                (((32, 32), None), ((40, 48), 3e-2))),
        # The distillation token, both heads (their logits averaged), bicubic resize and center crop.
        "deit": (tf.DeiTForImageClassificationWithTeacher,
                 tf.DeiTConfig(intermediate_size=96, image_size=32, patch_size=8, **sizes),
                 tf.DeiTImageProcessor(size={"height": 40, "width": 40}, crop_size={"height": 32, "width": 32}, **mean_std),
                 (((40, 40), None), ((44, 52), 3e-2))),
        # Layer scale, positions interpolated from 4×4 to 3×3 (the crop is 24), [CLS] + patch-mean classifier.
        "dinov2": (tf.Dinov2ForImageClassification,
                   tf.Dinov2Config(mlp_ratio=1.5, image_size=32, patch_size=8, **sizes),
                   tf.BitImageProcessor(size={"shortest_edge": 28}, crop_size={"height": 24, "width": 24}, **mean_std),
                   (((28, 28), None), ((36, 30), 3e-2))),
        # The SwiGLU MLP of the giant checkpoints.
        "dinov2_swiglu": (tf.Dinov2ForImageClassification,
                          tf.Dinov2Config(mlp_ratio=3, use_swiglu_ffn=True, image_size=32, patch_size=8, **sizes),
                          tf.BitImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32},
                                               **mean_std),
                          (((32, 32), None),)),
        # Registers and the antialiased interpolation, here upward from 4×4 to 5×5.
        "dinov2_reg": (tf.Dinov2WithRegistersForImageClassification,
                       tf.Dinov2WithRegistersConfig(mlp_ratio=1.5, image_size=32, patch_size=8, num_register_tokens=3,
                                                    **sizes),
                       tf.BitImageProcessor(size={"shortest_edge": 40}, crop_size={"height": 40, "width": 40}, **mean_std),
                       (((40, 40), None), ((48, 44), 3e-2))),
        # Relative position bias per layer (and shared in the second), q/v biases only, layer
        # scale, mean pooling with the pooler's LayerNorm (the second: final LayerNorm and [CLS]).
        "beit": (tf.BeitForImageClassification,
                 tf.BeitConfig(intermediate_size=96, image_size=32, patch_size=8, use_relative_position_bias=True,
                               layer_scale_init_value=0.1, **sizes),
                 tf.BeitImageProcessor(size={"height": 40, "width": 40}, crop_size={"height": 32, "width": 32}, **mean_std),
                 (((40, 40), None), ((36, 50), 3e-2))),
        "beit_shared": (tf.BeitForImageClassification,
                        tf.BeitConfig(intermediate_size=96, image_size=32, patch_size=8, use_relative_position_bias=True,
                                      use_shared_relative_position_bias=True, use_absolute_position_embeddings=True,
                                      use_mean_pooling=False, **sizes),
                        tf.BeitImageProcessor(size={"height": 32, "width": 32}, crop_size={"height": 32, "width": 32},
                                              **mean_std),
                        (((32, 32), None),)),
    }


def check_images(cli, devices, root, failures):
    for i, (name, spec) in enumerate(image_models().items()):
        try:
            check_one_image(cli, devices, root, failures, 7 + i, name, *spec)
        except Exception as e:  # report and go on with the other families
            print(f"hf-check {name}: {type(e).__name__}: {e}", flush=True)
            failures.append(name)


def check_one_image(cli, devices, root, failures, seed, name, cls, config, processor, sizes):
    from PIL import Image
    torch.manual_seed(seed)
    model = cls(config)
    randomise(model, seed)
    folder = os.path.join(root, name)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    model = cls.from_pretrained(folder, attn_implementation="eager").eval()
    rng = np.random.default_rng(seed)
    for size, tolerance in sizes:
        image = Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8), "RGB")
        # PPM: the format a CLI built without Qt (as on a GPU machine) reads
        ppm = os.path.join(root, f"{name}-{size[1]}x{size[0]}.ppm")
        image.save(ppm)
        with torch.no_grad():
            out = model(processor(images=image, return_tensors="pt").pixel_values, output_attentions=True)
        theirs = torch.stack(out.attentions)[:, 0].numpy()
        label = config.id2label[int(out.logits.argmax())]
        case = f"{name}{size[1]}x{size[0]}"
        for device in devices:
            def job(device=device, ppm=ppm, theirs=theirs, label=label, case=case, tolerance=tolerance):
                ours, tokens = run_cli(cli, folder, ["--image", ppm], device)
                report(case, device, ours, theirs, failures, tolerance)
                if tokens.get("label") != label:
                    print(f"hf-check {case} {device}: label {tokens.get('label')} != transformers' {label} FAILED")
                    failures.append(f"{case} label on {device}")
            JOBS.append((f"{case} on {device}", job))


def run_jobs(workers, failures):
    def run(named):
        name, job = named
        try:
            job()
        except Exception as e:  # report and go on with the other cases
            print(f"hf-check {name}: {type(e).__name__}: {e}", flush=True)
            failures.append(name)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(run, JOBS))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)))
    ap.add_argument("--devices", default="cpu,cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    print(f"transformers {tf.__version__}, torch {torch.__version__}", flush=True)
    failures = []
    with tempfile.TemporaryDirectory() as root:
        devices = a.devices.split(",")
        towers = [lambda cli, devices, root, failures, check=check: check(cli, devices, root, failures, JOBS, report,
                                                                          randomise)
                  for check in (hf_check_towers.check_swin, hf_check_towers.check_image_text)]
        for check in (check_text, check_seq2seq, check_images, *towers):
            try:
                check(a.cli, devices, root, failures)
            except Exception as e:  # report and go on with the other families
                print(f"hf-check {check.__name__}: {type(e).__name__}: {e}", flush=True)
                failures.append(check.__name__)
        run_jobs(a.jobs, failures)
    print("hf-check failures: " + (", ".join(failures) if failures else "none"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
