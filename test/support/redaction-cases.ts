/**
 * The per-rule redaction tests' two tables, run the same way in every file: each case
 * redacted to what it expects (and, with `again`, unchanged by a second pass), each
 * untouched text left as it is.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { redactSecrets } from '../../src/redaction/redact.js';

/** A named text and what redaction makes of it. */
export type RedactionCase = [name: string, input: string, expected: string];
/** A named text redaction must leave as it is. */
export type UntouchedCase = [name: string, input: string];

export function redactsTo(cases: readonly RedactionCase[], { again = false } = {}): void {
  for (const [name, input, expected] of cases) {
    test(`redacts: ${name}`, () => {
      assert.is(redactSecrets(input), expected);
      if (again) assert.is(redactSecrets(expected), expected, 'redacting again changes nothing');
    });
  }
}

export function leavesAlone(cases: readonly UntouchedCase[]): void {
  for (const [name, input] of cases) {
    test(`leaves alone: ${name}`, () => {
      assert.is(redactSecrets(input), input);
    });
  }
}
