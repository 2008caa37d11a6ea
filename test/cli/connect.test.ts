/**
 * `engram connect` as a user runs it, against a real Engram: every client kind's printed
 * configuration parses, and `--write` merges into existing files, backs them up, keeps
 * what is the user's and changes nothing the second time.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../support/cli.js';
import { ADMIN_TOKEN, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { CLIENT_KINDS } from '../../src/clients/index.js';

const KINDS = ['codex', 'claude-code', 'copilot', 'opencode', 'crush', 'editor-plugin', 'editor-extension', 'agents-sdk', 'other'];

const test = suite<{ engram: TestEngram; agent: TestAgent; home: string }>('engram connect');

test.before(async (context) => {
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent('http://127.0.0.1:9', { org: 'acme', name: 'bot' });
});

test.before.each((context) => {
  context.home = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-connect-'));
});

test.after.each(({ home }) => fs.rmSync(home, { recursive: true, force: true }));

test.after(async ({ engram }) => engram.close());

function connect(context: { engram: TestEngram; home: string }, kind: string, ...extra: string[]) {
  return runCli(['connect', kind, '--org', 'acme', '--agent', 'bot', '--url', context.engram.url, '--admin-token', ADMIN_TOKEN, '--home', context.home, ...extra]);
}

function read(home: string, relative: string): string {
  return fs.readFileSync(path.join(home, relative), 'utf8');
}

function backups(file: string): string[] {
  return fs.readdirSync(path.dirname(file)).filter((name) => name.startsWith(`${path.basename(file)}.engram-backup-`));
}

test('every client kind prints a configuration whose files parse, naming the one base URL first', async (context) => {
  const { agent } = context;
  for (const kind of KINDS) {
    const run = await connect(context, kind, '--json');
    assert.is(run.code, 0, `${kind}: ${run.stderr}`);
    const json = JSON.parse(run.stdout);
    assert.is(json.client, kind);
    assert.is(json.agent.short_base_url, `${context.engram.url}/v1`);
    assert.is(json.agent.short_mcp_url, `${context.engram.url}/v0/mcp`);
    assert.is(json.agent.base_url, agent.baseUrl);
    const everything = JSON.stringify(json);
    assert.ok(everything.includes(agent.baseUrl), `${kind} names the agent's base URL`);
    assert.not.ok(everything.includes(agent.token), `${kind} prints no token it was not given`);
    for (const file of json.files) {
      if (file.format === 'toml') parseToml(file.content);
      else if (file.format === 'json') JSON.parse(file.content);
      else if (file.format === 'jsonc') {
        const errors: unknown[] = [];
        parseJsonc(file.content, errors as never);
        assert.equal(errors, [], file.path);
      } else {
        assert.is(file.format, 'bash');
        assert.ok(file.content.startsWith('#!/usr/bin/env bash\n'), file.path);
      }
    }
    assert.is(fs.readdirSync(context.home).length, 0, `${kind}: nothing written without --write`);

    const text = await connect(context, kind);
    assert.is(text.code, 0, text.stderr);
    const lines = text.stdout.split('\n');
    assert.match(lines[1]!, `tool       ${CLIENT_KINDS.find((candidate) => candidate.name === kind)!.title}`, `${kind}: the tool is named`);
    // In the form the tool's own lines name: Anthropic-style clients add /v1 themselves.
    const form = CLIENT_KINDS.find((candidate) => candidate.name === kind)!.baseUrlForm ?? 'openai';
    assert.match(lines[2]!, `base URL   ${context.engram.url}${form === 'openai' ? '/v1' : ''} `, `${kind}: the one base URL is printed first`);
    assert.match(lines[3]!, `MCP URL    ${context.engram.url}/v0/mcp`);
    assert.ok(text.stdout.includes(agent.baseUrl), `${kind}: the agent's own URL is printed too`);
  }
});

test('codex: the printed TOML and hooks are what Codex reads', async (context) => {
  const { agent } = context;
  const json = JSON.parse((await connect(context, 'codex', '--json')).stdout);
  const toml = parseToml(json.files.find((file: any) => file.path.endsWith('config.toml')).content) as any;
  assert.is(toml.model_provider, 'engram');
  assert.equal({ ...toml.model_providers.engram }, { name: 'Engram', base_url: `${context.engram.url}/v1`, env_key: 'ENGRAM_TOKEN', wire_api: 'responses' });
  assert.equal({ ...toml.mcp_servers.engram }, { url: `${context.engram.url}/v0/mcp`, bearer_token_env_var: 'ENGRAM_TOKEN' });
  const hooks = JSON.parse(json.files.find((file: any) => file.path.endsWith('hooks.json')).content);
  const start = hooks.hooks.SessionStart[0].hooks[0];
  assert.is(start.timeout, 30);
  assert.match(start.command, /\.config\/engram\/hooks\/codex-session-start\.sh'$/);
  const script = json.files.find((file: any) => file.path.endsWith('codex-session-start.sh')).content;
  assert.ok(script.includes(`${agent.baseUrl}/copilot/session-start?format=codex`));
  assert.not.ok(script.includes(agent.token), 'no token in the script');
});

test('codex --write merges into config.toml keeping comments and other tables, backs up, is idempotent', async (context) => {
  const { home } = context;
  const config = path.join(home, '.codex', 'config.toml');
  fs.mkdirSync(path.dirname(config), { recursive: true });
  const original = '# my settings\nmodel = "gpt-5" # pinned\nmodel_provider = "openai"\n\n[model_providers.engram]\nname = "old"\nbase_url = "http://old.example/v1"\n\n[profiles.fast]\nmodel = "o4-mini" # keep\n';
  fs.writeFileSync(config, original);
  fs.writeFileSync(path.join(home, '.codex', 'hooks.json'), '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo mine"}]}]}}\n');

  const first = await connect(context, 'codex', '--write');
  assert.is(first.code, 0, first.stderr);
  assert.match(first.stdout, /updated\s+~\/\.codex\/config\.toml/);
  assert.match(first.stdout, /replaced model_provider: "openai" -> "engram"/);
  assert.match(first.stdout, /replaced model_providers\.engram: \{"name":"old"/);
  assert.match(first.stdout, /created\s+~\/\.config\/engram\/hooks\/codex-stop\.sh/);

  const written = read(home, '.codex/config.toml');
  for (const kept of ['# my settings', 'model = "gpt-5" # pinned', '[profiles.fast]', 'model = "o4-mini" # keep']) assert.ok(written.includes(kept), kept);
  const toml = parseToml(written) as any;
  assert.is(toml.model_provider, 'engram');
  assert.is(toml.model_providers.engram.base_url, `${context.engram.url}/v1`);
  assert.is(toml.mcp_servers.engram.url, `${context.engram.url}/v0/mcp`);
  assert.equal(backups(config).length, 1);
  assert.is(fs.readFileSync(path.join(path.dirname(config), backups(config)[0]), 'utf8'), original);

  const hooks = JSON.parse(read(home, '.codex/hooks.json'));
  assert.is(hooks.hooks.Stop.length, 2, "the user's Stop hook stays beside ours");
  assert.is(hooks.hooks.Stop[0].hooks[0].command, 'echo mine');
  assert.is(hooks.hooks.SessionStart.length, 1);
  const script = path.join(home, '.config/engram/hooks/codex-stop.sh');
  assert.is(fs.statSync(script).mode & 0o777, 0o755);

  const second = await connect(context, 'codex', '--write');
  assert.is(second.code, 0, second.stderr);
  assert.is((second.stdout.match(/^\s+unchanged /gm) ?? []).length, 4, second.stdout);
  assert.is(read(home, '.codex/config.toml'), written);
  assert.equal(backups(config).length, 1, 'no second backup');
  assert.is(JSON.parse(read(home, '.codex/hooks.json')).hooks.Stop.length, 2, 'no duplicate hook');
});

test('claude-code --write: hooks in settings.json beside the user\'s, MCP server with ${ENGRAM_TOKEN} in ~/.claude.json', async (context) => {
  const { home } = context;
  fs.mkdirSync(path.join(home, '.claude'));
  fs.writeFileSync(path.join(home, '.claude/settings.json'), JSON.stringify({ model: 'opus', hooks: { SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'echo hi' }] }] } }, null, 2));
  fs.writeFileSync(path.join(home, '.claude.json'), JSON.stringify({ numStartups: 3, mcpServers: { other: { type: 'stdio', command: 'x' } } }));
  const run = await connect(context, 'claude-code', '--write');
  assert.is(run.code, 0, run.stderr);
  assert.ok(run.stdout.includes(`export ANTHROPIC_BASE_URL="${context.engram.url}"`), 'the SDK appends /v1/messages to the server\'s URL');
  assert.ok(run.stdout.includes('export ANTHROPIC_CUSTOM_HEADERS="X-Engram-Api-Key: $ENGRAM_TOKEN"'));

  const settings = JSON.parse(read(home, '.claude/settings.json'));
  assert.is(settings.model, 'opus');
  assert.is(settings.hooks.SessionStart.length, 2);
  assert.equal(settings.hooks.SessionStart[0].hooks[0].command, 'echo hi');
  assert.is(settings.hooks.SessionStart[1].hooks[0].timeout, 30);
  assert.match(settings.hooks.Stop[0].hooks[0].command, /claude-code-stop\.sh'$/);
  const state = JSON.parse(read(home, '.claude.json'));
  assert.is(state.numStartups, 3);
  assert.ok(state.mcpServers.other);
  assert.equal(state.mcpServers.engram, { type: 'http', url: `${context.engram.url}/v0/mcp`, headers: { Authorization: 'Bearer ${ENGRAM_TOKEN}' } });

  const again = await connect(context, 'claude-code', '--write');
  assert.not.match(again.stdout, /^\s+(updated|created) /m);
});

test('an existing engram entry with other values is replaced after a backup, and the change is printed', async (context) => {
  const { home } = context;
  const file = path.join(home, '.copilot/mcp-config.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ mcpServers: { engram: { type: 'http', url: 'http://elsewhere/mcp', headers: { Authorization: 'Bearer egm_old_secret_value' } } } }));
  const run = await connect(context, 'copilot', '--write');
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /replaced mcpServers\.engram: .*http:\/\/elsewhere\/mcp/);
  assert.not.ok(run.stdout.includes('egm_old_secret_value'), 'the replaced secret is not printed whole');
  assert.is(JSON.parse(read(home, '.copilot/mcp-config.json')).mcpServers.engram.url, `${context.engram.url}/v0/mcp`);
  assert.is(backups(file).length, 1);
  const hooks = JSON.parse(read(home, '.copilot/hooks/engram.json'));
  assert.is(hooks.version, 1);
  assert.is(hooks.hooks.sessionStart[0].timeoutSec, 30);
  assert.match(hooks.hooks.agentStop[0].bash, /copilot-stop\.sh'$/);
});

test('opencode --write keeps the comments of opencode.jsonc', async (context) => {
  const { home } = context;
  const file = path.join(home, '.config/opencode/opencode.jsonc');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '{\n  // my theme\n  "theme": "dark",\n}\n');
  const run = await connect(context, 'opencode', '--write', '--model', 'claude-test');
  assert.is(run.code, 0, run.stderr);
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(text.includes('// my theme'));
  const config = parseJsonc(text);
  assert.is(config.theme, 'dark');
  assert.is(config.model, 'engram/claude-test');
  assert.equal(config.provider.engram.options, { baseURL: `${context.engram.url}/v1`, apiKey: '{env:ENGRAM_TOKEN}' });
  assert.is(config.provider.engram.npm, '@ai-sdk/anthropic');
  assert.equal(config.mcp.engram, { type: 'remote', url: `${context.engram.url}/v0/mcp`, headers: { Authorization: 'Bearer {env:ENGRAM_TOKEN}' } });
  assert.not.ok(fs.existsSync(path.join(home, '.config/opencode/opencode.json')));
});

test('crush: an anthropic provider with a 128000 context window and the MCP server', async (context) => {
  const json = JSON.parse((await connect(context, 'crush', '--json')).stdout);
  const config = parseJsonc(json.files[0].content);
  assert.is(config.providers.engram.type, 'anthropic');
  assert.is(config.providers.engram.base_url, context.engram.url);
  assert.is(config.providers.engram.api_key, '$ENGRAM_TOKEN');
  assert.is(config.providers.engram.models[0].context_window, 128000);
  assert.equal(config.mcp.engram, { type: 'http', url: `${context.engram.url}/v0/mcp`, headers: { Authorization: '$(echo Bearer $ENGRAM_TOKEN)' } });
});

test('editor-plugin needs a token to write, and writes its file mode 0600', async (context) => {
  const { home, engram, agent } = context;
  const refused = await connect(context, 'editor-plugin', '--write');
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /set ENGRAM_TOKEN, pass --token-env VAR, --token-file PATH or --token-stdin, or use --new-token/);

  const run = await connect(context, 'editor-plugin', '--write', '--token', agent.token);
  assert.is(run.code, 0, run.stderr);
  const file = path.join(home, '.config/engram/editor-plugin.json');
  assert.is(fs.statSync(file).mode & 0o777, 0o600);
  assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')), { api_url: engram.url, org_id: agent.orgId, agent_id: agent.agentId, token: agent.token });
});

test('--new-token mints a working token named after the client and prints it once', async (context) => {
  const { engram, agent } = context;
  const run = await connect(context, 'editor-extension', '--new-token', '--json');
  assert.is(run.code, 0, run.stderr);
  const json = JSON.parse(run.stdout);
  assert.match(json.token, /^egm_/);
  assert.equal(json.env, { ENGRAM_AGENT_URL: agent.baseUrl, ENGRAM_TOKEN: json.token });
  const index = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/index`, undefined, json.token);
  assert.is(index.status, 200);
  const tokens = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/tokens`);
  assert.ok(tokens.json.data.some((token: any) => token.name === 'connect editor-extension'));
});

test('a file that does not parse stops --write before anything is written', async (context) => {
  const { home } = context;
  fs.mkdirSync(path.join(home, '.claude'));
  fs.writeFileSync(path.join(home, '.claude/settings.json'), '{ "hooks": ');
  const run = await connect(context, 'claude-code', '--write');
  assert.is(run.code, 1);
  assert.match(run.stderr, /settings\.json is not valid JSON/);
  assert.not.ok(fs.existsSync(path.join(home, '.claude.json')));
  assert.not.ok(fs.existsSync(path.join(home, '.config')));
});

test('unknown or missing client kinds are usage errors listing the kinds', async (context) => {
  const run = await connect(context, 'emacs');
  assert.is(run.code, 2);
  assert.match(run.stderr, /Unknown client "emacs"/);
  for (const kind of KINDS) assert.ok(run.stderr.includes(kind), kind);
});

test.run();
