/**
 * Secrets known by what surrounds them rather than by their own shape. Rulesets built to
 * scan source files do not look for these, but a coding agent's conversation is full of
 * them: commands typed at a shell, credentials told in prose, values whose only sign is
 * the name they are assigned to. Each is Engram's own, and says why it exists.
 */
import { isBlank, isQuote, schemeStarts, type Anchors } from './anchors.js';
import { MIN_RANDOM_LENGTH, isUuid, looksRandom } from './entropy.js';
import { PLACEHOLDER, marker, type Finder, type Finding, type Rule } from './rule.js';

/**
 * A key in a URL's user part with no password: Sentry's DSN (`https://KEY@o1.ingest.sentry.io/2`),
 * a token used as the user (`https://TOKEN@host/repo.git`). secretlint's basic-auth and
 * connection-string rules need `user:password@`. The scheme and host stay, they say where.
 */
export const DSN_RULE: Rule = {
  kind: 'url_token',
  pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([A-Za-z0-9_~.%+-]{16,300})@/gi,
  replace: (m) => {
    const user = m.groups[1] ?? '';
    return looksRandom(user) ? `${m.groups[0]}${marker('url_token')}@` : m.text;
  },
  starts: schemeStarts,
};

/** Identifier characters around a credential word: `DB_PASSWORD`, `apiKey`, `x-api-key`, `aws.secret`. */
export const isNameChar = (c: number) =>
  (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) || c === 0x5f || c === 0x2d || c === 0x2e;
/** A value's characters: base64 (both alphabets), hex, `.` and `~` of tokens. */
const isValueChar = (c: number) => isNameChar(c) || c === 0x2b || c === 0x2f || c === 0x3d || c === 0x7e;

/** Where credential words start, in any case; `auth` covers `authToken`, `Authorization`. */
const CREDENTIAL_WORDS = /pass|pwd|secret|token|key|credential|auth|dsn/gi;

/** A part of a name that makes it name a credential. */
const CREDENTIAL_PARTS = new Set(['password', 'passwd', 'pwd', 'pass', 'passphrase', 'secret', 'token', 'key', 'apikey', 'credential', 'credentials', 'auth', 'dsn', 'pat']);
/** A one-word name ending like these names a credential too (`accesskey`, `authtoken`, `clientsecret`). */
const CREDENTIAL_ENDINGS = /(?:key|token|secret|password|passwd|pwd)$/;
/** The last part of a name that is about a credential, not one: `token_type`, `key_id`, `secret_name`. */
const ABOUT_PARTS = new Set(
  (
    'id ids type name names count length len size file path dir url uri endpoint prefix suffix expiry expires expiration ' +
    'ttl limit max min header field format kind version env ref index idx column label usage budget region source mode ' +
    'policy rotation manager store vault service provider helper location arn hint required enabled fingerprint'
  ).split(' '),
);
/** Parts that make the whole name something other than a secret: `public_key`, `cache_key`, `csrf_token`. */
const NOT_SECRET_PARTS = new Set(
  'public pub idempotency cache primary foreign partition sort row object csrf max num total sequence schema gpg pgp ssh host socket'.split(' '),
);
/** The word before a name, when the name is written apart from it: "GPG key: F3EF…", "cache key 42…". */
const WORD_BEFORE = /([A-Za-z]+)[ \t]+$/;

/** `DB_PASSWORD`, `apiKey`, `x-api-key`, `SECRET_KEY_BASE` names a secret; `max_tokens`, `key_id`, `public_key` do not. */
export function namesCredential(name: string): boolean {
  const parts = name
    .split(/[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/)
    .filter((part) => part !== '')
    .map((part) => part.toLowerCase());
  if (parts.length === 0 || parts.some((part) => NOT_SECRET_PARTS.has(part))) return false;
  if (ABOUT_PARTS.has(parts[parts.length - 1])) return false;
  return parts.some((part) => CREDENTIAL_PARTS.has(part) || (part.length <= 16 && CREDENTIAL_ENDINGS.test(part)));
}

/**
 * The entropy check: a high-entropy value right after a name that names a credential
 * (`SECRET_KEY_BASE=…`, `"AccountKey": "…"`, `--token …`, `my api key is …`). The rules
 * in `redact.ts` redact any value of a name that ends with a credential word; this one
 * reaches names that only contain one, and values in prose, but redacts a value only if
 * `looksRandom` says it was generated: identifiers, paths, model names and words stay.
 * A UUID or hex counts only after `=` or `:` (Heroku's API keys are UUIDs; "cache key
 * <uuid>" in a log is not a secret, nor gpg's "using EDDSA key <fingerprint>").
 */
export const credentialValueFinder: Finder = {
  name: 'credential_entropy',
  find(text, anchors) {
    const found: Finding[] = [];
    let done = -1;
    for (const hit of anchors.of(CREDENTIAL_WORDS)) {
      if (hit < done) continue;
      let start = hit;
      while (start > 0 && hit - start < 64 && isNameChar(text.charCodeAt(start - 1))) start--;
      let end = hit;
      while (end < text.length && end - hit < 64 && isNameChar(text.charCodeAt(end))) end++;
      done = end;
      // Cheapest test first: most credential words in code have no value after them.
      const value = valueAfterName(text, end);
      if (value === undefined) continue;
      // Credential words inside the value are part of it, not names of their own.
      done = value.start + value.text.length;
      if (!looksRandom(value.text) || !namesCredential(text.slice(start, end))) continue;
      const previous = WORD_BEFORE.exec(text.slice(Math.max(0, start - 24), start))?.[1].toLowerCase();
      if (previous !== undefined && NOT_SECRET_PARTS.has(previous)) continue;
      // After a blank, hex is a fingerprint or an id as often as a key (`gpg: using EDDSA key 7C6B…`).
      if (!value.assigned && (isUuid(value.text) || /^[0-9a-f]+$|^[0-9A-F]+$/.test(value.text))) continue;
      found.push({ start: value.start, end: value.start + value.text.length, kind: 'secret' });
    }
    return found;
  },
};

interface Value {
  start: number;
  text: string;
  /** After `=` or `:`, not after a blank or "is". */
  assigned: boolean;
}

/**
 * The value that follows a name at `from`: after closing quotes (or JSON-escaped ones), a
 * separator (`=`, `:`, `:=`, `=>`) or a blank, optionally "is"/"was", then an opening
 * quote. `undefined` when something else follows (a call, an index, a sentence).
 */
function valueAfterName(text: string, from: number): Value | undefined {
  // Plain loops, no closures: this runs at every credential word of every text.
  let i = from;
  for (let n = 0; n < 3 && (text.charCodeAt(i) === BACKSLASH || isQuote(text.charCodeAt(i))); n++) i++;
  const beforeSeparator = i;
  for (let n = 0; n < 4 && isBlank(text.charCodeAt(i)); n++) i++;
  let assigned = false;
  const c = text.charCodeAt(i);
  if (c === 0x3a || c === 0x3d) {
    assigned = true;
    i++;
    const next = text.charCodeAt(i);
    if (next === 0x3d || next === 0x3e) i++; // := or =>
  } else if (i === beforeSeparator) {
    return undefined;
  } else if (isVerb(text, i)) {
    i += (text.charCodeAt(i) | 0x20) === 0x69 ? 2 : 3; // "is" or "was"
  } else {
    i = beforeSeparator + 1; // one blank: `--token VALUE`, "token VALUE"
  }
  for (let n = 0; n < 4 && isBlank(text.charCodeAt(i)); n++) i++;
  for (let n = 0; n < 3 && (text.charCodeAt(i) === BACKSLASH || isQuote(text.charCodeAt(i))); n++) i++;
  const start = i;
  while (i < text.length && i - start < 1024 && isValueChar(text.charCodeAt(i))) i++;
  let end = i;
  // A sentence's full stop or comma is not part of the value.
  while (end > start && (text.charCodeAt(end - 1) === 0x2e || text.charCodeAt(end - 1) === 0x2c)) end--;
  if (end - start < MIN_RANDOM_LENGTH) return undefined;
  return { start, text: text.slice(start, end), assigned };
}

const BACKSLASH = 0x5c;

/** "is" or "was" (any case) at `i`, then a blank. */
function isVerb(text: string, i: number): boolean {
  const word = (text.charCodeAt(i) | 0x20) === 0x69 ? 'is' : 'was';
  for (let k = 0; k < word.length; k++) if ((text.charCodeAt(i + k) | 0x20) !== word.charCodeAt(k)) return false;
  return isBlank(text.charCodeAt(i + word.length));
}

/** How a password is told in prose: "the admin password is X", "password for root was X". */
const PASSWORD_WORDS = /passw(?:or)?d|passphrase|pwd/gi;
const PROSE_VERB = /^(?:is|was|are|:|=|is:)$/i;
/** Symbols that make an unquoted word a password rather than a word ("case-sensitive" is a word). */
const PASSWORD_SIGNS = /[0-9!@#$%^&*+=~?<>|\\/]/;

/**
 * Words the phrase may hold before its verb ("the password used by the nightly export job
 * is X" has six); further away, "is" belongs to another clause as often as not.
 */
const PROSE_WORDS = 8;
/** A date, a time or a version after the verb is what the sentence is about ("… rotation is 2024-12-01"). */
const NOT_A_PASSWORD = /^(?:\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?|\d{1,2}:\d{2}(?::\d{2})?|v?\d+(?:\.\d+)+)$/;

/**
 * A password told in prose: "the admin password is Tr0ub4dor&3", "password for root was
 * `hunter2`", "the password for root: X". After the word, up to `PROSE_WORDS` more words,
 * then "is", "was", ":" or "=" (or a word ending in ":"), then the value, which must hold a
 * digit or a symbol, or be quoted, so "the password is required" stays. A closing `!` is
 * kept ("hunter2Xy!"): a password ends with one more often than a sentence about one does.
 * secretlint and gitleaks scan files, where passwords are assigned, not told.
 */
export const prosePasswordFinder: Finder = {
  name: 'prose_password',
  find(text, anchors) {
    const found: Finding[] = [];
    for (const hit of anchors.of(PASSWORD_WORDS)) {
      let i = hit;
      while (i < text.length && /[A-Za-z]/.test(text.charAt(i))) i++;
      // A line break ends the phrase, a JSON-escaped one (masked as U+2028, see redact.ts) too.
      const rest = text.slice(i, i + 120).split(/[\n\r\u2028\u2029]/, 1)[0];
      const words = rest.split(/(\s+)/);
      // words alternates text and blanks; find the verb among the first words.
      let offset = i;
      let seen = 0;
      for (let w = 0; w < words.length && seen <= PROSE_WORDS; w++) {
        const word = words[w];
        if (w % 2 === 1 || word === '') {
          offset += word.length;
          continue;
        }
        seen++;
        // Right after the word, `:` and `=` are an assignment, which the assignment rule judges;
        // later, a word ending in `:` ends the phrase ("the password for root: …").
        const labelled = seen > 1 && /^[\w-]+:$/.test(word);
        const verb = labelled || (PROSE_VERB.test(word) && (seen > 1 || /^(?:is|was|are)/i.test(word)));
        if (verb && w + 2 < words.length) {
          const valueOffset = offset + word.length + words[w + 1].length;
          const value = passwordValue(text, words[w + 2], valueOffset);
          if (value) found.push(value);
          break;
        }
        // Sentence punctuation or code ends the phrase.
        if (/[.;,(){}[\]"'`=:]/.test(word)) break;
        offset += word.length;
      }
    }
    return found;
  },
};

/** How long a quoted value told in prose may be, its blanks included ("blue Cactus 41"). */
const QUOTED_MAX = 100;

/** The value that starts `word` at `offset` of `text`: a quoted one runs to its closing quote on the line. */
function passwordValue(text: string, word: string, offset: number): Finding | undefined {
  let start = 0;
  let end = word.length;
  const quoted = start < end && isQuote(word.charCodeAt(0));
  if (quoted) start++;
  const close = quoted ? text.indexOf(word.charAt(0), offset + 1) : -1;
  if (close !== -1 && close - offset <= QUOTED_MAX && !/[\n\r\u2028\u2029]/.test(text.slice(offset, close))) end = close - offset;
  else while (end > start && /[.,;:?)"'`]/.test(word.charAt(end - 1))) end--;
  const value = text.slice(offset + start, offset + end);
  if (value.length < 4 || PLACEHOLDER.test(value) || value.startsWith('[REDACTED') || NOT_A_PASSWORD.test(value)) return undefined;
  if (!quoted && !PASSWORD_SIGNS.test(value)) return undefined;
  return { start: offset + start, end: offset + end, kind: 'password' };
}

/**
 * The matches of `flag` in the rest of each line (at most 2,000 characters) that mentions
 * `command`, with where that rest starts. A line is read once, from its first mention of
 * the command: the next mentions are in it.
 */
function* commandLineMatches(text: string, anchors: Anchors, command: string, flag: RegExp): Generator<{ m: RegExpExecArray; from: number }> {
  let done = -1;
  for (const from of anchors.of(command)) {
    if (from < done) continue;
    const end = text.indexOf('\n', from);
    const line = text.slice(from, Math.min(end === -1 ? text.length : end, from + 2000));
    done = from + line.length;
    flag.lastIndex = 0;
    for (let m = flag.exec(line); m !== null; m = flag.exec(line)) yield { m, from };
  }
}

/** A value that only names where the secret comes from: `$DB_PASS`, `"${TOKEN}"`, `<password>`. */
const unquote = (value: string) => value.replace(/^["']|["']$/g, '');

/**
 * Passwords on database, SSH and registry command lines: `mysql -uroot -pS3cret`,
 * `mysqldump -p'x'`, `sshpass -p S3cret ssh host`, `docker login -u ci -p S3cret`. The value glued to `-p` is the password (`-P` is the port);
 * `--password=` is an assignment, caught elsewhere. Rulesets scan files, not shell history.
 */
export const commandPasswordFinder: Finder = {
  name: 'command_password',
  find(text, anchors) {
    const found: Finding[] = [];
    for (const [command, flag] of [
      ['mysql', /(?<=\s)-p(?![\s-])(\S+)/g],
      ['mariadb', /(?<=\s)-p(?![\s-])(\S+)/g],
      ['sshpass', /(?<=\s)-p[ \t]*(?!-)(\S+)/g],
      // `docker login -u ci -p X`, `podman login`, `oc login`, `az login -p X`.
      ['login', /(?<=\s)-p[ \t]+(?!-)(\S+)/g],
    ] as const) {
      for (const { m, from } of commandLineMatches(text, anchors, command, flag)) {
        const value = unquote(m[1]);
        if (value === '' || PLACEHOLDER.test(value)) continue;
        const start = from + m.index + m[0].length - m[1].length;
        found.push({ start, end: start + m[1].length, kind: 'password' });
      }
    }
    return found;
  },
};

/**
 * `curl -u user:password`, `curl --user "user:password"`: the password goes, the user
 * stays. With nothing after the colon the user is the key (`curl -u KEY: https://…`, how
 * Stripe-like APIs take one). gitleaks has this (`curl-auth-user`); secretlint does not.
 */
export const curlUserFinder: Finder = {
  name: 'curl_user',
  find(text, anchors) {
    const found: Finding[] = [];
    const flag = /(?<=\s)(?:-u|--user)(?:[ \t]+|=)(["']?)([^\s"':]*):([^\s"']*)/g;
    for (const { m, from } of commandLineMatches(text, anchors, 'curl', flag)) {
      const [whole, , user, password] = m;
      const userStart = from + m.index + whole.length - password.length - 1 - user.length;
      if (password !== '' && !PLACEHOLDER.test(password)) {
        found.push({ start: userStart + user.length + 1, end: userStart + user.length + 1 + password.length, kind: 'password' });
      } else if (password === '' && user.length >= 8 && !PLACEHOLDER.test(user)) {
        found.push({ start: userStart, end: userStart + user.length, kind: 'secret' });
      }
    }
    return found;
  },
};
