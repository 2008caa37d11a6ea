/**
 * The JSON the docs show is the JSON Engram prints: `engram agent create --json` as the
 * real CLI prints it (the same fields, in the same order, indented the same way), and the
 * request log's entries with the fields, in the order, that `requestWire` gives them.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { requestWire } from '../../src/http/management/requests.js';
import { runCli } from '../support/cli.js';
import { codeBlocks, PAGES, pageText } from '../support/docs.js';
import { requestEntry } from '../support/request-entry.js';
import { ADMIN, startManagementServer, type ManagementServer } from '../http/management-server.js';

const test = suite<{ server: ManagementServer }>('the docs’ JSON examples');

test.before(async (context) => {
  context.server = await startManagementServer();
});

test.after(async ({ server }) => server.close());

/** The first ```json block after `marker` on `page`. */
function jsonAfter(page: string, marker: string): string {
  const text = pageText(page);
  const at = text.indexOf(marker);
  assert.ok(at >= 0, `${page} shows ${marker}`);
  const block = codeBlocks(text).find((candidate) => candidate.index > at && candidate.info === 'json');
  assert.ok(block, `a json block follows ${marker} on ${page}`);
  return block!.body.trimEnd();
}

/** The key paths of a JSON value, in order: `org_id`, `data[].id`, … */
function shape(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return [`${prefix}[]`, ...(value.length === 0 ? [] : shape(value[0], `${prefix}[]`))];
  if (value === null || typeof value !== 'object') return prefix === '' ? [] : [prefix];
  return Object.entries(value).flatMap(([key, inner]) => [`${prefix}${prefix ? '.' : ''}${key}`, ...shape(inner, `${prefix}${prefix ? '.' : ''}${key}`)]);
}

test('the agent create --json examples are what the CLI prints: the same fields in order, indented as printJson indents', async ({ server }) => {
  const run = await runCli(['agent', 'create', '--org', 'docs-org', '--name', 'bot', '--upstream', 'https://api.openai.com', '--no-check', '--upstream-key', 'k', '--json', '--url', server.url, '--admin-token', ADMIN]);
  assert.is(run.code, 0, run.stderr);
  const printed = run.stdout.trimEnd();
  const real = JSON.parse(printed);
  const examples = PAGES.filter((page) => page.text.includes('engram agent create --org acme --name bot \\\n  --upstream https://api.openai.com --upstream-key-env OPENAI_API_KEY --json'));
  assert.ok(examples.length >= 2, `the README and agents.md show it (${examples.map((page) => page.name).join(', ')})`);
  for (const page of examples) {
    const shown = jsonAfter(page.name, 'OPENAI_API_KEY --json');
    const example = JSON.parse(shown);
    assert.equal(Object.keys(example), Object.keys(real), `${page.name}: the fields, in the CLI's order`);
    assert.is(shown, JSON.stringify(example, null, 2), `${page.name}: indented as the CLI prints it`);
    assert.is(printed, JSON.stringify(real, null, 2), 'the CLI prints it so');
    assert.match(example.token, /^egm_/);
    assert.is(example.mcp_url, `${example.base_url}/v0/mcp`);
    assert.is(example.base_url, `http://127.0.0.1:8420/v0/orgs/${example.org_id}/agents/${example.agent_id}`);
  }
});

test('the request log example has the fields of GET …/requests, in their order, indented as --json prints it', () => {
  const shown = jsonAfter('docs/seeing-memory.md', 'as `engram requests --json` prints it');
  const example = JSON.parse(shown);
  assert.is(shown, JSON.stringify(example, null, 2));
  assert.equal(Object.keys(example), ['data', 'next_cursor']);
  const wire = requestWire(
    requestEntry({
      id: 'req_x',
      agentId: 'agt_x',
      at: Date.now(),
      injected: [{ reflectionId: 'ref_x', relevance: 0.4, why: 'tags' }],
      kept: [{ reflectionId: 'ref_y', turn: 1 }],
      nearMisses: [{ reflectionId: 'ref_z', relevance: 0.1 }],
    }),
  );
  const fields = shape(wire);
  for (const entry of example.data) {
    const keys = Object.keys(entry);
    assert.equal(keys, Object.keys(wire), `${entry.id}: the fields, in order`);
    for (const key of shape(entry)) assert.ok(fields.includes(key), `${entry.id}: ${key} is a field Engram writes`);
    assert.match(entry.id, /^req_[A-Za-z0-9_-]{22}$/, 'a request id as newRequestId makes it');
  }
});

test.run();
