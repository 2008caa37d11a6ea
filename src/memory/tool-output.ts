/**
 * Tool output as extraction needs it. Lessons live in what the user asked and what the
 * assistant concluded; a tool's output mostly backs them up, and the parts of it that carry
 * something of their own are few: the command and its first lines, the result at the end,
 * and the errors with what follows them (a failing assertion and its stack trace, a
 * compiler diagnostic and its code excerpt). The rest of a long output (progress bars,
 * passing tests, files listed, lines compiled) costs the agent's upstream tokens at every
 * extraction and teaches nothing, so it is left out, with a marker saying how much.
 *
 * The rules are about the shape of text that build tools, test runners, shells and
 * interpreters print, not about any one tool. Besides dropping colour codes and progress
 * redraws, they only ever remove whole lines (and the middle of one very long line); they
 * never rewrite what is kept.
 */

/** Output up to this long (after the cheap clean-ups) is kept whole: cutting it would save little. */
const KEEP_WHOLE_CHARS = 2_000;
/** The start of a long output: the command echoed, what ran, its first complaint. */
const HEAD_LINES = 8;
const HEAD_CHARS = 600;
/** The end: exit status, the summary line (`Tests: 1 failed, 87 passed`), the last error. */
const TAIL_LINES = 12;
const TAIL_CHARS = 900;
/**
 * Room for error lines and their context, over the whole output. The first errors are
 * kept (a compiler's first error is usually the cause of the others); a run of hundreds is
 * bounded, and the marker for what is left out says how many error lines it hides.
 */
const ERROR_CHARS = 2_400;
/** Lines after an error line kept whatever they look like (a Go panic's goroutine header, `Expected:`). */
const CONTEXT_AFTER = 4;
/** Indented lines after an error line (stack frames, a code excerpt, `Caused by` blocks), at most. */
const INDENTED_AFTER = 24;
/** A kept line longer than this (minified JSON, a base64 blob) keeps its ends only. */
const LINE_CHARS = 400;
/** Consecutive lines of one shape from this many on collapse to the first two, a marker and the last. */
const SIMILAR_RUN = 5;

// The patterns below are matched line by line, so none of them can run across lines.

/**
 * Lines that report a failure, in forms many tools share. Case matters for these:
 * upper-case levels as whole words (`ERROR`, `[FATAL]`, `npm ERR!`, `FAIL src/x.test.ts`),
 * so a file read's `ERROR_CODES` constant or `log.error(` does not count; exception class
 * names ending a line or followed by their message (`KeyError: 'x'`,
 * `java.io.IOException: ...`), which code mentions without the colon (`new NotFoundError(`),
 * and make's `*** [build] Error 2`;
 * the headers of a traceback or a chained cause; test runners' failure marks
 * (`not ok 3`, `--- FAIL:`, jest's `●` and `✕`).
 */
const ERROR_CASED = new RegExp(
  [
    String.raw`\b(?:ERROR|FATAL|CRITICAL|SEVERE|PANIC|FAIL|FAILED|FAILURE)\b|\bERR!`,
    String.raw`\b[A-Z][\w$.]*(?:Error|Exception)(?::|$)|\bError \d+\b`,
    String.raw`^\s*(?:Caused by:|Traceback \(most recent call last\)|thread '.*' panicked|goroutine \d+ \[|panic:)`,
    String.raw`^\s*(?:not ok\b|--- FAIL|[●✕✗✘×]\s)`,
  ].join('|'),
);
/**
 * The same in any case: a label (`error:`, `Error: ...`, `error[E0308]:`, `fatal: ...`);
 * a compiler's code (`error TS2322`, `error CS1002`); a diagnostic with its place
 * (`path:line[:col]: error`, `path(line,col): error`, `path:line:col - error`);
 * failed/failing as a word; what a shell says of a missing command or file or a refused
 * access (`bash: aws: command not found`, `No such file or directory`); a non-zero exit status (`Exit code 2`, `exited (2)`,
 * `exit status 1`, `returned non-zero exit status 1`).
 */
const ERROR_ANY_CASE = new RegExp(
  [
    String.raw`(?:^|[\s\[(])(?:error|fatal|panic|failure)(?:\[[\w-]+\])?:`,
    String.raw`(?:^|[\s\[(])error\s+(?:TS|CS|E|C|LNK)\d+\b`,
    String.raw`\S[:(]\d+(?:[:,]\d+)?\)?:?\s*(?:-\s*)?(?:fatal\s+)?error\b`,
    String.raw`\b(?:failed|failing)\b`,
    String.raw`\b(?:command not found|no such file or directory|permission denied)\b`,
    String.raw`\b(?:exit(?:ed)?(?: with)?(?: code| status)?|exit_code|non-zero exit status)\W{0,3}(?!0\b)-?\d+`,
  ].join('|'),
  'i',
);
/**
 * A test or step that passed (`✓ renders`, `PASS src/x.test.ts`, `--- PASS`, `ok 3`):
 * it never explains an error, so it ends the context kept after one (a jest `FAIL`
 * header is followed by the suite's passing tests before its failure block).
 */
const SUCCESS_LINE = /^\s*(?:[✓✔√]\s|PASS(?:ED)?\b|--- PASS|ok\b)/;

/** Terminal colours and cursor moves (CSI and OSC sequences): noise once the output is text. */
const ANSI = /\u001b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[@-Z\\-_])/g;

interface Line {
  text: string;
  /** Lines of the output this one stands for (a collapsed run's marker stands for the run). */
  weight: number;
  /** Error lines among them. */
  errors: number;
  /** Characters left out unread before trimming (`omittedMiddle`'s marker): lines unknown. */
  chars?: number;
}

/**
 * The line that stands for the middle of a huge output cut before it reached here, unread
 * (`omittedMiddle`): how many characters, not how many lines.
 */
const CUT_MARKER = /^\[… (\d+) characters unread …\]$/;

/** The marker line for `chars` characters left out unread; trimming counts them in the markers it writes. */
export function omittedMiddle(chars: number): string {
  return `[… ${chars} characters unread …]`;
}

/**
 * How much of a line the error patterns read. What marks an error comes early in its line;
 * and a bound keeps the patterns linear on a pathological one (a 100 KB line of `A.A.A…`).
 */
const MATCHED_CHARS = 512;

/** Whether a line of tool output reports a failure. */
export function isErrorLine(line: string): boolean {
  const head = line.length > MATCHED_CHARS ? line.slice(0, MATCHED_CHARS) : line;
  return ERROR_CASED.test(head) || ERROR_ANY_CASE.test(head);
}

function lineOf(text: string): Line {
  const cut = CUT_MARKER.exec(text);
  if (cut) return { text, weight: 0, errors: 0, chars: Number(cut[1]) };
  return { text, weight: 1, errors: isErrorLine(text) ? 1 : 0 };
}

/**
 * `text` (a tool's output) with what carries no lesson left out:
 * - terminal colour codes dropped, and a line a progress bar rewrote with `\r` reduced to
 *   its last state;
 * - runs of lines that differ only in numbers, hex ids and bar fill (download progress,
 *   `processed 1000/52000 rows`) collapsed to their first two, a marker and their last;
 * - then, when the output is still long: its first and last lines kept, every line that
 *   reports an error kept with the line before it and the lines after it (stack frames,
 *   the code excerpt), and the rest replaced by markers counting the lines left out.
 * Short outputs come back whole, only cleaned up and with their runs collapsed.
 */
export function trimToolOutput(text: string): string {
  const lines = collapseSimilar(cleanLines(text));
  const cleaned = lines.map((line) => line.text).join('\n');
  if (cleaned.length <= KEEP_WHOLE_CHARS) return cleaned;
  return render(lines, selectLines(lines));
}

/** The lines of a tool's output as a terminal ended up showing them: no colour codes, carriage-return overwrites or trailing blanks. */
export function cleanLines(text: string): string[] {
  const plain = text.includes('\u001b') ? text.replace(ANSI, '') : text;
  return plain.split('\n').map((line) => {
    // A progress bar redraws its line after `\r`; what the terminal finally showed is the last part.
    const cr = line.lastIndexOf('\r', line.length - 2);
    return (cr >= 0 ? line.slice(cr + 1) : line).trimEnd();
  });
}

/** Progress bars' fill and padding (`=#*>.-_ ` and `█░▓■□`): a run of them is one character of a line's shape. */
const FILL_ASCII = new Uint8Array(128);
for (const char of '=#*>.-_ ') FILL_ASCII[char.charCodeAt(0)] = 1;
const isFill = (c: number) => (c < 128 ? FILL_ASCII[c] === 1 : c === 0x2588 || c === 0x2591 || c === 0x2593 || c === 0x25a0 || c === 0x25a1);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isHex = (c: number) => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);

/**
 * What lines of a repetitive run share, as a hash: the line with each number, each hex id
 * (six or more hex digits, one a digit: a layer, a commit, a request id) and each run of
 * progress-bar fill folded to one character. One pass over the characters, no strings built:
 * it runs on every line of every tool output a job reads.
 */
function shapeOf(line: string): number {
  let hash = 0x811c9dc5;
  let previous = -1;
  let plainUntil = 0;
  for (let i = 0; i < line.length; i++) {
    let c = line.charCodeAt(i);
    if (i >= plainUntil && isHex(c) && (i === 0 || !isHex(line.charCodeAt(i - 1)))) {
      let end = i;
      let digit = false;
      for (; end < line.length && isHex(line.charCodeAt(end)); end++) digit ||= isDigit(line.charCodeAt(end));
      if (digit && end - i >= 6) {
        c = 48;
        i = end - 1;
      } else {
        plainUntil = end;
      }
    }
    const token = isDigit(c) ? 48 : isFill(c) ? 32 : c;
    if (token === previous && (token === 48 || token === 32)) continue;
    hash = Math.imul(hash ^ token, 0x01000193);
    previous = token;
  }
  return hash >>> 0;
}

function collapseSimilar(texts: string[]): Line[] {
  // Shapes are worked out only for lines that are not simply equal to the run's first.
  const shapes = new Map<number, number>();
  const shape = (i: number) => shapes.get(i) ?? shapes.set(i, shapeOf(texts[i])).get(i)!;
  const alike = (a: number, b: number) => texts[a] === texts[b] || shape(a) === shape(b);
  const out: Line[] = [];
  let i = 0;
  while (i < texts.length) {
    let end = i + 1;
    // Blank lines never start a run.
    if (texts[i].trim() !== '') while (end < texts.length && alike(i, end)) end++;
    const run = end - i;
    if (run >= SIMILAR_RUN) {
      let errors = 0;
      let error = isErrorLine(texts[i + 1]);
      // A line equal to the one before is as much an error line as it (runs are often one line repeated).
      for (let j = i + 2; j < end - 1; j++) if ((error = texts[j] === texts[j - 1] ? error : isErrorLine(texts[j]))) errors++;
      out.push(lineOf(texts[i]), lineOf(texts[i + 1]), { text: `[… ${run - 3} similar lines …]`, weight: run - 3, errors });
      out.push(lineOf(texts[end - 1]));
    } else {
      for (let j = i; j < end; j++) out.push(lineOf(texts[j]));
    }
    i = end;
  }
  return out;
}

const indented = (text: string) => /^\s/.test(text);

/** Which lines to keep: the head, the tail, and error lines with their context, each within its room. */
function selectLines(lines: Line[]): boolean[] {
  const keep = new Array<boolean>(lines.length).fill(false);
  const cost = (i: number) => Math.min(lines[i].text.length, LINE_CHARS) + 1;

  let used = 0;
  for (let i = 0; i < Math.min(HEAD_LINES, lines.length) && (i === 0 || used + cost(i) <= HEAD_CHARS); i++) {
    keep[i] = true;
    used += cost(i);
  }
  used = 0;
  for (let i = lines.length - 1, n = 0; i >= 0 && n < TAIL_LINES && (n === 0 || used + cost(i) <= TAIL_CHARS); i--, n++) {
    keep[i] = true;
    used += cost(i);
  }

  let room = ERROR_CHARS;
  const take = (i: number): boolean => {
    if (keep[i]) return true;
    if (cost(i) > room) return false;
    keep[i] = true;
    room -= cost(i);
    return true;
  };
  const isError = (i: number) => lines[i].weight === 1 && lines[i].errors > 0;
  for (let i = 0; i < lines.length && room > 0; i++) {
    if (!isError(i)) continue;
    // The line before often names what failed (the test, the step, the command).
    const before = i > 0 ? lines[i - 1].text : '';
    if (before.trim() !== '' && !SUCCESS_LINE.test(before)) take(i - 1);
    if (!take(i)) break;
    // What follows an error explains it: a few lines whatever they are, then indented ones
    // (frames, a code excerpt); a blank line inside an indented block does not end it.
    let j = i + 1;
    for (let after = 0; j < lines.length && after < INDENTED_AFTER; j++, after++) {
      const text = lines[j].text;
      if (SUCCESS_LINE.test(text)) break;
      const continues = after < CONTEXT_AFTER || indented(text) || (text === '' && j + 1 < lines.length && indented(lines[j + 1].text));
      if (!continues || !take(j)) break;
    }
    i = j - 1;
  }
  return keep;
}

/**
 * Kept lines in order, each run of left-out lines as one marker. A kept marker next to a
 * left-out run joins it; a lone left-out line is kept (a marker is no shorter).
 */
function render(lines: Line[], keep: boolean[]): string {
  const marker = (i: number) => lines[i].weight !== 1;
  const kept = (i: number) => i < 0 || i >= lines.length || keep[i];
  for (let i = 0; i < lines.length; i++) if (keep[i] && marker(i) && !(kept(i - 1) && kept(i + 1))) keep[i] = false;
  for (let i = 0; i < lines.length; i++) if (!keep[i] && !marker(i) && kept(i - 1) && kept(i + 1)) keep[i] = true;
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    if (keep[i]) {
      out.push(marker(i) ? lines[i].text : cutLine(lines[i].text));
      i++;
      continue;
    }
    let omitted = 0;
    let errors = 0;
    let chars = 0;
    for (; i < lines.length && !keep[i]; i++) {
      omitted += lines[i].weight;
      errors += lines[i].errors;
      chars += lines[i].chars ?? 0;
    }
    const what = `${omitted} lines${chars > 0 ? ` and ${chars} characters` : ''} omitted`;
    out.push(`[… ${what}${errors > 0 ? `, ${errors} of them with errors` : ''} …]`);
  }
  return out.join('\n');
}

/** A line within `LINE_CHARS`: its start and its end around an inline marker, never splitting a surrogate pair. */
function cutLine(text: string): string {
  if (text.length <= LINE_CHARS) return text;
  const headEnd = offPair(text, Math.floor(LINE_CHARS * 0.6));
  const tailStart = offPair(text, text.length - Math.floor(LINE_CHARS * 0.3));
  return `${text.slice(0, headEnd)} […${tailStart - headEnd} characters…] ${text.slice(tailStart)}`;
}

/** Moves a cut off the low half of a surrogate pair. */
export function offPair(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}
