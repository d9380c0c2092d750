#!/usr/bin/python3
"""Golden preprocessing for the image processors AttnScope reads (tests/core/io/test_vision_preprocess.cpp).

Run with Debian's python3 (python3-pil, python3-numpy):  /usr/bin/python3 make_preprocess.py
It writes preprocess_golden.json beside itself: small random RGB images, a preprocessor_config.json
for each, and the pixel values Hugging Face's slow (PIL backend) image processors give, following
their code (transformers >= 4.47): image_transforms.resize (PIL's Image.resize on 8-bit RGB),
get_resize_output_image_size (shortest edge), center_crop (zero padding when the image is
smaller), rescale (float64 product, cast to float32) and normalize (float32), channels first.
The processors' defaults (DeiTImageProcessor, BeitImageProcessor, BitImageProcessor, ViTImageProcessor,
CLIPImageProcessor, SiglipImageProcessor) are filled in
here from their __init__ for the keys a case leaves out.
"""
import json
import math
import os

import numpy as np
from PIL import Image

HALF = [0.5, 0.5, 0.5]
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]
DEFAULTS = {
    "ViT": dict(size={"height": 224, "width": 224}, resample=2, crop=None, mean=HALF, std=HALF, edge=False),
    "DeiT": dict(size={"height": 256, "width": 256}, resample=3, crop={"height": 224, "width": 224},
                 mean=HALF, std=HALF, edge=False),
    "Beit": dict(size={"height": 256, "width": 256}, resample=3, crop={"height": 224, "width": 224},
                 mean=HALF, std=HALF, edge=False),
    "Bit": dict(size={"shortest_edge": 224}, resample=3, crop={"height": 224, "width": 224},
                mean=CLIP_MEAN, std=CLIP_STD, edge=True),
    "CLIP": dict(size={"shortest_edge": 224}, resample=3, crop={"height": 224, "width": 224},
                 mean=CLIP_MEAN, std=CLIP_STD, edge=True),
    "Siglip": dict(size={"height": 224, "width": 224}, resample=3, crop=None, mean=HALF, std=HALF, edge=False),
}


def size_dict(value, edge):
    if isinstance(value, int):
        return {"shortest_edge": value} if edge else {"height": value, "width": value}
    return value


def output_size(h, w, size):
    if "shortest_edge" in size:  # get_resize_output_image_size(default_to_square=False)
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = size["shortest_edge"], int(size["shortest_edge"] * long / short)
        return (new_long, new_short) if w <= h else (new_short, new_long)
    return size["height"], size["width"]


def center_crop(img, ch, cw):  # img [C, H, W]
    h, w = img.shape[1:]
    top, left = (h - ch) // 2, (w - cw) // 2
    bottom, right = top + ch, left + cw
    if top >= 0 and bottom <= h and left >= 0 and right <= w:
        return img[:, top:bottom, left:right]
    nh, nw = max(ch, h), max(cw, w)
    out = np.zeros((img.shape[0], nh, nw), dtype=img.dtype)
    tp, lp = math.ceil((nh - h) / 2), math.ceil((nw - w) / 2)
    out[:, tp:tp + h, lp:lp + w] = img
    top, bottom, left, right = top + tp, bottom + tp, left + lp, right + lp
    return out[:, max(0, top):min(nh, bottom), max(0, left):min(nw, right)]


def preprocess(pixels, kind, config):
    d = DEFAULTS[kind]
    size = size_dict(config.get("size", d["size"]), d["edge"])
    resample = config.get("resample", d["resample"])
    img = pixels
    if config.get("do_resize", True):
        h, w = output_size(img.shape[0], img.shape[1], size)
        img = np.array(Image.fromarray(img).resize((w, h), resample=resample))
    img = img.transpose(2, 0, 1)
    if d["crop"] is not None and config.get("do_center_crop", True):
        crop = size_dict(config.get("crop_size", d["crop"]), False)
        img = center_crop(img, crop["height"], crop["width"])
    img = (img.astype(np.float64) * config.get("rescale_factor", 1 / 255)).astype(np.float32)
    mean = np.array(config.get("image_mean", d["mean"]), dtype=np.float32)
    std = np.array(config.get("image_std", d["std"]), dtype=np.float32)
    return ((img.T - mean) / std).T


CASES = [
    # name, processor, image width × height, preprocessor_config.json
    ("deit resize up and down, crop", "DeiT", 13, 9,
     {"image_processor_type": "DeiTImageProcessor", "size": {"height": 12, "width": 12},
      "crop_size": {"height": 8, "width": 8}}),
    ("deit strong downscale", "DeiT", 31, 29,
     {"image_processor_type": "DeiTImageProcessor", "size": {"height": 8, "width": 8},
      "crop_size": {"height": 8, "width": 8}}),
    ("bit shortest edge, imagenet mean", "Bit", 11, 17,
     {"image_processor_type": "BitImageProcessor", "size": {"shortest_edge": 10},
      "crop_size": {"height": 8, "width": 8}, "image_mean": [0.485, 0.456, 0.406],
      "image_std": [0.229, 0.224, 0.225]}),
    ("bit one-number size is the shortest edge, crop pads", "Bit", 8, 5,
     {"image_processor_type": "BitImageProcessor", "size": 6, "crop_size": 9}),
    ("bit landscape shortest edge", "Bit", 19, 7,
     {"image_processor_type": "BitImageProcessorFast", "size": {"shortest_edge": 9}, "crop_size": 6}),
    ("beit one-number size is a square", "Beit", 15, 12,
     {"image_processor_type": "BeitImageProcessor", "size": 10, "crop_size": {"height": 6, "width": 6}}),
    ("vit bilinear ignores crop keys", "ViT", 20, 14,
     {"image_processor_type": "ViTImageProcessor", "size": {"height": 7, "width": 7},
      "do_center_crop": True, "crop_size": 3}),
    ("clip shortest edge, crop, openai mean", "CLIP", 14, 10,
     {"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 8},
      "crop_size": {"height": 8, "width": 8}}),
    ("clip one-number sizes, portrait", "CLIP", 9, 23, {"image_processor_type": "CLIPImageProcessor", "size": 7,
                                                         "crop_size": 6}),
    ("siglip square resize, no crop, half mean", "Siglip", 13, 9,
     {"image_processor_type": "SiglipImageProcessor", "size": {"height": 7, "width": 7}}),
    ("siglip upscale", "Siglip", 5, 6, {"image_processor_type": "SiglipImageProcessor", "size": {"height": 11,
                                                                                                 "width": 11}}),
]


def main():
    rng = np.random.default_rng(35)
    cases = []
    for name, kind, w, h, config in CASES:
        pixels = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
        out = preprocess(pixels, kind, config)
        cases.append({"name": name, "config": config, "width": w, "height": h,
                      "pixels": pixels.reshape(-1).tolist(), "shape": list(out.shape),
                      "values": [float(v) for v in out.reshape(-1)]})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "preprocess_golden.json")
    with open(path, "w") as f:
        json.dump({"generator": "make_preprocess.py", "cases": cases}, f, indent=None)
        f.write("\n")


if __name__ == "__main__":
    main()
