/**
 * The `record_reflections` call per protocol: each adapter offers the tool with every
 * property required (strict schemas), and reads back what the model answered, `supersedes`
 * included, from the answer as the provider shapes it (rendered by the scripted upstream's
 * responders, the same code that answers Engram's real extraction calls in other tests).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PROTOCOLS } from '../../src/protocols/index.js';
import { proposedFrom, RECORD_REFLECTIONS, RECORD_REFLECTIONS_SCHEMA, RECORD_REFLECTIONS_TOOL } from '../../src/memory/extraction-tool.js';
import { chatCompletions } from '../support/scripted-upstream/chat-completions.js';
import { messages } from '../support/scripted-upstream/messages.js';
import { responses } from '../support/scripted-upstream/responses.js';
import type { ProtocolResponder } from '../support/scripted-upstream/types.js';

const RESPONDERS: ProtocolResponder[] = [chatCompletions, messages, responses];

const OLD = 'ref_0123456789abcdef01234567';
const OTHER = 'ref_89abcdef0123456789abcdef';

const answered = {
  reflections: [
    { kind: 'factual', content: 'Deploy to staging with ./deploy/run.sh --env staging.', topic: 'deployment', tags: ['staging deploy'], turn: 3, supersedes: [OLD] },
    // Ids as the model may echo them: in their brackets, padded, twice, beside junk.
    { kind: 'procedural', content: 'Run the smoke tests after a staging deploy.', topic: 'deployment', tags: [], turn: null, supersedes: [` [${OTHER}] `, OTHER, 42, ''] },
    { kind: 'factual', content: 'Nothing replaced.', topic: 'x', tags: [], turn: null, supersedes: [] },
    { kind: 'factual', content: 'An older model leaves it out.', topic: 'x', tags: [], turn: null },
  ],
};

test('the tool schema lists supersedes as a required list of ids', () => {
  const items = RECORD_REFLECTIONS_SCHEMA.properties.reflections.items;
  assert.ok((items.required as readonly string[]).includes('supersedes'), 'strict tool schemas list every property');
  assert.equal(items.properties.supersedes.type, 'array');
  assert.equal(items.properties.supersedes.items, { type: 'string' });
  for (const adapter of Object.values(PROTOCOLS)) {
    const request = JSON.stringify(adapter.toolRequest('m', 'Extract.', '<transcript>\n[0] User: hi\n</transcript>', RECORD_REFLECTIONS));
    assert.ok(request.includes('"supersedes"'), `${adapter.id} offers supersedes`);
  }
});

for (const responder of RESPONDERS) {
  test(`${responder.protocol}: the adapter reads supersedes from the tool call`, () => {
    const adapter = PROTOCOLS[responder.protocol];
    const body = responder.body(
      { type: 'tool_call', name: 'record_reflections', arguments: answered },
      { model: 'm', inputTokens: 10, includeUsage: false, request: adapter.toolRequest('m', 'Extract.', 'transcript', RECORD_REFLECTIONS) },
    );
    const proposed = proposedFrom(adapter.toolArguments(body, RECORD_REFLECTIONS_TOOL));
    assert.equal(
      proposed.map((p) => [p.content, p.supersedes]),
      [
        ['Deploy to staging with ./deploy/run.sh --env staging.', [OLD]],
        ['Run the smoke tests after a staging deploy.', [OTHER]],
        ['Nothing replaced.', undefined],
        ['An older model leaves it out.', undefined],
      ],
    );
    assert.is(proposed[0].turn, 3);
  });
}

test.run();
