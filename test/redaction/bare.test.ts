/**
 * The bare shapes of src/redaction/bare.ts that have no test of their own elsewhere: a
 * PEM body's lines pasted without BEGIN and END, and tokens of the common vendor shape
 * (`<prefix>_<random>`). True positives, and the identifiers, hashes, ids, paths and
 * package names beside them that must stay. Fake values; none is live.
 */
import { test } from 'uvu';
import { leavesAlone, redactsTo } from '../support/redaction-cases.js';

const LINE_1 = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj';
const LINE_2 = 'MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu';
const LINE_3 = 'NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ';
const TAIL = 'q8Jrxz9QIXGAeb7SZP==';

const cases: [string, string, string][] = [
  ['a PEM body line alone', `the key body, from the vault:\n${LINE_2}\nthat is all`, 'the key body, from the vault:\n[REDACTED:private_key]\nthat is all'],
  [
    "a PKCS#8 key's first line (less random: ASN.1 lengths)",
    `  ${LINE_1}\n`,
    '  [REDACTED:private_key]\n',
  ],
  [
    'a body without BEGIN and END, its short last line too',
    `$ cat key.txt\n${LINE_1}\n${LINE_2}\n${LINE_3}\n${TAIL}\n$ ls`,
    '$ cat key.txt\n[REDACTED:private_key]\n[REDACTED:private_key]\n[REDACTED:private_key]\n[REDACTED:private_key]\n$ ls',
  ],
  ['a body with CRLF line ends', `${LINE_2}\r\n${TAIL}\r\n`, '[REDACTED:private_key]\r\n[REDACTED:private_key]\r\n'],
  [
    'body lines in a JSON string, the line breaks escaped',
    `{"content":"key:\\n${LINE_2}\\n${LINE_3}\\n${TAIL}\\ndone"}`,
    '{"content":"key:\\n[REDACTED:private_key]\\n[REDACTED:private_key]\\n[REDACTED:private_key]\\ndone"}',
  ],
  ['body lines in a YAML block and a JSON list', `key: |\n  ${LINE_2}\nlines: [\n  "${LINE_3}",\n]`, 'key: |\n  [REDACTED:private_key]\nlines: [\n  "[REDACTED:private_key]",\n]'],
  ['a vendor token in prose', 'use acme_live_8fJ2kL9qPz3XvB7nR4tW1yH6mC0dS5gA for the demo.', 'use [REDACTED:vendor_token] for the demo.'],
  ['a vendor token with a dash', 'XYZ=xyz-4kR9vT2pL8mQ3nW7bJ6hF1cD5sG0aZ', 'XYZ=[REDACTED:vendor_token]'],
  ['a vendor token of lower case and digits', '"rnd_k3j9x8m2q7w4e6r1t5y0u9i8o7p6a5s4z"', '"[REDACTED:vendor_token]"'],
  ['a vendor token with a checksum part', 'pk2_test_Zq8wVu7tSr6QpOn5mLk4JiH3gFe2DcB1a0_x7Y2', '[REDACTED:vendor_token]'],
  ['a vendor token JSON-escaped', '{"cmd":"export K=\\"acme-Zq8wVu7tSr6QpOn5mLk4JiH3gFe2DcB1a0\\"\\nrun"}', '{"cmd":"export K=\\"[REDACTED:vendor_token]\\"\\nrun"}'],
];

redactsTo(cases, { again: true });

const untouched: [string, string][] = [
  ['a base64 line inside a sentence', `the signature ${LINE_2} was valid`],
  ['a public key in a JSON value', '"publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEq8JrxzZQIXGAeb7SZP9z4PF62WFh"'],
  ['an SSH public key', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx8Zq8wVu7tSr6QpOn5mLk4JiH3gFe2DcB1a0x9Y8w7 dev@laptop'],
  ['a long identifier alone on a line', 'ThisIsAVeryLongCamelCaseIdentifierNameThatGoesOnAndOnForeverMore'],
  ['the base64 of text alone on a line', btoa('The build on main failed twice; rerun it after the cache is warm.')],
  ['a line of one case alone', 'k3j9x8m2q7w4e6r1t5y0u9i8o7p6a5s4k3j9x8m2q7w4e6r1t5y0u9i8o7p6a5s4'],
  ['a base64 line shorter than a PEM line', 'Zq8wVu7tSr6QpOn5mLk4JiH3gFe2DcB1a0x9Y8w7Zq8wVu7tSr6QpOn5'],
  ['snake case', 'call snake_case_function_names_that_are_long and do_the_thing_with_the_other_thing_now'],
  ['a UUID after a prefix', 'req-123e4567-e89b-42d3-a456-426614174000 and job_123e4567e89b42d3a456426614174000'],
  ['hex after a prefix', 'commit-3f2a9c1d4b5e6f708192a3b4c5d6e7f809112233 sha-3f2a9c1d4b5e6f708192a3b4c5d6e7f8'],
  ['an integrity hash', '<script integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6R9GqQ8KuxyA9rx7HNQlGYl1kPzQho1wx4JwY8wC">'],
  ['npm package names', '@babel/plugin-transform-async-generator-functions eslint-plugin-react-refresh-and-more-words'],
  ['paths and file names', '/tmp/build-Xk9mQ2vR7tLp4WzB8nC3jD5fG6hJ7kL8/out.js main-Xk9mQ2vR7tLp4WzB8nC3jD5fG6hJ7kL8.js node_modules/.cache/x-Xk9mQ2vR7tLp4WzB8nC3jD5fG6hJ7kL8mN'],
  ['a host name', 'https://app-Xk9mQ2vR7tLp4WzB8nC3jD5fG6hJ7kL8.vercel.app is the preview'],
  ['ids shorter than a token', 'chatcmpl-B9MHDbslfaBeAs8l4bebGdFOJ6PeG msg_01XFDUDYJgAACzvnptvVoYEL toolu_01A09q90qw90lq917835lq9'],
  ['a prefix of three parts, or starting with a digit', 'my_long_service_Xk9mQ2vR7tLp4WzB8nC3jD5fG6hJ7kL8 2024-Xk9mQ2vR7tLp4WzB8nC3jD5fG6hJ7kL8'],
  ['words after a prefix', 'user_ThisIsAVeryLongCamelCaseIdentifierName2'],
];

leavesAlone(untouched);

test.run();
