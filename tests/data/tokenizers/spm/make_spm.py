#!/usr/bin/python3
# Development-time tool (never run by CI): trains the small SentencePiece models in this folder
# on local text with Debian's python3-sentencepiece, writes what SentencePiece itself encodes
# (golden_spm.json), the model folders laid out as each family ships them, and unigram.json: the
# Unigram model as Hugging Face's converter writes a tokenizer.json (Precompiled normalizer from
# the model's charsmap), whose reference ids hf_golden.mjs then records with HF's tokenizers.
#
#   /usr/bin/python3 tests/data/tokenizers/spm/make_spm.py
#   NODE_PATH=/tmp/tokref/node_modules node tests/data/tokenizers/spm/hf_golden.mjs
import base64, glob, io, json, os, random, struct, sys
import sentencepiece as spm

here = os.path.dirname(os.path.abspath(__file__))

# Hard texts (tests/core/test_sentencepiece*.cpp read them from golden_spm.json).
TEXTS = [
    "Hello world",
    "The GNU General Public License is a free, copyleft license for software.",
    "  leading and  repeated   spaces ",
    "tabs\tand\nnewlines\n\nend\r\n",
    "Café naïve résumé Ünïcödé ÅÆØ",
    "combining e\u0301 a\u0308 o\u0302\u0323",
    "ＦＵＬＬ－ｗｉｄｔｈ　ｆｏｒｍｓ　１２３！",
    "ligatures: ﬁ ﬂ ﬀ ﬃ ﬆ",
    "NBSP:\u00a0here\u00a0and\u202fthin\u2009space",
    "digits 3.14159, 2026-12-01 and 1234567890",
    "emoji 😀👍🏽 and 🇫🇷 👨\u200d👩\u200d👧",
    "CJK 日本語の文章と中文字符 한국어",
    "Ⅻ ½ ² ℃ ㎞ ﹤tag﹥",
    "zero\u200bwidth and soft\u00adhyphen",
    "x",
    " ",
    "",
    "▁already▁marked",
]
# Texts with the families' special tokens in them.
SPECIAL_TEXTS = [
    "hello </s> world",
    "<s>start and end</s>",
    "a <extra_id_0> b <extra_id_1>c",
    "mask <mask> here",
    ">>fr<< Bonjour le monde",
    "<unk> stays",
]


def corpus():
    lines = []
    for f in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(f):
            with open(f, encoding="utf-8", errors="ignore") as fh:
                lines += [l.strip() for l in fh if l.strip()]
    # Some non-ASCII text so that part of it is in the vocabulary and part is not.
    lines += ["Café naïve résumé déjà vu", "日本語の文章", "ｆｕｌｌ ｗｉｄｔｈ", "emoji 😀 text"] * 3
    return lines


def train(name, **opts):
    # Trained once: the committed models stay as they are unless RETRAIN=1 (training is not
    # bit-for-bit repeatable across machines).
    if os.path.exists(os.path.join(here, name)) and not os.environ.get("RETRAIN"):
        with open(os.path.join(here, name), "rb") as f:
            return f.read()
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus()), model_writer=model, **opts)
    with open(os.path.join(here, name), "wb") as f:
        f.write(model.getvalue())
    return model.getvalue()


# ---- a minimal protobuf reader for ModelProto (no python3-protobuf here) ---------------------
def fields(buf):
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def varint(buf, i):
    out = shift = 0
    while True:
        b = buf[i]
        i += 1
        out |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return out, i


def pieces_and_charsmap(model):
    pieces, charsmap = [], b""
    for num, _, v in fields(model):
        if num == 1:
            p = {"piece": "", "score": 0.0, "type": 1}
            for n2, _, v2 in fields(v):
                if n2 == 1: p["piece"] = v2.decode("utf-8")
                if n2 == 2: p["score"] = struct.unpack("<f", v2)[0]
                if n2 == 3: p["type"] = v2
            pieces.append(p)
        if num == 3:
            for n2, _, v2 in fields(v):
                if n2 == 2: charsmap = v2
    return pieces, charsmap


def golden(model_bytes, texts):
    sp = spm.SentencePieceProcessor(model_proto=model_bytes)
    return [{"text": t, "ids": sp.encode(t), "pieces": sp.encode(t, out_type=str)} for t in texts]


# ---- the families' layouts, restated from transformers' slow tokenizers ------------------------
def slow_tokenize(sp, text, specials):
    """PreTrainedTokenizer.tokenize: split out the special tokens (longest first), strip around
    those with lstrip/rstrip, SentencePiece on each other chunk. specials: {token: (lstrip, rstrip)}."""
    chunks, i = [], 0
    order = sorted(specials, key=len, reverse=True)
    while i < len(text):
        hit = next((t for t in order if text.startswith(t, i)), None)
        if hit:
            chunks.append((hit, True))
            i += len(hit)
        else:
            if chunks and not chunks[-1][1]:
                chunks[-1] = (chunks[-1][0] + text[i], False)
            else:
                chunks.append((text[i], False))
            i += 1
    for k, (c, special) in enumerate(chunks):
        if not special:
            continue
        lstrip, rstrip = specials[c]
        if rstrip and k + 1 < len(chunks) and not chunks[k + 1][1]:
            chunks[k + 1] = (chunks[k + 1][0].lstrip(), False)
        if lstrip and k > 0 and not chunks[k - 1][1]:
            chunks[k - 1] = (chunks[k - 1][0].rstrip(), False)
    out = []
    for c, special in chunks:
        if not c:
            continue
        out += [c] if special else sp.encode(c, out_type=str)
    return out


MBART_CODES = ["ar_AR", "cs_CZ", "de_DE", "en_XX", "es_XX", "et_EE", "fi_FI", "fr_XX", "gu_IN", "hi_IN", "it_IT", "ja_XX",
               "kk_KZ", "ko_KR", "lt_LT", "lv_LV", "my_MM", "ne_NP", "nl_XX", "ro_RO", "ru_RU", "si_LK", "tr_TR", "vi_VN", "zh_CN"]


def layouts(uni, bpe, tgt, t5, marian_vocab, texts):
    P = lambda m: spm.SentencePieceProcessor(model_proto=m)
    res = {}

    def run(name, sp, specials, to_id, prefix, suffix, t5_eos=False):
        rows = []
        for t in texts:
            ids = [to_id(p) for p in slow_tokenize(sp, t, specials)]
            full = prefix + ids + ([] if t5_eos and ids and ids[-1] == suffix[-1] else suffix)
            rows.append({"text": t, "ids": full, "ids_no_special": ids})
        res[name] = rows

    # T5: </s>, <unk>, <pad> and 100 <extra_id_N> (lstrip, rstrip) at the top.
    s = P(t5); n = s.get_piece_size()
    extra = {"<extra_id_%d>" % i: n + 99 - i for i in range(100)}
    spec = {"</s>": (False, False), "<unk>": (False, False), "<pad>": (False, False), **{k: (True, True) for k in extra}}
    run("t5", s, spec, lambda p: extra.get(p, s.piece_to_id(p)), [], [s.piece_to_id("</s>")], t5_eos=True)
    # Llama: <s> per add_bos_token (default), and with add_eos_token.
    s = P(bpe)
    spec = {"<s>": (False, False), "</s>": (False, False), "<unk>": (False, False)}
    run("llama", s, spec, s.piece_to_id, [1], [])
    run("llama_eos", s, spec, s.piece_to_id, [1], [2])
    # Llama with "legacy": false: the model without its dummy prefix (a second normalizer_spec
    # with add_dummy_prefix false, which protobuf merges), "▁" before the text, chunks starting
    # with a space encoded behind "<unk>" whose pieces are then dropped.
    nd = P(bpe + b"\x1a\x02\x18\x00")
    unk_len = len(nd.encode("<unk>"))
    class NonLegacy:
        def encode(self, chunk, out_type=str):
            if not chunk.startswith(("▁", " ")):
                return nd.encode(chunk, out_type=str)
            return nd.encode("<unk>" + chunk, out_type=str)[unk_len:]
    rows = []
    for t in texts:
        toks = slow_tokenize(NonLegacy(), "▁" + t.replace("▁", " "), spec) if t else []
        if len(toks) > 1 and toks[0] == "▁" and toks[1] in spec:
            toks = toks[1:]
        ids = [s.piece_to_id(p) for p in toks]
        rows.append({"text": t, "ids": [1] + ids, "ids_no_special": ids})
    res["llama_nonlegacy"] = rows
    # XLM-R and mBART: fairseq ids.
    s = P(uni); n = s.get_piece_size()
    fair = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    def fid(p, table):
        if p in table: return table[p]
        i = s.piece_to_id(p)
        return i + 1 if i else 3
    xl = {**fair, "<mask>": n + 1}
    run("xlmr", s, {**{k: (False, False) for k in fair}, "<mask>": (True, False)}, lambda p: fid(p, xl), [0], [2])
    mb = {**fair, **{c: n + 1 + i for i, c in enumerate(MBART_CODES)}, "<mask>": n + 1 + len(MBART_CODES)}
    mspec = {**{k: (False, False) for k in mb}, "<mask>": (True, False)}
    run("mbart", s, mspec, lambda p: fid(p, mb), [], [2, mb["en_XX"]])
    run("mbart_target_fr", s, mspec, lambda p: fid(p, mb), [], [2, mb["fr_XX"]])
    # Marian: vocab.json ids, </s> appended; source.spm and target.spm.
    mspec = {"</s>": (False, False), "<unk>": (False, False), "<pad>": (False, False), ">>fr<<": (False, False), ">>de<<": (False, False)}
    v = lambda p: marian_vocab.get(p, marian_vocab["<unk>"])
    run("marian_source", s, mspec, v, [], [marian_vocab["</s>"]])
    run("marian_target", P(tgt), mspec, v, [], [marian_vocab["</s>"]])
    return res


def main():
    uni = train("unigram.model", model_type="unigram", vocab_size=1000, character_coverage=0.9995,
                normalization_rule_name="nmt_nfkc", user_defined_symbols=[])
    bpe = train("bpe.model", model_type="bpe", vocab_size=800, character_coverage=0.9995, byte_fallback=True,
                normalization_rule_name="identity", remove_extra_whitespaces=False, split_digits=True)
    # Marian's target side: a second, smaller model, so that source and target differ.
    tgt = train("target.model", model_type="unigram", vocab_size=600, character_coverage=0.9995,
                normalization_rule_name="identity")
    # T5's own id layout (<pad>=0, </s>=1, <unk>=2, no <s>).
    t5 = train("t5.model", model_type="unigram", vocab_size=500, character_coverage=0.9995,
               normalization_rule_name="identity", pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    texts = TEXTS + SPECIAL_TEXTS
    out = {"texts": TEXTS, "special_texts": SPECIAL_TEXTS,
           "unigram": golden(uni, texts), "bpe": golden(bpe, texts), "target": golden(tgt, texts)}
    sp = {k: spm.SentencePieceProcessor(model_proto=m) for k, m in (("unigram", uni), ("bpe", bpe), ("target", tgt))}
    out["sizes"] = {k: p.get_piece_size() for k, p in sp.items()}
    # decode(encode(text)) as SentencePiece writes it back.
    out["decoded"] = {k: [p.decode(p.encode(t)) for t in TEXTS] for k, p in sp.items()}

    # Marian: one vocab.json over both models' pieces, in a shuffled order (ids are vocab.json's,
    # not SentencePiece's), with Marian's </s>=0 <unk>=1 first, language codes and <pad> last.
    names = ["</s>", "<unk>", ">>fr<<", ">>de<<"]
    rest = sorted({p for m in (uni, tgt) for p in (x["piece"] for x in pieces_and_charsmap(m)[0])} - set(names) - {"<s>"})
    random.Random(12).shuffle(rest)
    vocab = {t: i for i, t in enumerate(names + rest + ["<pad>"])}
    with open(os.path.join(here, "marian_vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    out["layouts"] = layouts(uni, bpe, tgt, t5, vocab, texts)

    # tokenizer.json as transformers' SpmConverter (T5Converter) builds it from unigram.model.
    pieces, charsmap = pieces_and_charsmap(uni)
    unk = next(i for i, p in enumerate(pieces) if p["type"] == 2)
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": p["piece"], "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, p in enumerate(pieces) if p["type"] in (2, 3)],
        "normalizer": {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                    {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [sp["unigram"].piece_to_id("</s>")], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": unk, "vocab": [[p["piece"], p["score"]] for p in pieces], "byte_fallback": False},
    }
    with open(os.path.join(here, "unigram.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    out["charsmap_bytes"] = len(charsmap)
    with open(os.path.join(here, "golden_spm.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=0)


main()
