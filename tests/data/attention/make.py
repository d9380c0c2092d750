# Development-time golden data (run once with Debian's /usr/bin/python3; the files are committed):
# what a Python user saves from Hugging Face, numpy.save of torch.stack(outputs.attentions) with
# its batch axis, in float16 and float64, a tokens list beside the float16 one, and the values the
# test expects (float16 widened to float32 exactly).
import json

import numpy as np
import torch

torch.manual_seed(0)
L, H, n = 2, 3, 4
logits = torch.randn(L, 1, H, n, n)
mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
att = torch.softmax(logits.masked_fill(mask, float("-inf")), -1)
d = "tests/data/attention/"
np.save(d + "hf_stack_f16.npy", att.numpy().astype(np.float16))
np.save(d + "hf_stack_f64.npy", att.double().numpy())
json.dump(["The", "▁quick", "▁brown", "▁fox"], open(d + "hf_stack_f16.tokens.json", "w"))
json.dump({"shape": [L, H, n, n],
           "f16_as_float": att.numpy().astype(np.float16).astype(np.float32).reshape(-1).tolist(),
           "f64": att.double().numpy().reshape(-1).tolist()}, open(d + "hf_stack_expected.json", "w"))
