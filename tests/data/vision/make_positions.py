#!/usr/bin/python3
"""Golden position-embedding interpolation (tests/core/models/test_vision_families.cpp).

Run with Debian's python3 (python3-torch, python3-numpy):  /usr/bin/python3 make_positions.py
It writes positions_golden.json beside itself: a random 4×4 grid of 3-wide position embeddings
resized with torch.nn.functional.interpolate(mode="bicubic", align_corners=False), as
Dinov2Embeddings.interpolate_pos_encoding does, and with antialias=True, as
Dinov2WithRegistersEmbeddings does, to grids smaller and larger than 4×4.
"""
import json
import os

import torch

torch.manual_seed(35)
grid = torch.randn(1, 3, 4, 4, dtype=torch.float64)  # [1, E, g, g] as the models permute it
cases = []
for size in (2, 3, 6, 7):
    for antialias in (False, True):
        out = torch.nn.functional.interpolate(grid, size=(size, size), mode="bicubic", align_corners=False,
                                              antialias=antialias)
        cases.append({"size": size, "antialias": antialias,
                      "values": out[0].permute(1, 2, 0).reshape(-1).tolist()})  # [size, size, E] row-major
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "positions_golden.json")
with open(path, "w") as f:
    json.dump({"generator": "make_positions.py", "g": 4, "E": 3, "torch": torch.__version__,
               "grid": grid[0].permute(1, 2, 0).reshape(-1).tolist(), "cases": cases}, f)
    f.write("\n")
