/**
 * Writes `test/fixtures/secrets/gitleaks-examples.json`: each gitleaks rule's own true and
 * false positives, as gitleaks' sources state them (`cmd/generate/config/rules/*.go`, the
 * `tps` and `fps` each rule is validated with), for the gitleaks version whose
 * `config/gitleaks.toml` is pinned in `src/redaction/secret-rules/gitleaks/`.
 *
 *   node --import tsx test/support/gitleaks-examples.ts <a gitleaks checkout>
 *
 * The Go sources are read as text, never built or run: this reads the small part of Go
 * those functions use (string literals, `+`, `[]string{…}`, `map[string]string{…}`,
 * `append`, `fmt.Sprintf`, base64, the `utils` pattern helpers) and evaluates it here.
 * `secrets.NewSecret(regex)` (a random string the regex matches) is evaluated with a
 * generator seeded by the rule's id, so the file comes out the same on every run. An
 * example built by a statement this does not read (a `for` loop) is left out and counted
 * in the rule's `unread`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'smol-toml';
import { parseGoRegex, type GoRegexNode } from '../../src/redaction/go-regex.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..', '..');
export const EXAMPLES_FILE = path.join(ROOT, 'test/fixtures/secrets/gitleaks-examples.json');
export const TOML_FILE = path.join(ROOT, 'src/redaction/secret-rules/gitleaks/gitleaks.toml');

/** One example: its text and, for the rules gitleaks keeps to some files, the file it is in. */
export interface Example {
  text: string;
  path?: string;
  /** Made from the rule's pattern in gitleaks.toml, where the sources give no true positive. */
  generated?: true;
}

export interface RuleExamples {
  tps: Example[];
  fps: Example[];
  /** Examples in the source that this reader could not evaluate. */
  unread: number;
}

export interface ExamplesFile {
  /** sha256 of the gitleaks.toml these examples belong to. */
  toml_sha256: string;
  rules: Record<string, RuleExamples>;
}

// ---- tokens, with Go's automatic semicolons -------------------------------------------

type Token = { t: 'str' | 'id' | 'num' | 'op' | ';'; v: string };

const OPS = ['...', ':=', '==', '!=', '&&', '||', '<-', '++', '--', '+=', '<=', '>='];

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const endsStatement = () => {
    const last = out[out.length - 1];
    if (!last) return false;
    if (last.t === 'str' || last.t === 'num' || last.t === 'id') return true;
    return last.t === 'op' && [')', ']', '}', '++', '--'].includes(last.v);
  };
  while (i < src.length) {
    const c = src[i];
    if (c === '\n') {
      if (endsStatement()) out.push({ t: ';', v: ';' });
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      i++;
    } else if (src.startsWith('//', i)) {
      const end = src.indexOf('\n', i);
      i = end === -1 ? src.length : end;
    } else if (src.startsWith('/*', i)) {
      const end = src.indexOf('*/', i + 2);
      if (src.slice(i, end).includes('\n') && endsStatement()) out.push({ t: ';', v: ';' });
      i = end + 2;
    } else if (c === '`') {
      const end = src.indexOf('`', i + 1);
      out.push({ t: 'str', v: src.slice(i + 1, end).replace(/\r/g, '') });
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let v = '';
      while (src[j] !== '"') {
        if (src[j] === '\\') {
          const [text, used] = goEscape(src, j);
          v += text;
          j += used;
        } else v += src[j++];
      }
      out.push({ t: 'str', v });
      i = j + 1;
    } else if (c === "'") {
      const end = src.indexOf("'", i + 2);
      out.push({ t: 'num', v: src.slice(i, end + 1) });
      i = end + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_0-9]+/.exec(src.slice(i, i + 200))!;
      out.push({ t: 'id', v: m[0] });
      i += m[0].length;
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9][0-9A-Za-z_.]*/.exec(src.slice(i, i + 50))!;
      out.push({ t: 'num', v: m[0] });
      i += m[0].length;
    } else {
      const op = OPS.find((o) => src.startsWith(o, i)) ?? c;
      out.push({ t: 'op', v: op });
      i += op.length;
    }
  }
  return out;
}

function goEscape(src: string, at: number): [string, number] {
  const c = src[at + 1];
  const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", a: '\x07', b: '\b', f: '\f', v: '\v' };
  if (c in simple) return [simple[c], 2];
  if (c === 'x') return [String.fromCharCode(parseInt(src.slice(at + 2, at + 4), 16)), 4];
  if (c === 'u') return [String.fromCodePoint(parseInt(src.slice(at + 2, at + 6), 16)), 6];
  if (c === 'U') return [String.fromCodePoint(parseInt(src.slice(at + 2, at + 10), 16)), 10];
  if (/[0-7]/.test(c)) return [String.fromCharCode(parseInt(src.slice(at + 1, at + 4), 8)), 4];
  throw new Error(`unknown escape \\${c}`);
}

// ---- expressions ----------------------------------------------------------------------

type Expr =
  | { k: 'str'; v: string }
  | { k: 'num'; v: string }
  | { k: 'id'; v: string }
  | { k: 'sel'; of: Expr; name: string }
  | { k: 'call'; fn: Expr; args: Expr[]; spread: boolean }
  | { k: 'bin'; op: string; a: Expr; b: Expr }
  | { k: 'list'; type: string; items: Array<{ key?: Expr; value: Expr }> }
  | { k: 'type'; v: string }
  | { k: 'index'; of: Expr; at: Expr }
  | { k: 'unknown' };

class Parser {
  i = 0;
  constructor(readonly toks: Token[]) {}
  peek(o = 0): Token | undefined {
    return this.toks[this.i + o];
  }
  is(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t !== undefined && (t.t === 'op' || t.t === 'id' || t.t === ';') && t.v === v;
  }
  eat(v: string): void {
    if (!this.is(v)) throw new Error(`expected ${v} at ${this.peek()?.v}`);
    this.i++;
  }
  /** Skips to the end of the current statement, over nested brackets. */
  skipStatement(): void {
    let depth = 0;
    while (this.i < this.toks.length) {
      const t = this.toks[this.i];
      if (t.t === 'op' && '([{'.includes(t.v)) depth++;
      if (t.t === 'op' && ')]}'.includes(t.v)) {
        if (depth === 0) return;
        depth--;
      }
      this.i++;
      if (depth === 0 && t.t === ';') return;
    }
  }
  type(): string {
    if (this.is('[')) {
      this.eat('[');
      this.eat(']');
      return '[]' + this.type();
    }
    if (this.is('map')) {
      this.eat('map');
      this.eat('[');
      const key = this.type();
      this.eat(']');
      return `map[${key}]${this.type()}`;
    }
    if (this.is('*')) {
      this.eat('*');
      return '*' + this.type();
    }
    let name = this.peek()!.v;
    this.i++;
    while (this.is('.')) {
      this.i++;
      name += '.' + this.peek()!.v;
      this.i++;
    }
    return name;
  }
  expr(): Expr {
    let left = this.unary();
    while (this.is('+') || this.is('-') || this.is('*') || this.is('==') || this.is('&&') || this.is('||')) {
      const op = this.peek()!.v;
      this.i++;
      left = { k: 'bin', op, a: left, b: this.unary() };
    }
    return left;
  }
  unary(): Expr {
    if (this.is('&')) {
      this.i++;
      return this.unary();
    }
    let e = this.primary();
    for (;;) {
      if (this.is('.')) {
        this.i++;
        e = { k: 'sel', of: e, name: this.peek()!.v };
        this.i++;
      } else if (this.is('(')) {
        this.i++;
        const args: Expr[] = [];
        let spread = false;
        while (!this.is(')')) {
          args.push(this.expr());
          if (this.is('...')) {
            this.i++;
            spread = true;
          }
          if (this.is(',')) this.i++;
          while (this.is(';')) this.i++;
        }
        this.eat(')');
        e = { k: 'call', fn: e, args, spread };
      } else if (this.is('[')) {
        this.i++;
        const at = this.expr();
        this.eat(']');
        e = { k: 'index', of: e, at };
      } else if (this.is('{') && (e.k === 'type' || (e.k === 'sel' && /^[A-Z]/.test(e.name)) || (e.k === 'id' && /^[A-Z]/.test(e.v)))) {
        e = this.composite(e.k === 'type' ? e.v : exprName(e));
      } else return e;
    }
  }
  composite(type: string): Expr {
    this.eat('{');
    const items: Array<{ key?: Expr; value: Expr }> = [];
    while (!this.is('}')) {
      while (this.is(';')) this.i++;
      if (this.is('}')) break;
      const first = this.is('{') ? this.composite(type.replace(/^\[\]|^map\[[^\]]*\]/, '')) : this.expr();
      if (this.is(':')) {
        this.i++;
        while (this.is(';')) this.i++;
        const value = this.is('{') ? this.composite(type.replace(/^\[\]|^map\[[^\]]*\]/, '')) : this.expr();
        items.push({ key: first, value });
      } else items.push({ value: first });
      if (this.is(',')) this.i++;
      while (this.is(';')) this.i++;
    }
    this.eat('}');
    return { k: 'list', type, items };
  }
  primary(): Expr {
    const t = this.peek()!;
    if (t.t === 'str') {
      this.i++;
      return { k: 'str', v: t.v };
    }
    if (t.t === 'num') {
      this.i++;
      return { k: 'num', v: t.v };
    }
    if (this.is('(')) {
      this.i++;
      const e = this.expr();
      this.eat(')');
      return e;
    }
    if (this.is('[') || this.is('map')) return { k: 'type', v: this.type() };
    if (this.is('func')) throw new Error('function literal');
    if (t.t === 'id') {
      this.i++;
      return { k: 'id', v: t.v };
    }
    throw new Error(`unexpected ${t.v}`);
  }
}

function exprName(e: Expr): string {
  if (e.k === 'id') return e.v;
  if (e.k === 'sel') return `${exprName(e.of)}.${e.name}`;
  if (e.k === 'type') return e.v;
  return '?';
}

// ---- values ---------------------------------------------------------------------------

type Value = string | number | Value[] | { map: Array<[string, Value]> } | { regex: string } | { struct: string } | undefined;

class Unread extends Error {}

const PATTERNS: Record<string, (size: string) => string> = {
  'utils.Numeric': (n) => `[0-9]{${n}}`,
  'utils.Hex': (n) => `[a-f0-9]{${n}}`,
  'utils.AlphaNumeric': (n) => `[a-z0-9]{${n}}`,
  'utils.AlphaNumericExtendedShort': (n) => `[a-z0-9_-]{${n}}`,
  'utils.AlphaNumericExtended': (n) => `[a-z0-9=_\\-]{${n}}`,
  'utils.AlphaNumericExtendedLong': (n) => `[a-z0-9\\/=_\\+\\-]{${n}}`,
};

/** gitleaks' `GenerateSampleSecrets` templates (cmd/generate/config/utils/generate.go), in key order. */
const SAMPLES: Array<[string, string]> = (
  [
    ['ini - quoted1', '{i}Token="{s}"'],
    ['ini - quoted2', '{i}Token = "{s}"'],
    ['ini - unquoted1', '{i}Token={s}'],
    ['ini - unquoted2', '{i}Token = {s}'],
    ['json - string', '{\n    "{i}_token": "{s}"\n}'],
    ['json - escaped newline in string', '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}'],
    ['xml - element multiline', '<{i}Token>\n    {s}\n</{i}Token>'],
    ['yaml - singleline - unquoted', '{i}_token: {s}'],
    ['yaml - singleline - single quote', "{i}_token: '{s}'"],
    ['yaml - singleline - double quote', '{i}_token: "{s}"'],
    ['C#', 'string {i}Token = "{s}";'],
    ['go - normal', 'var {i}Token string = "{s}"'],
    ['go - short', '{i}Token := "{s}"'],
    ['go - backticks', '{i}Token := `{s}`'],
    ['java', 'String {i}Token = "{s}";'],
    ['kotlin - notype', 'var {i}Token = "{s}"'],
    ['php - string concat', '${i}Token .= "{s}"'],
    ['python - single quote', "{i}Token = '{s}'"],
    ['python - double quote', '{i}Token = "{s}"'],
    ['misc - comma operator', 'System.setProperty("{I}_TOKEN", "{s}")'],
    ['logstash', '  "{i}Token" => "{s}"'],
    ['make - recursive assignment', '{i}_TOKEN = "{s}"'],
    ['make - simple assignment', '{i}_TOKEN := "{s}"'],
    ['make - shell assignment', '{i}_TOKEN ::= "{s}"'],
    ['make - evaluated shell assignment', '{i}_TOKEN :::= "{s}"'],
    ['make - conditional assignment', '{i}_TOKEN ?= "{s}"'],
  ] as Array<[string, string]>
).sort(([a], [b]) => (a < b ? -1 : 1));

/** A deterministic generator (mulberry32) seeded from a string. */
function random(seed: string): () => number {
  let a = createHash('sha256').update(seed).digest().readUInt32LE(0);
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A string `pattern` (Go syntax) matches, as reggen would make one: unbounded repeats take a few more. */
export function sampleOf(pattern: string, rand: () => number): string {
  const pick = (n: number) => Math.floor(rand() * n);
  const walk = (node: GoRegexNode): string => {
    switch (node.type) {
      case 'char':
        return String.fromCharCode(node.code);
      case 'class': {
        const chars: number[] = [];
        for (let c = 0x20; c < 0x7f; c++) {
          const inside = node.ranges.some(([lo, hi]) => c >= lo && c <= hi);
          if (inside !== node.negated) chars.push(c);
        }
        if (chars.length === 0) return node.negated ? 'x' : String.fromCharCode(node.ranges[0][0]);
        return String.fromCharCode(chars[pick(chars.length)]);
      }
      case 'assert':
        return '';
      case 'group':
        return walk(node.body);
      case 'alt':
        return walk(node.branches[pick(node.branches.length)]);
      case 'seq':
        return node.items.map(walk).join('');
      case 'repeat': {
        const max = Number.isFinite(node.max) ? node.max : node.min + 10;
        const count = node.min + pick(max - node.min + 1);
        let out = '';
        for (let i = 0; i < count; i++) out += walk(node.body);
        return out;
      }
    }
  };
  return walk(parseGoRegex(pattern));
}

class Evaluator {
  env = new Map<string, Value>();
  constructor(readonly rand: () => number) {}

  str(e: Expr): string {
    const v = this.eval(e);
    if (typeof v === 'string') return v;
    if (v && typeof v === 'object' && 'regex' in v) return v.regex;
    throw new Unread(`not a string: ${e.k}`);
  }
  list(e: Expr): Value[] {
    const v = this.eval(e);
    if (Array.isArray(v)) return v;
    if (v && typeof v === 'object' && 'map' in v) return v.map.map(([, x]) => x);
    throw new Unread('not a list');
  }
  eval(e: Expr): Value {
    switch (e.k) {
      case 'str':
        return e.v;
      case 'num':
        return Number(e.v);
      case 'id':
        if (e.v === 'nil') return [];
        if (!this.env.has(e.v)) throw new Unread(`unknown ${e.v}`);
        return this.env.get(e.v);
      case 'bin':
        if (e.op !== '+') throw new Unread(e.op);
        return this.str(e.a) + this.str(e.b);
      case 'list':
        if (e.type.startsWith('map[')) {
          return { map: e.items.map(({ key, value }) => [this.str(key!), this.tryEval(value)] as [string, Value]) };
        }
        if (e.type.startsWith('[]')) return e.items.map(({ value }) => this.tryEval(value));
        return { struct: e.type };
      case 'call':
        return this.call(e);
      case 'sel':
        return { struct: exprName(e) };
      default:
        throw new Unread(e.k);
    }
  }
  /** An element that cannot be read is kept as `undefined`, to be counted. */
  tryEval(e: Expr): Value {
    try {
      return this.eval(e);
    } catch (error) {
      if (error instanceof Unread) return undefined;
      throw error;
    }
  }
  call(e: Extract<Expr, { k: 'call' }>): Value {
    const name = exprName(e.fn);
    const a = e.args;
    if (e.fn.k === 'sel' && e.fn.name === 'String' && a.length === 0) return this.str(e.fn.of);
    if (PATTERNS[name]) return PATTERNS[name](this.str(a[0]));
    switch (name) {
      case 'utils.Hex8_4_4_4_12':
        return '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
      case 'secrets.NewSecret':
        return sampleOf(this.str(a[0]), this.rand);
      case 'regexp.MustCompile':
        return { regex: this.str(a[0]) };
      case 'utils.GenerateUniqueTokenRegex':
        return { regex: `${this.flag(a[1])}\\b(${this.str(a[0])})(?:[\\x60'"\\s;]|\\\\[nr]|$)` };
      case 'utils.GenerateSemiGenericRegex': {
        const ids = this.list(a[0]).map((x) => String(x)).join('|');
        const head = this.flag(a[2]) ? `(?i)[\\w.-]{0,50}?(?:${ids})` : `[\\w.-]{0,50}?(?i:[\\w.-]{0,50}?(?:${ids}))`;
        return { regex: `${head}(?:[ \\t\\w.-]{0,20})[\\s'"]{0,3}(?:=|>|:{1,3}=|\\|\\||:|=>|\\?=|,)[\\x60'"\\s=]{0,5}(${this.str(a[1])})(?:[\\x60'"\\s;]|\\\\[nr]|$)` };
      }
      case 'utils.GenerateSampleSecret':
        return `${this.str(a[0])}_api_token = "${this.str(a[1])}"`;
      case 'utils.GenerateSampleSecrets': {
        const id = this.str(a[0]);
        const secret = this.str(a[1]);
        return SAMPLES.map(([, t]) => t.replaceAll('{i}', id).replaceAll('{I}', id.toUpperCase()).replaceAll('{s}', secret));
      }
      case 'append': {
        const base = this.list(a[0]);
        const rest = e.spread ? this.list(a[a.length - 1]) : a.slice(1).map((x) => this.tryEval(x));
        return [...base, ...(e.spread ? [...a.slice(1, -1).map((x) => this.tryEval(x)), ...rest] : rest)];
      }
      case 'fmt.Sprintf': {
        const args = a.slice(1).map((x) => this.eval(x));
        let n = 0;
        return this.str(a[0]).replace(/%[sdvq%]/g, (verb) => (verb === '%%' ? '%' : verb === '%q' ? JSON.stringify(String(args[n++])) : String(args[n++])));
      }
      case 'strings.ToUpper':
        return this.str(a[0]).toUpperCase();
      case 'strings.ToLower':
        return this.str(a[0]).toLowerCase();
      case 'strings.Repeat':
        return this.str(a[0]).repeat(Number(this.eval(a[1])));
      case 'strings.Join':
        return this.list(a[0]).map(String).join(this.str(a[1]));
      case '[]byte':
      case 'string':
        return this.str(a[0]);
      case 'b64.StdEncoding.EncodeToString':
      case 'base64.StdEncoding.EncodeToString':
        return Buffer.from(this.str(a[0]), 'latin1').toString('base64');
      case 'b64.RawStdEncoding.EncodeToString':
      case 'base64.RawStdEncoding.EncodeToString':
        return Buffer.from(this.str(a[0]), 'latin1').toString('base64').replace(/=+$/, '');
      case 'b64.URLEncoding.EncodeToString':
      case 'base64.URLEncoding.EncodeToString':
        return Buffer.from(this.str(a[0]), 'latin1').toString('base64url').padEnd(Math.ceil(this.str(a[0]).length / 3) * 4, '=');
      case 'b64.RawURLEncoding.EncodeToString':
      case 'base64.RawURLEncoding.EncodeToString':
        return Buffer.from(this.str(a[0]), 'latin1').toString('base64url');
      default:
        throw new Unread(`call ${name}`);
    }
  }
  flag(e: Expr | undefined): boolean {
    return e?.k === 'id' && e.v === 'true';
  }
}

// ---- functions and rules --------------------------------------------------------------

interface Found {
  id: string;
  examples: RuleExamples;
}

function examplesOf(value: Value, withPaths: boolean): { examples: Example[]; unread: number } {
  let unread = 0;
  const examples: Example[] = [];
  const push = (text: Value, file?: string) => {
    if (typeof text === 'string') examples.push(file === undefined ? { text } : { text, path: file });
    else unread++;
  };
  if (Array.isArray(value)) for (const text of value) push(text);
  else if (value && typeof value === 'object' && 'map' in value) for (const [file, text] of value.map) push(text, withPaths ? file : undefined);
  else unread++;
  return { examples, unread };
}

/** Reads one rule function's body: its id and the examples it validates with. */
function readFunction(toks: Token[], name: string, packageVars: Map<string, Value>): Found | undefined {
  const p = new Parser(toks);
  let id: string | undefined;
  for (let i = 0; i + 2 < toks.length; i++) {
    if (toks[i].v === 'RuleID' && (toks[i + 1].v === ':' || toks[i + 1].v === '=') && toks[i + 2].t === 'str') {
      id = toks[i + 2].v;
      break;
    }
  }
  if (id === undefined) return undefined;
  const ev = new Evaluator(random(`${id}/${name}`));
  ev.env = new Map(packageVars);
  let result: Found | undefined;
  while (p.i < toks.length) {
    while (p.is(';')) p.i++;
    if (p.i >= toks.length) break;
    const start = p.i;
    try {
      if (p.is('var')) {
        readVar(p, ev);
      } else if (p.peek()!.t === 'id' && (p.is(':=', 1) || p.is('=', 1))) {
        const target = p.peek()!.v;
        p.i += 2;
        ev.env.set(target, ev.tryEval(p.expr()));
      } else if (p.is('return')) {
        p.i++;
        const e = p.expr();
        if (e.k === 'call' && /^utils\.Validate(WithPaths)?$/.test(exprName(e.fn))) {
          const withPaths = exprName(e.fn) === 'utils.ValidateWithPaths';
          const tps = examplesOf(ev.tryEval(e.args[1]), withPaths);
          const fps = examplesOf(ev.tryEval(e.args[2]), withPaths);
          result = { id, examples: { tps: tps.examples, fps: fps.examples, unread: tps.unread + fps.unread } };
        }
      } else {
        // for, if, a method call: not read; what it would have appended is counted unread.
        if (p.is('for') || p.is('if') || p.is('switch')) {
          while (p.i < toks.length && !p.is('{')) p.i++;
          skipBlock(p);
        } else p.skipStatement();
      }
      if (p.i === start) p.i++;
    } catch {
      // A statement this does not read (Go it does not parse, a call it does not know) is
      // skipped; examples that would have used what it assigns are counted unread.
      p.i = start;
      p.skipStatement();
      if (p.i === start) p.i++;
    }
  }
  return result;
}

/** `var name [type] = value`, or a `var ( … )` block of them. */
function readVar(p: Parser, ev: Evaluator): void {
  p.eat('var');
  const one = () => {
    const target = p.peek()!.v;
    p.i++;
    if (!p.is('=')) p.type();
    p.eat('=');
    ev.env.set(target, ev.tryEval(p.expr()));
  };
  if (!p.is('(')) return one();
  p.eat('(');
  for (;;) {
    while (p.is(';')) p.i++;
    if (p.is(')')) break;
    one();
  }
  p.eat(')');
}

function skipBlock(p: Parser): void {
  let depth = 0;
  do {
    if (p.is('{')) depth++;
    if (p.is('}')) depth--;
    p.i++;
  } while (depth > 0 && p.i < p.toks.length);
}

/** Every rule function of gitleaks' rule sources under `checkout`, read. */
export function readRuleSources(checkout: string): Map<string, RuleExamples> {
  const dir = path.join(checkout, 'cmd/generate/config/rules');
  const out = new Map<string, RuleExamples>();
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'))
    .sort()
    .map((file) => tokenize(fs.readFileSync(path.join(dir, file), 'utf8')));
  // Package-level variables (`var api_keys = []string{…}`), which functions of any file use.
  const packageVars = new Map<string, Value>();
  for (const toks of files) {
    const p = new Parser(toks);
    const ev = new Evaluator(random('package'));
    ev.env = packageVars;
    for (let i = 0; i < toks.length; i++) {
      if (toks[i].v === 'func') {
        i = functionEnd(toks, i) - 1;
      } else if (toks[i].v === 'var' && (i === 0 || toks[i - 1].t === ';')) {
        p.i = i;
        try {
          readVar(p, ev);
        } catch {
          // A declaration this does not read: the examples that use it are counted unread.
        }
        i = Math.max(i, p.i - 1);
      }
    }
  }
  for (const toks of files) {
    for (let i = 0; i < toks.length; i++) {
      if (toks[i].v !== 'func' || toks[i + 1]?.t !== 'id') continue;
      const name = toks[i + 1].v;
      let j = i + 2;
      let depth = 0;
      while (j < toks.length && !(depth === 0 && toks[j].v === '{')) {
        if (toks[j].v === '(') depth++;
        if (toks[j].v === ')') depth--;
        j++;
      }
      const bodyStart = j + 1;
      depth = 1;
      j = bodyStart;
      while (j < toks.length && depth > 0) {
        if (toks[j].t === 'op' && toks[j].v === '{') depth++;
        if (toks[j].t === 'op' && toks[j].v === '}') depth--;
        j++;
      }
      const found = readFunction(toks.slice(bodyStart, j - 1), name, packageVars);
      if (found && !out.has(found.id)) out.set(found.id, found.examples);
      i = j - 1;
    }
  }
  return out;
}

/** The index just past the body of the `func` at `i`. */
function functionEnd(toks: Token[], i: number): number {
  let j = i + 1;
  let depth = 0;
  while (j < toks.length && !(depth === 0 && toks[j].v === '{' && toks[j].t === 'op')) {
    if (toks[j].v === '(') depth++;
    if (toks[j].v === ')') depth--;
    j++;
  }
  depth = 0;
  do {
    if (toks[j].t === 'op' && toks[j].v === '{') depth++;
    if (toks[j].t === 'op' && toks[j].v === '}') depth--;
    j++;
  } while (j < toks.length && depth > 0);
  return j;
}

export function tomlSha256(): string {
  return createHash('sha256').update(fs.readFileSync(TOML_FILE)).digest('hex');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const checkout = process.argv[2];
  if (!checkout) {
    console.error('usage: node --import tsx test/support/gitleaks-examples.ts <gitleaks checkout at the pinned tag>');
    process.exit(2);
  }
  const read = readRuleSources(checkout);
  const config = parse(fs.readFileSync(TOML_FILE, 'utf8')) as { rules: Array<{ id: string; regex?: string }> };
  const rules: Record<string, RuleExamples> = {};
  for (const rule of [...config.rules].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const examples = read.get(rule.id) ?? { tps: [], fps: [], unread: 0 };
    // gitleaks validates a few rules with no true positive ("validate TODO", or examples
    // built in a loop): one is made from the rule's own pattern, and marked so.
    if (examples.tps.length === 0 && rule.regex !== undefined) {
      examples.tps.push({ text: sampleOf(rule.regex, random(`${rule.id}/pattern`)), generated: true });
    }
    rules[rule.id] = examples;
  }
  const file: ExamplesFile = { toml_sha256: tomlSha256(), rules };
  fs.writeFileSync(EXAMPLES_FILE, JSON.stringify(file, null, 1) + '\n');
  const counts = Object.values(rules).reduce((n, r) => [n[0] + r.tps.length, n[1] + r.fps.length, n[2] + r.unread], [0, 0, 0]);
  console.log(`${Object.keys(rules).length} rules, ${counts[0]} true and ${counts[1]} false positives, ${counts[2]} unread, to ${path.relative(ROOT, EXAMPLES_FILE)}`);
}
