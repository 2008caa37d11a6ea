/**
 * src/domain is pure (STYLE.md): `.dependency-cruiser.cjs` refuses every import that is
 * not domain, node:* and packages included. What an import rule cannot see is checked
 * here: Node's globals and a package loaded through `require`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const DOMAIN = path.join(import.meta.dirname, '..', '..', 'src', 'domain');
const PLATFORM = /\bBuffer\b|\bprocess\.|\bimport\.meta\b|\bcreateRequire\b|\brequire\(|\b__dirname\b/;

test('no domain file reaches Node through a global or require', () => {
  const files = fs.readdirSync(DOMAIN, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  assert.ok(files.length > 20, `${files.length} domain files read`);
  const found = files.flatMap((file) =>
    fs
      .readFileSync(path.join(DOMAIN, file), 'utf8')
      .split('\n')
      .flatMap((line, i) => (PLATFORM.test(line) ? [`src/domain/${file}:${i + 1}: ${line.trim()}`] : [])),
  );
  assert.equal(found, []);
});

test.run();
