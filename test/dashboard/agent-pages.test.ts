/**
 * An agent's pages over real HTTP, as the forms post them: reflections added, edited,
 * refused when they restate one, searched with a preview of what injection would pick;
 * tokens created (shown once) and revoked; queued extraction and tagging jobs on the
 * activity page; the tags of each reflection and who wrote them.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEngram, type TestEngram } from '../support/engram.js';
import { WebSession, shownText } from '../support/web-session.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { publishTaggingJob } from '../../src/memory/tagging-job.js';
import { idDigest } from '../../src/control/conversation-id.js';
import { softBreaks } from '../../src/http/web/soft-breaks.js';

interface Context {
  engram: TestEngram;
  upstream: ScriptedUpstream;
  web: WebSession;
  /** `/orgs/<org>/agents/<agent>` */
  page: string;
  agentId: string;
  /** `/orgs/<org>/agents/new` */
  newAgent: string;
}

const test = suite<Context>('dashboard agent pages');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  // A long settle keeps the extraction job queued while the activity page is read.
  // The scripted upstream is on loopback: this operator lets dashboard users use local model servers.
  context.engram = await startEngram({ 'settle-ms': '600000', 'dashboard-upstream-allow-private': 'true' });
  const web = new WebSession(context.engram.url);
  await web.signIn('pages@example.com', 'a long enough passphrase');
  await web.get('/orgs/new');
  const org = await web.post('/orgs/new', { name: 'pages-org' });
  await web.get(org.location!);
  const agent = await web.post(org.location!, { intent: 'create', name: 'coder', base_url: context.upstream.url, api_key: 'sk-x-1234567890', headers: '' });
  context.page = agent.location!.replace(/\/connect$/, '');
  context.agentId = context.page.split('/').at(-1)!;
  context.web = web;
  context.newAgent = org.location!;
});

test.after(async ({ engram, upstream }) => {
  await engram?.close();
  await upstream?.close();
});

test('a reflection added by hand is stored, tagged, edited, and a restatement is refused', async ({ web, page, engram, agentId }) => {
  await web.get(`${page}/reflections`);
  const added = await web.post(`${page}/reflections`, { content: 'Start Redis with docker compose up cache before npm run build.', kind: 'procedural', topic: 'build', tags: 'infra' });
  assert.is(added.status, 303);
  const id = added.location!.split('/').at(-1)!;
  const stored = await engram.running.deps.reflections.get(agentId, id);
  assert.ok(stored);
  assert.equal([...stored.tags].sort(), ['added-by-hand', 'infra']);

  await web.get(`${page}/reflections`);
  const again = await web.post(`${page}/reflections`, { content: 'Start Redis with docker compose up cache before npm run build.', kind: 'procedural', topic: 'build' });
  assert.is(again.status, 409);
  assert.match(again.text, 'A stored reflection says the same');

  const view = await web.get(`${page}/reflections/${id}`);
  assert.is(view.status, 200);
  const edited = await web.post(`${page}/reflections/${id}`, { content: 'Start Redis with docker compose up cache before any build.', kind: 'procedural', topic: 'build', tags: 'infra' });
  assert.is(edited.status, 303);
  const after = await engram.running.deps.reflections.get(agentId, id);
  assert.is(after?.content, 'Start Redis with docker compose up cache before any build.');
  assert.ok(after?.tags.includes('edited-by-hand'));
  const index = await engram.running.deps.control.indexes.get(agentId);
  assert.match(index!, 'before any build', 'the root index was rebuilt');
});

test('the connection test takes the base URL as saving the agent does: a pasted /v1 is dropped, a reserved header refused', async ({ web, newAgent, upstream }) => {
  await web.get(newAgent);
  const pasted = await web.post(newAgent, { intent: 'check', name: 'other', base_url: `${upstream.url}/v1/`, api_key: 'sk-x-1234567890', headers: '' });
  assert.match(pasted.text, /answered 200 OK and lists \d+ model/);
  await web.get(newAgent);
  const reserved = await web.post(newAgent, { intent: 'check', name: 'other', base_url: upstream.url, api_key: 'sk-x-1234567890', headers: 'Host: evil.example' });
  assert.match(reserved.text, 'is set by Engram itself');
});

test('search shows what a request saying the same would get injected', async ({ web, page }) => {
  await web.get(`${page}/reflections`);
  await web.post(`${page}/reflections`, { content: 'The staging database password rotates every Monday.', kind: 'factual', topic: 'staging' });
  const related = await web.get(`${page}/reflections?q=${encodeURIComponent('how do I start redis before the build')}`);
  assert.match(related.text, /would get <strong>1<\/strong> reflection injected/);
  const marked = related.text.split('<tr>').filter((row) => row.includes('would be injected'));
  assert.is(marked.length, 1);
  assert.match(marked[0]!, 'docker compose up cache');
  assert.match(
    marked[0]!,
    /<p class="hint verdict taken">relevance \d\.\d\d, at or above this agent&#39;s bar of 0\.20: would be injected, by (meaning|tags|named term &quot;[^&]+&quot;)<\/p>/,
  );
  assert.match(related.text, /reaches this agent&#39;s bar \(min_score\) of 0\.20\./, 'the bar is said once, with what it means');
  // Every result says its relevance against the bar, and why it would or would not be injected; no other number.
  const results = related.text.split('<tr').slice(2);
  assert.ok(results.length >= 1);
  for (const row of results) {
    assert.match(row, /<p class="hint verdict( taken)?">relevance -?\d\.\d\d, (at or above|under) this agent&#39;s bar of 0\.20(: would be injected|: not injected|, but not injected: )/);
    assert.not.match(row, /\(\d\.\d\d\)/, 'no unlabelled score beside the reflection');
  }
  const mixed = await web.get(`${page}/reflections?q=${encodeURIComponent('staging redis')}`);
  const staging = mixed.text.split('<tr').find((row) => row.includes('staging database'));
  assert.ok(staging, 'the keyword search finds it');
  assert.match(staging!, /relevance -?\d\.\d\d, under this agent&#39;s bar of 0\.20: not injected/, 'found by the search, and why injection would leave it out');
  const unrelated = await web.get(`${page}/reflections?q=${encodeURIComponent('write me a poem about autumn leaves')}`);
  assert.match(unrelated.text, /would get <strong>0<\/strong> reflections injected/);
  const factual = await web.get(`${page}/reflections?kind=factual`);
  assert.match(factual.text, 'staging database');
  assert.not.match(factual.text, 'docker compose up cache');
});

test('history: superseded reflections behind a filter, each with what replaced it and when, and a Restore button that makes it current', async ({ web, page, engram, agentId }) => {
  await web.get(`${page}/reflections`);
  const oldId = (await web.post(`${page}/reflections`, { content: 'Deploy to staging with ./ops/ship-legacy.sh.', kind: 'factual', topic: 'deploy' })).location!.split('/').at(-1)!;
  await web.get(`${page}/reflections`);
  const newId = (await web.post(`${page}/reflections`, { content: 'Deploy to staging with ./deploy/run.sh --env staging.', kind: 'factual', topic: 'deploy' })).location!.split('/').at(-1)!;
  // Extraction's mark, as the writer sets it (hand-made ones are never superseded by extraction itself).
  await engram.running.deps.reflections.update(agentId, oldId, { supersededBy: newId, supersededAt: Date.UTC(2026, 1, 3, 4, 5) });

  const current = await web.get(`${page}/reflections`);
  assert.not.match(current.text, 'ship-legacy', 'current reflections only by default');
  const history = await web.get(`${page}/reflections?status=superseded`);
  assert.is(history.status, 200);
  assert.match(history.text, '<option value="superseded" selected>');
  const row = history.text.split('<tr').find((part) => part.includes('ship-legacy'));
  assert.ok(row, history.text);
  // When, in words, with the whole moment on hover.
  const replacedBy = `Replaced by <a href="${page}/reflections/${newId}">${softBreaks('Deploy to staging with ./deploy/run.sh --env staging.')}</a>`;
  assert.match(row, `${replacedBy}, <time datetime="2026-02-03T04:05:00.000Z" title="Tue 3 Feb 2026, 04:05:00 UTC">3 Feb`);
  assert.match(row, `action="${page}/reflections/${oldId}/restore"`);
  assert.not.match(history.text, `href="${page}/reflections/${newId}">${softBreaks('Deploy to staging with ./deploy/run.sh --env staging.')}</a><`, 'the current one is not listed as history');

  const overview = await web.get(page);
  assert.match(overview.text, /reflections\?status=superseded">1 superseded<\/a>/);
  const oldPage = await web.get(`${page}/reflections/${oldId}`);
  assert.match(oldPage.text, `Replaced by <a href="${page}/reflections/${newId}">`);
  const newPage = await web.get(`${page}/reflections/${newId}`);
  assert.match(newPage.text, 'It replaced:');
  // A path gets line-break opportunities after its slashes and dots (`<wbr>`, left out when copied), and none at its hyphens.
  assert.match(
    newPage.text,
    `<a href="${page}/reflections/${oldId}">Deploy to staging with <span class="seg">./</span><wbr><span class="seg">ops/</span><wbr><span class="seg">ship-legacy.</span><wbr><span class="seg">sh.</span></a>`,
  );

  await web.get(`${page}/reflections?status=superseded`);
  const forged = await web.post(`${page}/reflections/${oldId}/restore`, { _csrf: 'forged' });
  assert.is(forged.status, 403, 'CSRF-protected like every form');
  const restored = await web.post(`${page}/reflections/${oldId}/restore`, {});
  assert.equal([restored.status, restored.location], [303, `${page}/reflections/${oldId}?restored=1`]);
  const after = await engram.running.deps.reflections.get(agentId, oldId);
  assert.equal([after?.supersededBy, after?.tags.includes('edited-by-hand')], [undefined, true]);
  assert.match((await web.get(restored.location!)).text, 'Restored: this reflection is current again');
  assert.match((await web.get(`${page}/reflections`)).text, 'ship-legacy');
  assert.not.match((await web.get(`${page}/reflections?status=superseded`)).text, 'ship-legacy');
});

test('a token is shown once when created, then only by its prefix; revoking it locks it out', async ({ web, page, engram }) => {
  await web.get(`${page}/tokens`);
  const created = await web.post(`${page}/tokens`, { name: 'laptop' });
  assert.is(created.status, 201);
  const token = /id="new-token"[^>]*>([^<]+)</.exec(created.text)![1]!;
  const base = `${engram.url}/v0${page}`;
  const models = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
  assert.is(models.status, 200);
  await models.text();
  const listed = await web.get(`${page}/tokens`);
  assert.not.match(listed.text, token);
  assert.match(listed.text, token.slice(0, 10));
  const tokenId = (await engram.running.deps.control.directory.listTokens(page.split('/').at(-1)!)).find((t) => t.name === 'laptop')!.id;
  const revoked = await web.post(`${page}/tokens/${tokenId}/revoke`, {});
  assert.is(revoked.status, 303);
  const refused = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
  assert.is(refused.status, 401);
  await refused.text();
});

test('the activity page lists the queued extraction job of a conversation', async ({ web, page, engram, upstream }) => {
  const [, org, agent] = /\/orgs\/([^/]+)\/agents\/([^/]+)/.exec(page)!;
  const issued = await engram.api('POST', `/v0/orgs/${org}/agents/${agent}/tokens`, { name: 'sdk' });
  upstream.enqueue({ type: 'text', text: 'Noted.' });
  const answered = await fetch(`${engram.url}/v0${page}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${issued.json.token}`, 'content-type': 'application/json', 'x-engram-conversation': 'conv-activity' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'REMEMBER: The API lives in services/api.' }] }),
  });
  await answered.text();
  const activity = await web.get(`${page}/activity`);
  assert.match(activity.text, /Queued \(1\)/);
  // The header's value is shown (and kept) only as its digest.
  assert.match(activity.text, `x:${idDigest('conv-activity')}`);
  assert.not.match(activity.text, 'conv-activity');

  // The agent's tagging job, waiting for its interval, is listed beside it as what it is.
  await publishTaggingJob(
    { bus: engram.running.deps.bus, intervalMs: 600_000, now: Date.now },
    { agentId: agent, orgId: org, protocol: 'chat-completions', model: 'gpt-4o-mini' },
  );
  const both = await web.get(`${page}/activity`);
  assert.match(both.text, /Queued \(2\)/);
  assert.match(both.text, /<td data-label="Conversation">Tagging reflections stored without tags<\/td><td data-label="Turns">-<\/td>/);
  assert.match((await web.get(page)).text, /<strong>2<\/strong> memory jobs queued/);
});

test('the reflection pages show the tags and who wrote them, or that no one has yet', async ({ web, page, engram, agentId }) => {
  await web.get(`${page}/reflections`);
  const byHand = (await web.post(`${page}/reflections`, { content: 'The billing cron runs at 02:00 UTC.', kind: 'factual', topic: 'billing', tags: 'nightly job' })).location!.split('/').at(-1)!;
  await web.get(`${page}/reflections`);
  const untagged = (await web.post(`${page}/reflections`, { content: 'Invoices are rendered by services/pdf-renderer.', kind: 'factual', topic: 'billing' })).location!.split('/').at(-1)!;
  await web.get(`${page}/reflections`);
  const tagged = (await web.post(`${page}/reflections`, { content: 'Refunds go through the payments-api refund endpoint.', kind: 'factual', topic: 'billing' })).location!.split('/').at(-1)!;
  await engram.running.deps.reflections.update(agentId, tagged, { tags: ['added-by-hand', 'money back'], tagsBy: 'tagging' });

  const list = await web.get(`${page}/reflections`);
  const row = (id: string) => list.text.split('<tr>').find((cells) => cells.includes(`/reflections/${id}"`)) ?? '';
  // Engram's marker is a note beside the source, never a tag.
  assert.match(row(byHand), /<td class="tags" data-label="Tags">nightly job <span class="hint">\(by a person\)<\/span>/);
  assert.match(row(untagged), /<td class="tags" data-label="Tags"> <span class="hint">\(not tagged yet\)<\/span>/);
  assert.match(row(tagged), /<td class="tags" data-label="Tags">money back <span class="hint">\(by the tagging job\)<\/span>/);
  for (const id of [byHand, untagged, tagged]) assert.match(row(id), '<span class="hint by-hand">added by hand</span>');

  assert.match((await web.get(`${page}/reflections/${byHand}`)).text, 'Tags written by a person; tags you save here become yours.');
  assert.match((await web.get(`${page}/reflections/${tagged}`)).text, 'Tags written by the tagging job;');
  assert.match((await web.get(`${page}/reflections/${untagged}`)).text, 'Not tagged yet: the tagging job gives it tags in the background');
});

test('reflections show their project and user; the list filters by project; the edit form moves one to another project or everywhere', async ({ web, page, engram, agentId }) => {
  await web.get(`${page}/reflections`);
  const id = (await web.post(`${page}/reflections`, { content: 'Run the test suite with make test-alpha-shop.', kind: 'procedural', topic: 'tests' })).location!.split('/').at(-1)!;
  await engram.running.deps.reflections.update(agentId, id, { scope: 'alpha-shop' });
  const mine = await engram.running.deps.reflections.get(agentId, id);
  await engram.running.deps.reflections.upsert([{ ...mine!, id: `${id}-alice`, content: 'My shipping address is 12 Rose Lane.', user: 'alice', scope: undefined, vector: new Float32Array(256).fill(0.0625) }]);

  const list = await web.get(`${page}/reflections`);
  const row = (text: string, ref: string) => text.split('<tr').find((cells) => cells.includes(`/reflections/${ref}"`)) ?? '';
  assert.match(shownText(row(list.text, id)), 'project alpha-shop');
  assert.match(row(list.text, id), '<span class="value mono" title="alpha-shop">');
  assert.match(shownText(row(list.text, `${id}-alice`)), 'taught by user alice');
  const filtered = await web.get(`${page}/reflections?scope=alpha-shop`);
  assert.match(filtered.text, `/reflections/${id}"`);
  assert.not.match(filtered.text, 'Rose Lane', 'another project’s (or none) is not listed');
  assert.match(filtered.text, 'value="alpha-shop" placeholder="Any project"');

  const form = await web.get(`${page}/reflections/${id}`);
  assert.match(form.text, '<input id="scope" name="scope" type="text" maxlength="200" value="alpha-shop">');
  assert.match(shownText((await web.get(`${page}/reflections/${id}-alice`)).text), 'Taught by user alice');
  const edit = { content: 'Run the test suite with make test-alpha-shop.', kind: 'procedural', topic: 'tests', tags: '' };
  assert.is((await web.post(`${page}/reflections/${id}`, { ...edit, scope: 'beta-crm' })).status, 303);
  assert.is((await engram.running.deps.reflections.get(agentId, id))?.scope, 'beta-crm', 'moved to another project');
  await web.get(`${page}/reflections/${id}`);
  assert.is((await web.post(`${page}/reflections/${id}`, { ...edit, scope: '' })).status, 303);
  assert.is((await engram.running.deps.reflections.get(agentId, id))?.scope, undefined, 'blank: it holds everywhere');
});

test.run();
