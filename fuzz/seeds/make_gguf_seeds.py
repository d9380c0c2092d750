#!/usr/bin/env python3
"""Writes the GGUF fuzz seeds here (small files: each block type, both tokenizer kinds).
Run once at development time, from fuzz/seeds/gguf: python3 ../make_gguf_seeds.py"""
import random
import struct

random.seed(1)
BLOCKS = {0: (1, 4), 1: (1, 2), 30: (1, 2), 8: (32, 34), 2: (32, 18), 12: (256, 144), 13: (256, 176), 14: (256, 210)}


def s(text):
    b = text.encode()
    return struct.pack('<Q', len(b)) + b


def kv(key, typ, payload):
    return s(key) + struct.pack('<I', typ) + payload


def arr(elem, items):
    return struct.pack('<IQ', elem, len(items)) + b''.join(items)


def gguf(meta, tensors, version=3, align=32):
    out = b'GGUF' + struct.pack('<IQQ', version, len(tensors), len(meta)) + b''.join(meta)
    infos, data, at = b'', b'', 0
    for name, dims, typ, payload in tensors:
        infos += s(name) + struct.pack('<I', len(dims)) + b''.join(struct.pack('<Q', d) for d in dims)
        infos += struct.pack('<IQ', typ, at)
        data += payload + b'\0' * ((-len(payload)) % align)
        at = len(data)
    out += infos
    out += b'\0' * ((-len(out)) % align)
    return out + data


def tensor(name, dims, typ):
    elems, size = BLOCKS[typ]
    n = 1
    for d in dims:
        n *= d
    payload = bytearray(random.getrandbits(8) for _ in range(n // elems * size))
    if typ in (0,):
        payload = b''.join(struct.pack('<f', random.uniform(-1, 1)) for _ in range(n))
    return (name, dims, typ, bytes(payload))


arch = [kv('general.architecture', 8, s('llama')), kv('general.alignment', 4, struct.pack('<I', 32)),
        kv('llama.block_count', 4, struct.pack('<I', 1)), kv('llama.attention.head_count', 4, struct.pack('<I', 2))]
for typ, name in [(0, 'f32'), (1, 'f16'), (30, 'bf16'), (8, 'q8_0'), (2, 'q4_0'), (12, 'q4_k'), (13, 'q5_k'), (14, 'q6_k')]:
    width = 256 if BLOCKS[typ][0] == 256 else 64
    open(f'{name}.gguf', 'wb').write(gguf(arch, [tensor('blk.0.attn_q.weight', [width, 4], typ),
                                                 tensor('output_norm.weight', [width], 0)]))

tokens = ['a', 'b', 'ab', '<s>', 'Ġ', 'Ġa']
types = [1, 1, 1, 3, 1, 1]
tok = [kv('tokenizer.ggml.model', 8, s('gpt2')), kv('tokenizer.ggml.pre', 8, s('llama-bpe')),
       kv('tokenizer.ggml.tokens', 9, arr(8, [s(t) for t in tokens])),
       kv('tokenizer.ggml.token_type', 9, arr(5, [struct.pack('<i', t) for t in types])),
       kv('tokenizer.ggml.merges', 9, arr(8, [s('a b'), s('Ġ a')])),
       kv('tokenizer.ggml.add_bos_token', 7, b'\1'), kv('tokenizer.ggml.bos_token_id', 4, struct.pack('<I', 3))]
open('tokenizer_gpt2.gguf', 'wb').write(gguf(tok, [], version=2))
pieces = ['<unk>', '<s>', '</s>', '<0x41>', '▁', 'h', 'i', '▁h', 'hi', '▁hi']
spm = [kv('tokenizer.ggml.model', 8, s('llama')),
       kv('tokenizer.ggml.tokens', 9, arr(8, [s(t) for t in pieces])),
       kv('tokenizer.ggml.scores', 9, arr(6, [struct.pack('<f', -i) for i in range(len(pieces))])),
       kv('tokenizer.ggml.token_type', 9, arr(5, [struct.pack('<i', t) for t in [2, 3, 3, 6, 1, 1, 1, 1, 1, 1]])),
       kv('tokenizer.ggml.add_space_prefix', 7, b'\1'), kv('tokenizer.ggml.add_bos_token', 7, b'\1'),
       kv('tokenizer.ggml.bos_token_id', 4, struct.pack('<I', 1))]
open('tokenizer_llama.gguf', 'wb').write(gguf(spm, []))
