// Development-time tool (never run by CI): builds clip.json, a tokenizer.json laid out as
// transformers' CLIPConverter writes CLIP's (NFC, whitespace runs to one space, lowercase; the
// CLIP Split regex (removed, inverted) then ByteLevel; BPE with end_of_word_suffix "</w>" and no
// continuing prefix; RobertaProcessing with <|startoftext|> and <|endoftext|>; ByteLevel decoder),
// over a small vocabulary: the 256 byte-level symbols, each again with "</w>", merges trained
// here by pair counting, then the two special tokens. It runs Hugging Face's tokenizers (Rust,
// through its npm bindings) on golden.json's texts and writes clip_golden.json.
//
//   mkdir /tmp/tokref && cd /tmp/tokref && npm init -y && npm install tokenizers@0.23.2
//   NODE_PATH=/tmp/tokref/node_modules node tests/data/tokenizers/clip.mjs
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';
import { fileURLToPath } from 'url';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const here = path.dirname(fileURLToPath(import.meta.url));

// GPT-2's bytes_to_unicode: printable bytes keep their code point, the others go to 256 + k.
function byteSymbols() {
  const bs = [];
  for (let b = 33; b <= 126; ++b) bs.push(b);
  for (let b = 161; b <= 172; ++b) bs.push(b);
  for (let b = 174; b <= 255; ++b) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; ++b) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
  return bs.map((b, i) => [b, String.fromCodePoint(cs[i])]);
}

const symbols = byteSymbols();
const toSymbols = (word) => [...Buffer.from(word, 'utf8')].map((b) => symbols.find(([x]) => x === b)[1]);
const corpus = ('a photo of a cat sitting on the mat next to another cat and a dog that is sleeping in the sun ' +
  "the quick brown fox jumps over the lazy dog while photos of dogs and cats fill the internet it's what they're for " +
  'café naïve résumé tokens tokenizer tokenization 2024 3.14 hello world').split(' ');
const suffix = '</w>';
let words = corpus.map((w) => { const s = toSymbols(w); s[s.length - 1] += suffix; return s; });
const vocab = [];
for (const [, s] of symbols) vocab.push(s);
for (const [, s] of symbols) vocab.push(s + suffix);
const merges = [];
for (let step = 0; step < 150; ++step) {
  const counts = new Map();
  for (const w of words) for (let i = 0; i + 1 < w.length; ++i) { const k = w[i] + ' ' + w[i + 1]; counts.set(k, (counts.get(k) || 0) + 1); }
  let best = null, bestCount = 0;
  for (const [k, c] of counts) if (c > bestCount) { best = k; bestCount = c; }
  if (!best) break;
  const [a, b] = best.split(' ');
  merges.push(best);
  vocab.push(a + b);
  words = words.map((w) => { const o = []; for (let i = 0; i < w.length; ++i) { if (i + 1 < w.length && w[i] === a && w[i + 1] === b) { o.push(a + b); ++i; } else o.push(w[i]); } return o; });
}
const start = vocab.length, end = vocab.length + 1;
vocab.push('<|startoftext|>', '<|endoftext|>');
const special = (id, content, normalized) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized, special: true });
const tok = {
  version: '1.0', truncation: null, padding: null,
  added_tokens: [special(start, '<|startoftext|>', true), special(end, '<|endoftext|>', false)],
  normalizer: { type: 'Sequence', normalizers: [{ type: 'NFC' }, { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }, { type: 'Lowercase' }] },
  pre_tokenizer: { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: "'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+" }, behavior: 'Removed', invert: true },
    { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] },
  post_processor: { type: 'RobertaProcessing', sep: ['<|endoftext|>', end], cls: ['<|startoftext|>', start], trim_offsets: false, add_prefix_space: false },
  decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  model: { type: 'BPE', dropout: null, unk_token: '<|endoftext|>', continuing_subword_prefix: '', end_of_word_suffix: suffix,
    fuse_unk: false, byte_fallback: false, vocab: Object.fromEntries(vocab.map((t, i) => [t, i])), merges },
};
fs.writeFileSync(path.join(here, 'clip.json'), JSON.stringify(tok));

const texts = JSON.parse(fs.readFileSync(path.join(here, 'golden.json'), 'utf8')).texts;
const toBytes = (text, offsets) => {
  const at = [0];
  for (const c of [...text]) at.push(at[at.length - 1] + Buffer.byteLength(c, 'utf8'));
  return offsets.map(([b, e]) => [at[b], at[e]]);
};
const t = Tokenizer.fromString(JSON.stringify(tok));
const results = [];
for (const text of texts) {
  const e = await t.encode(text, null, { addSpecialTokens: true });
  const plain = await t.encode(text, null, { addSpecialTokens: false });
  const ids = e.getIds();
  results.push({ ids, tokens: e.getTokens(), offsets: toBytes(text, e.getOffsets()), ids_no_special: plain.getIds(),
    decoded: await t.decode(ids, false), decoded_skip_special: await t.decode(ids, true) });
}
fs.writeFileSync(path.join(here, 'clip_golden.json'), JSON.stringify({
  reference: 'tokenizers (Hugging Face, Rust) 0.23.2 via its npm bindings', tokenizer: 'clip.json', texts: 'golden.json', results }));
console.log(`clip.json: ${vocab.length} tokens, ${merges.length} merges; ${results.length} texts`);
