import {
  agentPath,
  AGENT_OPTIONS,
  flag,
  fractionOption,
  given,
  integerOption,
  JSON_OPTION,
  listOption,
  requireOption,
  seg,
  stringOption,
  type Command,
  type CommandContext,
  type Io,
  type OptionsConfig,
} from '../command.js';
import { CliError, UsageError } from '../errors.js';
import { readSecret, secretGiven, secretOptions, secretSynopsis } from '../secret-input.js';
import { printJson, printResult, printTable, shortTime } from '../output.js';
import { serverUrlOf, shortBaseUrl } from '../../domain/base-urls.js';
import { addMember, sayAdded } from './members.js';

export interface AgentJson {
  id: string;
  org_id: string;
  name: string;
  type: string;
  upstream: { base_url: string; api_key_set: boolean; headers_set: string[]; responses_state?: string };
  memory: Record<string, unknown>;
  base_url: string;
  mcp_url: string;
  created_at: string;
  token?: string;
}

const SETTINGS_OPTIONS: OptionsConfig = {
  upstream: { type: 'string' },
  ...secretOptions('upstream-key'),
  header: { type: 'string', multiple: true },
  'responses-state': { type: 'string' },
  'no-inject': { type: 'boolean' },
  inject: { type: 'boolean' },
  'no-extract': { type: 'boolean' },
  extract: { type: 'boolean' },
  'top-k': { type: 'string' },
  'token-budget': { type: 'string' },
  'min-score': { type: 'string' },
  'extraction-model': { type: 'string' },
  'daily-token-budget': { type: 'string' },
};

const UPSTREAM_KEY_SYNOPSIS = secretSynopsis('upstream-key', 'KEY');

/** `--header 'Name: value'`, repeatable. */
function headers(context: CommandContext): Record<string, string> | undefined {
  const raw = listOption(context, 'header');
  if (raw.length === 0) return undefined;
  const result: Record<string, string> = {};
  for (const line of raw) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header must look like 'Name: value', got "${line}"`);
    result[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return result;
}

function switchOption(context: CommandContext, name: string): boolean | undefined {
  if (flag(context, name) && flag(context, `no-${name}`)) throw new UsageError(`--${name} and --no-${name} contradict each other`);
  if (flag(context, name)) return true;
  if (flag(context, `no-${name}`)) return false;
  return undefined;
}

/** The `upstream` and `memory` parts of a create or update body, from the flags given. */
async function settingsBody(context: CommandContext): Promise<Record<string, unknown>> {
  const upstream = given({
    base_url: stringOption(context, 'upstream'),
    api_key: await readSecret(context, 'upstream-key'),
    headers: headers(context),
    responses_state: stringOption(context, 'responses-state'),
  });
  const memory = given({
    inject: switchOption(context, 'inject'),
    extract: switchOption(context, 'extract'),
    top_k: integerOption(context, 'top-k'),
    token_budget: integerOption(context, 'token-budget'),
    min_score: fractionOption(context, 'min-score'),
    extraction_model: stringOption(context, 'extraction-model'),
    // `none` lifts the budget; the server checks the number's range.
    daily_token_budget: stringOption(context, 'daily-token-budget') === 'none' ? null : integerOption(context, 'daily-token-budget'),
  });
  const nonEmpty = (part: Record<string, unknown>) => (Object.keys(part).length > 0 ? part : undefined);
  return given({ upstream: nonEmpty(upstream), memory: nonEmpty(memory) });
}

function printAgent(io: Io, agent: AgentJson): void {
  io.out(`Agent "${agent.name}" (id ${agent.id}) in organisation ${agent.org_id}`);
  io.out(`  upstream     ${agent.upstream.base_url}  (key ${agent.upstream.api_key_set ? 'set' : 'not set'}${agent.upstream.headers_set.length ? `, headers: ${agent.upstream.headers_set.join(', ')}` : ''})`);
  if (agent.upstream.responses_state) io.out(`  responses    chains kept by the ${agent.upstream.responses_state}`);
  io.out(`  memory       ${Object.entries(agent.memory).map(([key, value]) => `${key}=${value}`).join(' ')}`);
  io.out(`  base URL     ${agent.base_url}`);
  io.out(`  MCP URL      ${agent.mcp_url}`);
}

interface UpstreamCheck {
  ok: boolean;
  summary: string;
}

/**
 * The server's upstream check (`POST /v0/upstream-check`, the dashboard's "Test
 * connection"), before the org or the agent is created: a failure leaves nothing behind.
 */
async function checkUpstream(context: CommandContext, upstream: unknown): Promise<void> {
  const check = await context.api().post<UpstreamCheck>('/v0/upstream-check', { upstream });
  if (!check.ok) {
    throw new CliError(
      `The upstream check failed: ${check.summary}\n` +
        'No agent was created. Correct --upstream or the key, or add --no-check to create the agent without checking.',
    );
  }
  context.io.err(`Upstream check: ${check.summary}`);
}

/** What a person needs to connect a client, printed once after creation. */
function printConnection(io: Io, agent: AgentJson, orgName: string): void {
  const token = agent.token ?? '<ACCESS_TOKEN>';
  io.out(`Created agent "${agent.name}" in organisation "${orgName}".`);
  io.out('');
  io.out(`  org id      ${agent.org_id}`);
  io.out(`  agent id    ${agent.id}`);
  io.out(`  token       ${token}`);
  io.out('              (shown only now: store it; `engram token create` makes another)');
  io.out('');
  io.out('Connect a client (send the token as `Authorization: Bearer <token>` or `X-Engram-Api-Key`):');
  io.out(`  base URL (serves the token's agent)   ${shortBaseUrl(serverUrlOf(agent.base_url))}`);
  io.out('');
  io.out("  or this agent's own URLs:");
  io.out(`  Anthropic-style (messages) base URL   ${agent.base_url}`);
  io.out(`  OpenAI-style (chat, responses) base   ${agent.base_url}/v1`);
  io.out(`  MCP server (streamable HTTP)          ${agent.mcp_url}`);
  io.out('');
  io.out('For example, Claude Code:');
  io.out(`  export ANTHROPIC_BASE_URL=${agent.base_url}`);
  io.out(`  export ANTHROPIC_AUTH_TOKEN=${token}`);
  io.out(`  claude mcp add --transport http engram ${agent.mcp_url} --header "Authorization: Bearer ${token}"`);
}

export const agentCommands: Command[] = [
  {
    path: ['agent', 'create'],
    synopsis: `--org NAME_OR_ID --name NAME --upstream URL [${UPSTREAM_KEY_SYNOPSIS}] [--header 'K: V']... [--responses-state service|upstream] [--no-inject] [--no-extract] [--top-k N] [--token-budget N] [--min-score S] [--extraction-model M] [--daily-token-budget N|none] [--owner EMAIL] [--no-check] [--json]`,
    summary:
      'Create an agent (and its organisation when none has that name) once its upstream answers (--no-check: without asking); prints its token once. ' +
      '--owner: the person with that email gets the organisation on the dashboard (invited when they have no account yet)',
    remote: true,
    options: { org: { type: 'string' }, name: { type: 'string' }, owner: { type: 'string' }, 'no-check': { type: 'boolean' }, ...SETTINGS_OPTIONS, ...JSON_OPTION },
    async run(context) {
      const orgRef = requireOption(context, 'org');
      const name = requireOption(context, 'name');
      requireOption(context, 'upstream');
      const settings = await settingsBody(context);
      const body = { name, type: 'api_provider', ...settings };
      if (!secretGiven(context, 'upstream-key')) {
        context.io.err('note: no upstream key given (--upstream-key-env VAR and the like); requests go upstream without a provider key (fine for local models).');
      }
      if (!flag(context, 'no-check')) await checkUpstream(context, settings.upstream);
      const api = context.api();
      const org =
        (await api.find<{ id: string; name: string }>(`/v0/orgs/${seg(orgRef)}`)) ??
        (await api.post<{ id: string; name: string }>('/v0/orgs', { name: orgRef }));
      // Before the agent: a mistyped email stops here, with nothing created but the organisation asked for.
      const ownerEmail = stringOption(context, 'owner');
      const owner = ownerEmail === undefined ? undefined : await addMember(context, org.id, ownerEmail);
      const agent = await api.post<AgentJson>(`/v0/orgs/${seg(org.id)}/agents`, body);
      if (flag(context, 'json')) {
        printJson(context.io, {
          org_id: agent.org_id,
          agent_id: agent.id,
          token: agent.token,
          base_url: agent.base_url,
          mcp_url: agent.mcp_url,
          short_base_url: shortBaseUrl(serverUrlOf(agent.base_url)),
          ...(owner ? { owner } : {}),
        });
      } else {
        printConnection(context.io, agent, org.name);
        if (owner) {
          context.io.out('');
          sayAdded(context.io, owner, org.name);
        }
      }
    },
  },
  {
    path: ['agent', 'list'],
    synopsis: '--org NAME_OR_ID [--json]',
    summary: "List an organisation's agents",
    remote: true,
    options: { org: { type: 'string' }, ...JSON_OPTION },
    async run(context) {
      const { data } = await context.api().get<{ data: AgentJson[] }>(`/v0/orgs/${seg(requireOption(context, 'org'))}/agents`);
      printResult(context, data, () => {
        const rows = data.map((agent) => [agent.id, agent.name, agent.upstream.base_url, agent.memory.inject ? 'yes' : 'no', shortTime(agent.created_at)]);
        printTable(context.io, ['ID', 'NAME', 'UPSTREAM', 'INJECT', 'CREATED'], rows, 'No agents in this organisation yet.');
      });
    },
  },
  {
    path: ['agent', 'show'],
    synopsis: '--org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: "Show an agent's settings and URLs",
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const agent = await context.api().get<AgentJson>(agentPath(context));
      printResult(context, agent, () => printAgent(context.io, agent));
    },
  },
  {
    path: ['agent', 'update'],
    synopsis: `--org NAME_OR_ID --agent NAME_OR_ID [--name NAME] [--upstream URL] [${UPSTREAM_KEY_SYNOPSIS}] [--header 'K: V']... [--responses-state service|upstream] [--inject|--no-inject] [--extract|--no-extract] [--top-k N] [--token-budget N] [--min-score S] [--extraction-model M] [--daily-token-budget N|none] [--json]`,
    summary: "Change an agent's name, upstream or memory settings (--header replaces all extra headers)",
    remote: true,
    options: { ...AGENT_OPTIONS, name: { type: 'string' }, ...SETTINGS_OPTIONS },
    async run(context) {
      const body = await settingsBody(context);
      const name = stringOption(context, 'name');
      if (name !== undefined) body.name = name;
      if (Object.keys(body).length === 0) throw new UsageError('Nothing to change: give at least one setting');
      const agent = await context.api().patch<AgentJson>(agentPath(context), body);
      printResult(context, agent, () => printAgent(context.io, agent));
    },
  },
  {
    path: ['agent', 'delete'],
    synopsis: '--org NAME_OR_ID --agent NAME_OR_ID --yes [--json]',
    summary: 'Delete an agent with its tokens and reflections',
    remote: true,
    options: { ...AGENT_OPTIONS, yes: { type: 'boolean' } },
    async run(context) {
      if (!flag(context, 'yes')) throw new UsageError('This deletes the agent with all its reflections; add --yes to confirm');
      const result = await context.api().delete<{ id: string }>(agentPath(context));
      printResult(context, result, () => context.io.out(`Deleted agent ${result.id}.`));
    },
  },
];
