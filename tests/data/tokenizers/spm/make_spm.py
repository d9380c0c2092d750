#!/usr/bin/python3
# Development-time tool (never run by CI): trains the small SentencePiece models in this folder
# on local text with Debian's python3-sentencepiece, writes what SentencePiece itself encodes
# (golden_spm.json), the model folders laid out as each family ships them, and unigram.json: the
# Unigram model as Hugging Face's converter writes a tokenizer.json (Precompiled normalizer from
# the model's charsmap), whose reference ids hf_golden.mjs then records with HF's tokenizers.
#
#   /usr/bin/python3 tests/data/tokenizers/spm/make_spm.py
#   NODE_PATH=/tmp/tokref/node_modules node tests/data/tokenizers/spm/hf_golden.mjs
import base64, glob, io, json, os, random, struct, sys, unicodedata
import sentencepiece as spm

here = os.path.dirname(os.path.abspath(__file__))

# Hard texts (tests/core/tokenizer/test_sentencepiece*.cpp read them from golden_spm.json).
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


def corpus(extra=()):
    lines = list(extra)
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
    extra = opts.pop("extra_corpus", ())
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus(extra)), model_writer=model, **opts)
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


# ---- more families: Gemma, ALBERT, XLNet, DeBERTa-v2, mBART-50 ---------------------------------
# Texts for the families below (on top of TEXTS and SPECIAL_TEXTS): the digit-comma pieces
# ALBERT/XLNet split, quotes, case, accents, punctuation and each family's own special tokens.
MORE_TEXTS = [
    "In 1990, 2000, and 2010, about 1,234,567 people; 3,5 and 12,",
    "``quoted'' and ''twice`` HELLO World",
    "ÉCOLE Straße İstanbul ΣΊΣΥΦΟΣ",
    "punct: a,b.c!d?(e)[f]{g}-h_i'j\"k",
    "[CLS] [SEP] [MASK] [UNK] [PAD] and [mask]",
    "a [MASK] b  [MASK]c",
    "<cls> <sep> <eod> <eop> <mask> x",
    "<bos>twice <eos> <pad> end",
    "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n",
    "en_XX fr_XX sl_SI inside",
]

MBART50_CODES = MBART_CODES + ["af_ZA", "az_AZ", "bn_IN", "fa_IR", "he_IL", "hr_HR", "id_ID", "ka_GE", "km_KH", "mk_MK",
                               "ml_IN", "mn_MN", "mr_IN", "pl_PL", "ps_AF", "pt_XX", "sv_SE", "sw_KE", "ta_IN", "te_IN",
                               "th_TH", "tl_XX", "uk_UA", "ur_PK", "xh_ZA", "gl_ES", "sl_SI"]


def lower_outside(text, specials):
    """PreTrainedTokenizer.tokenize with do_lower_case: the text lowercased except the special tokens."""
    out, i = "", 0
    order = sorted(specials, key=len, reverse=True)
    while i < len(text):
        hit = next((t for t in order if text.startswith(t, i)), None)
        if hit:
            out += hit
            i += len(hit)
        else:
            out += text[i].lower()
            i += 1
    return out


def albert_preprocess(text, lower, keep_accents=False, remove_space=True):
    """AlbertTokenizer.preprocess_text (XLNet's is the same)."""
    out = " ".join(text.strip().split()) if remove_space else text
    out = out.replace("``", '"').replace("''", '"')
    if not keep_accents:
        out = unicodedata.normalize("NFKD", out)
        out = "".join(c for c in out if not unicodedata.combining(c))
    return out.lower() if lower else out


class AlbertPieces:
    """AlbertTokenizer._tokenize: SentencePiece on the preprocessed chunk, then a piece ending in
    digit + "," is encoded again without it (and without "▁") and the comma put after."""
    def __init__(self, sp, lower, keep_accents=False):
        self.sp, self.lower, self.keep = sp, lower, keep_accents

    def encode(self, chunk, out_type=str):
        pieces = self.sp.encode(albert_preprocess(chunk, self.lower, self.keep), out_type=str)
        out = []
        for piece in pieces:
            if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
                cur = self.sp.encode(piece[:-1].replace("▁", ""), out_type=str)
                if piece[0] != "▁" and cur[0][0] == "▁":
                    if len(cur[0]) == 1:
                        cur = cur[1:]
                    else:
                        cur[0] = cur[0][1:]
                cur.append(piece[-1])
                out.extend(cur)
            else:
                out.append(piece)
        return out


def is_punct(c):
    cp = ord(c)
    return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or unicodedata.category(c).startswith("P")


class DebertaPieces:
    """DebertaV2Tokenizer._tokenize: lowercased when do_lower_case, with split_by_punct every
    punctuation character its own word and each word encoded alone."""
    def __init__(self, sp, lower, split_by_punct):
        self.sp, self.lower, self.split = sp, lower, split_by_punct

    def encode(self, chunk, out_type=str):
        text = chunk.lower() if self.lower else chunk
        if not self.split:
            return self.sp.encode(text, out_type=str)
        words, new = [], True
        for c in text:
            if is_punct(c):
                words.append(c)
                new = True
            else:
                if new:
                    words.append("")
                new = False
                words[-1] += c
        return [p for w in words for p in self.sp.encode(w, out_type=str)]


def more_layouts(gemma, albert, xlnet, deberta, uni, texts):
    P = lambda m: spm.SentencePieceProcessor(model_proto=m)
    res = {}

    def run(name, sp, specials, to_id, prefix, suffix, lower=False):
        rows = []
        for t in texts:
            text = lower_outside(t, specials) if lower else t
            ids = [to_id(p) for p in slow_tokenize(sp, text, specials)]
            rows.append({"text": t, "ids": prefix + ids + suffix, "ids_no_special": ids})
        res[name] = rows

    # Gemma: <bos> $A (add_bos_token), <eos> with add_eos_token; <pad> <eos> <bos> <unk> split out,
    # and the added_tokens_decoder of the test's tokenizer_config (<start_of_turn>, <end_of_turn>).
    s = P(gemma)
    spec = {t: (False, False) for t in ("<bos>", "<eos>", "<unk>", "<pad>")}
    run("gemma", s, spec, s.piece_to_id, [s.piece_to_id("<bos>")], [])
    turn = {**spec, "<start_of_turn>": (False, False), "<end_of_turn>": (False, False)}
    run("gemma_turns_eos", s, turn, s.piece_to_id, [s.piece_to_id("<bos>")], [s.piece_to_id("<eos>")])
    # ALBERT: [CLS] $A [SEP]; do_lower_case (default true), [MASK] with lstrip.
    s = P(albert)
    spec = {"[CLS]": (False, False), "[SEP]": (False, False), "<unk>": (False, False), "<pad>": (False, False),
            "[MASK]": (True, False)}
    cls, sep = s.piece_to_id("[CLS]"), s.piece_to_id("[SEP]")
    run("albert", AlbertPieces(s, True), spec, s.piece_to_id, [cls], [sep], lower=True)
    run("albert_cased_accents", AlbertPieces(s, False, keep_accents=True), spec, s.piece_to_id, [cls], [sep])
    # XLNet: $A <sep> <cls>; do_lower_case false by default; <mask> with lstrip; <eop> <eod>.
    s = P(xlnet)
    spec = {t: (False, False) for t in ("<s>", "</s>", "<unk>", "<sep>", "<pad>", "<cls>", "<eop>", "<eod>")}
    spec["<mask>"] = (True, False)
    run("xlnet", AlbertPieces(s, False), spec, s.piece_to_id, [], [s.piece_to_id("<sep>"), s.piece_to_id("<cls>")])
    # DeBERTa-v2/v3: [CLS] $A [SEP]; [MASK] added after the pieces (id = the model's size).
    s = P(deberta)
    n = s.get_piece_size()
    spec = {t: (False, False) for t in ("[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]")}
    did = lambda p: n if p == "[MASK]" else s.piece_to_id(p)
    run("deberta_v2", DebertaPieces(s, False, False), spec, did, [1], [2])
    run("deberta_v2_lower_punct", DebertaPieces(s, True, True), spec, did, [1], [2], lower=True)
    # mBART-50: fairseq ids as mBART's, 52 language codes, "src_lang $A </s>" (tgt_lang on the target side).
    s = P(uni)
    n = s.get_piece_size()
    fair = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    table = {**fair, **{c: n + 1 + i for i, c in enumerate(MBART50_CODES)}, "<mask>": n + 1 + len(MBART50_CODES)}
    def fid(p):
        if p in table: return table[p]
        i = s.piece_to_id(p)
        return i + 1 if i else 3
    spec = {**{k: (False, False) for k in table}, "<mask>": (True, False)}
    run("mbart50", s, spec, fid, [table["en_XX"]], [2])
    run("mbart50_target_sl", s, spec, fid, [table["sl_SI"]], [2])
    return res


def P_size(m):
    return spm.SentencePieceProcessor(model_proto=m).get_piece_size()


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

    # Marian with separate_vocabs: target_vocab.json over target.model's pieces only, in another
    # order, read on the target side (vocab.json stays the source side's).
    tnames = ["</s>", "<unk>"]
    trest = sorted({x["piece"] for x in pieces_and_charsmap(tgt)[0]} - set(tnames) - {"<s>"})
    random.Random(34).shuffle(trest)
    tvocab = {t: i for i, t in enumerate(tnames + trest + ["<pad>"])}
    with open(os.path.join(here, "marian_target_vocab.json"), "w", encoding="utf-8") as f:
        json.dump(tvocab, f, ensure_ascii=False)
    tp = spm.SentencePieceProcessor(model_proto=tgt)
    mspec = {"</s>": (False, False), "<unk>": (False, False), "<pad>": (False, False)}
    rows = []
    for t in texts:
        ids = [tvocab.get(p, tvocab["<unk>"]) for p in slow_tokenize(tp, t, mspec)]
        rows.append({"text": t, "ids": ids + [tvocab["</s>"]], "ids_no_special": ids})
    out["layouts"]["marian_target_separate"] = rows

    # Gemma's tokenizer.model as Google trains it: byte-fallback BPE with <pad>=0 <eos>=1 <bos>=2
    # <unk>=3, <mask> and the turn markers as user-defined pieces, digits split, no dummy prefix,
    # whitespace kept as it is.
    gemma = train("gemma.model", model_type="bpe", vocab_size=700, character_coverage=0.9995, byte_fallback=True,
                  split_digits=True, add_dummy_prefix=False, remove_extra_whitespaces=False,
                  normalization_rule_name="identity", allow_whitespace_only_pieces=True,
                  pad_id=0, eos_id=1, bos_id=2, unk_id=3, pad_piece="<pad>", eos_piece="<eos>", bos_piece="<bos>",
                  unk_piece="<unk>", user_defined_symbols=["<mask>", "<start_of_turn>", "<end_of_turn>"])
    numbers = ["In %d, %d, and %d, about %d,%03d people came, %d, %d," % (1900 + i, 1950 + i, 2000 + i, i, 7 * i % 1000, i, i + 1)
               for i in range(300)]
    # ALBERT's spiece.model: Unigram, nmt_nfkc, <pad>=0 <unk>=1 [CLS]=2 [SEP]=3 [MASK]=4.
    albert = train("albert.model", model_type="unigram", vocab_size=900, character_coverage=0.9995,
                   normalization_rule_name="nmt_nfkc", pad_id=0, unk_id=1, bos_id=-1, eos_id=-1,
                   control_symbols=["[CLS]", "[SEP]", "[MASK]"], extra_corpus=numbers)
    # XLNet's: <unk>=0 <s>=1 </s>=2, then <cls> <sep> <pad> <mask> <eod> <eop>.
    xlnet = train("xlnet.model", model_type="unigram", vocab_size=800, character_coverage=0.9995,
                  normalization_rule_name="nmt_nfkc", unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
                  control_symbols=["<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>"], extra_corpus=numbers)
    # DeBERTa-v3's spm.model: [PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3 (its [MASK] is an added token).
    deberta = train("deberta.model", model_type="unigram", vocab_size=700, character_coverage=0.9995,
                    normalization_rule_name="nmt_nfkc", pad_id=0, bos_id=1, eos_id=2, unk_id=3, pad_piece="[PAD]",
                    bos_piece="[CLS]", eos_piece="[SEP]", unk_piece="[UNK]")
    more = TEXTS + SPECIAL_TEXTS + MORE_TEXTS
    out["more_texts"] = MORE_TEXTS
    out["sizes"].update({"gemma": P_size(gemma), "albert": P_size(albert), "xlnet": P_size(xlnet), "deberta": P_size(deberta)})
    out["layouts"].update(more_layouts(gemma, albert, xlnet, deberta, uni, more))
    # Gemma decodes with the library (no dummy prefix to drop).
    g = spm.SentencePieceProcessor(model_proto=gemma)
    out["decoded"]["gemma"] = [g.decode(g.encode(t)) for t in TEXTS]

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
