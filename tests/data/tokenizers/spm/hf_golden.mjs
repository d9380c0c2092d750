// Development-time tool (never run by CI): Hugging Face's tokenizers (Rust, npm bindings
// 0.23.2, see ../generate.mjs for the install) on unigram.json (make_spm.py writes it) as T5's,
// ALBERT's, DeBERTa-v2's and an Nmt converter would lay out the normalizer; writes hf_golden.json.
//   NODE_PATH=/tmp/tokref/node_modules node tests/data/tokenizers/spm/hf_golden.mjs
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';
import { fileURLToPath } from 'url';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const here = path.dirname(fileURLToPath(import.meta.url));
const base = JSON.parse(fs.readFileSync(path.join(here, 'unigram.json'), 'utf8'));
const golden = JSON.parse(fs.readFileSync(path.join(here, 'golden_spm.json'), 'utf8'));
const texts = [...golden.texts, ...golden.special_texts];
const pre = base.normalizer;
const replace = (from, to, regex = false) => ({ type: 'Replace', pattern: regex ? { Regex: from } : { String: from }, content: to });
const normalizers = {
  t5: pre,
  albert: { type: 'Sequence', normalizers: [replace('``', '"'), replace("''", '"'), { type: 'NFKD' }, { type: 'StripAccents' }, { type: 'Lowercase' }, pre] },
  'deberta-v2': { type: 'Sequence', normalizers: [{ type: 'Strip', strip_left: true, strip_right: true }, pre, replace(' {2,}', ' ', true)] },
  nmt: { type: 'Sequence', normalizers: [{ type: 'Nmt' }, { type: 'NFKC' }, replace(' {2,}', ' ', true)] },
};
const toBytes = (text, offsets) => {
  const at = [0];
  for (const c of [...text]) at.push(at[at.length - 1] + Buffer.byteLength(c, 'utf8'));
  return offsets.map(([b, e]) => [at[b], at[e]]);
};
const out = { reference: 'tokenizers (Hugging Face, Rust) 0.23.2 via its npm bindings', texts, cases: [] };
for (const [name, normalizer] of Object.entries(normalizers)) {
  const tok = Tokenizer.fromString(JSON.stringify({ ...base, normalizer }));
  const results = [];
  for (const text of texts) {
    const e = await tok.encode(text, null, { addSpecialTokens: true });
    const plain = await tok.encode(text, null, { addSpecialTokens: false });
    results.push({ ids: e.getIds(), tokens: e.getTokens(), offsets: toBytes(text, e.getOffsets()), ids_no_special: plain.getIds(),
                   decoded: await tok.decode(e.getIds(), true) });
  }
  // The normalizer as written, with unigram.json's Precompiled entry shown as {type: 'Precompiled'}.
  const shown = JSON.parse(JSON.stringify(normalizer, (k, v) => (v === pre ? { type: 'Precompiled' } : v)));
  out.cases.push({ name, normalizer: shown, results });
}
fs.writeFileSync(path.join(here, 'hf_golden.json'), JSON.stringify(out));
console.log(`${out.cases.length} cases x ${texts.length} texts`);
