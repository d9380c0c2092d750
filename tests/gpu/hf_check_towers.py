"""Swin, CLIP and SigLIP for hf_check.py: their maps come out of transformers in other shapes.

Swin: transformers gives each block's attention per window, [windows, heads, w², w²] over the
padded grid after the cyclic shift; swin_full_maps() lays them out as AttnScope's stageK.npy,
[blocks, heads, n, n] over the stage's tokens row by row, zero outside each window, without the
padding's columns. CLIP and SigLIP: the vision and text towers' attentions against vision.npy and
text.npy, and transformers' logits_per_image against tokens.json's similarity logit (SigLIP's
includes logit_bias). Called by hf_check.py with its helpers (randomise, report, the job list).
"""
import json
import os
import subprocess
import tempfile

import numpy as np
import torch
import transformers as tf


def swin_full_maps(windows, rows, cols, window, shift):
    """windows [nW, H, w², w²] (one block, batch 1) -> [H, n, n] over the rows × cols tokens."""
    padded_rows = -(-rows // window) * window
    padded_cols = -(-cols // window) * window
    per_row = padded_cols // window
    heads = windows.shape[1]
    n = rows * cols
    full = np.zeros((heads, n, n), dtype=np.float64)
    # Window wi holds the rolled grid's positions (R, C); torch.roll(-shift) put the padded grid's
    # position ((R + shift) mod, (C + shift) mod) there. Padding positions have no token.
    for wi in range(windows.shape[0]):
        wr, wc = divmod(wi, per_row)
        token = []
        for k in range(window * window):
            r = (wr * window + k // window + shift) % padded_rows
            c = (wc * window + k % window + shift) % padded_cols
            token.append(r * cols + c if r < rows and c < cols else -1)
        for i, ti in enumerate(token):
            if ti < 0:
                continue
            for j, tj in enumerate(token):
                if tj >= 0:
                    full[:, ti, tj] = windows[wi, :, i, j]
    return full


def run_cli_blocks(cli, folder, args, device):
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([cli, "attention", folder, *args, "--out", out, "--device", device],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"attnscope-cli failed: {r.stderr.strip()}")
        with open(os.path.join(out, "tokens.json")) as f:
            tokens = json.load(f)
        maps = {name[:-4]: np.load(os.path.join(out, name)) for name in os.listdir(out) if name.endswith(".npy")}
        return maps, tokens


def check_swin(cli, devices, root, failures, jobs, report, randomise):
    from PIL import Image
    labels = dict(num_labels=3, id2label={0: "cat", 1: "dog", 2: "fox"}, label2id={"cat": 0, "dog": 1, "fox": 2})
    # A 7×7 grid in windows of 3: padded to 9×9, shifted by 1 on odd blocks; stage 2 4×4 (padded to 6×6).
    config = tf.SwinConfig(image_size=28, patch_size=4, embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=3,
                           **labels)
    processor = tf.ViTImageProcessor(size={"height": 28, "width": 28}, resample=3,
                                     image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225])
    torch.manual_seed(31)
    model = tf.SwinForImageClassification(config)
    randomise(model, 31)
    folder = os.path.join(root, "swin")
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    model = tf.SwinForImageClassification.from_pretrained(folder, attn_implementation="eager").eval()
    rng = np.random.default_rng(31)
    for size, tolerance in (((28, 28), None), ((36, 44), 3e-2)):
        image = Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8), "RGB")
        ppm = os.path.join(root, f"swin-{size[1]}x{size[0]}.ppm")
        image.save(ppm)
        with torch.no_grad():
            out = model(processor(images=image, return_tensors="pt").pixel_values, output_attentions=True)
        theirs, at, grid = {}, 0, 7
        for stage, depth in enumerate(config.depths):
            win = min(config.window_size, grid)
            blocks = []
            for b in range(depth):
                shift = 0 if grid <= config.window_size or b % 2 == 0 else config.window_size // 2
                blocks.append(swin_full_maps(out.attentions[at].numpy(), grid, grid, win, shift))
                at += 1
            theirs[f"stage{stage + 1}"] = np.stack(blocks)
            grid = (grid + 1) // 2
        label = config.id2label[int(out.logits.argmax())]
        for device in devices:
            def job(device=device, ppm=ppm, theirs=theirs, label=label, size=size, tolerance=tolerance):
                ours, tokens = run_cli_blocks(cli, folder, ["--image", ppm], device)
                for name, maps in theirs.items():
                    report(f"swin{size[1]}x{size[0]}-{name}", device, ours.get(name, np.zeros(0)), maps, failures,
                           tolerance)
                if tokens.get("label") != label:
                    print(f"hf-check swin {device}: label {tokens.get('label')} != transformers' {label} FAILED")
                    failures.append(f"swin label on {device}")
            jobs.append((f"swin {size} on {device}", job))


def check_image_text(cli, devices, root, failures, jobs, report, randomise):
    from PIL import Image
    text = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, vocab_size=99,
                max_position_embeddings=16)
    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, image_size=32,
                  patch_size=8)
    cases = {
        # The legacy eos_token_id 2: pooled at the largest id (98, the last token here).
        "clip": (tf.CLIPModel, tf.CLIPConfig(text_config=dict(text, eos_token_id=2), vision_config=vision,
                                             projection_dim=24),
                 tf.CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})),
        "siglip": (tf.SiglipModel, tf.SiglipConfig(text_config=text, vision_config=vision),
                   tf.SiglipImageProcessor(size={"height": 32, "width": 32})),
    }
    ids = [5, 17, 42, 7, 98]
    for seed, (name, (cls, config, processor)) in enumerate(cases.items(), start=41):
        torch.manual_seed(seed)
        model = cls(config)
        randomise(model, seed)
        folder = os.path.join(root, name)
        model.save_pretrained(folder)
        processor.save_pretrained(folder)
        model = cls.from_pretrained(folder, attn_implementation="eager").eval()
        rng = np.random.default_rng(seed)
        image = Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8), "RGB")
        ppm = os.path.join(root, f"{name}.ppm")
        image.save(ppm)
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]), pixel_values=processor(images=image, return_tensors="pt").pixel_values,
                        output_attentions=True)
        theirs = {"vision": torch.stack(out.vision_model_output.attentions)[:, 0].numpy(),
                  "text": torch.stack(out.text_model_output.attentions)[:, 0].numpy()}
        logit = float(out.logits_per_image[0, 0])
        for device in devices:
            def job(device=device, name=name, folder=folder, ppm=ppm, theirs=theirs, logit=logit):
                ours, tokens = run_cli_blocks(cli, folder, ["--image", ppm, "--ids", ",".join(map(str, ids))], device)
                for block, maps in theirs.items():
                    report(f"{name}-{block}", device, ours.get(block, np.zeros(0)), maps, failures)
                mine = tokens.get("similarity", {}).get("logit", float("nan"))
                ok = abs(mine - logit) <= 1e-3 * max(1.0, abs(logit))
                print(f"hf-check {name}-logit {device} attnscope {mine:.6g} transformers {logit:.6g} "
                      f"({'ok' if ok else 'FAILED'})", flush=True)
                if not ok:
                    failures.append(f"{name} logit on {device}")
            jobs.append((f"{name} on {device}", job))
