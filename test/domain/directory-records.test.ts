/** Who set an agent's upstream URL: recorded by whoever gives the URL, kept when a patch leaves it. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newAgent, patchAgent, withAgentDefaults } from '../../src/domain/directory-records.js';
import { DEFAULT_MEMORY_SETTINGS, type Agent } from '../../src/domain/types.js';

const base = { orgId: 'org_1', name: 'helper', memory: DEFAULT_MEMORY_SETTINGS };

test("a new URL is its setter's; a patch that leaves the URL keeps who set it", () => {
  const operators = newAgent({ ...base, upstream: { baseUrl: 'https://a.example', headers: {} } }, 1);
  assert.is(operators.upstream.setBy, 'operator', 'the operator by default (admin token: API, CLI)');
  const users = newAgent({ ...base, upstream: { baseUrl: 'https://a.example', headers: {}, setBy: 'user' } }, 1);
  assert.is(users.upstream.setBy, 'user');
  assert.is(patchAgent(users, { upstream: { headers: { 'x-a': '1' } } }, 2).upstream.setBy, 'user', 'headers only: still the user URL');
  assert.is(patchAgent(users, { name: 'renamed' }, 2).upstream.setBy, 'user');
  assert.is(patchAgent(users, { upstream: { baseUrl: 'http://127.0.0.1:11434' } }, 2).upstream.setBy, 'operator', 'the operator re-set it');
  assert.is(patchAgent(operators, { upstream: { baseUrl: 'https://b.example', setBy: 'user' } }, 2).upstream.setBy, 'user');
});

test("an agent stored before the setter was kept reads as the operator's", () => {
  const agent = newAgent({ ...base, upstream: { baseUrl: 'https://a.example', headers: {} } }, 1);
  const { setBy: _dropped, ...upstream } = agent.upstream;
  assert.is(withAgentDefaults({ ...agent, upstream: upstream as Agent['upstream'] }).upstream.setBy, 'operator');
});

test.run();
